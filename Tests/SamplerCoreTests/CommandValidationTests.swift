import Testing
@testable import SamplerCore

/// Bad values are refused on the control thread and never reach the render thread; commands
/// touch only what they name.
@Suite struct CommandValidationTests {
    func engineWithSound() throws -> (Engine, SoundID) {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 10_000)], sampleRate: 48000))
        return (engine, id)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, -1, 0, 0.1, 5])
    func aStartWithARateOutOfRangeIsRefused(rate: Double) throws {
        let (engine, id) = try engineWithSound()
        #expect(!engine.send(.start(player: 0, sound: id, at: 0, rate: rate)))
        #expect(engine.refusedCommandCount == 1)
        let out = renderBlocks(engine, periods: 2, blockSize: 64)
        #expect(out.left.allSatisfy { $0 == 0 })
    }

    @Test func nonFiniteGainsAndNegativeFadesAreRefused() throws {
        let (engine, id) = try engineWithSound()
        #expect(engine.send(.start(player: 0, sound: id, at: 0)))
        // `Gain` already keeps its value finite and non-negative; a command built field by field
        // is checked all the same.
        for level: Float in [.nan, .infinity, -1] {
            var c = Command.setGain(player: 0, .unity)
            c.level = level
            #expect(!engine.send(c))
        }
        #expect(!engine.send(.setRate(player: 0, .nan)))
        var fade = Command.stop(player: 0)
        fade.fadeFrames = -5
        #expect(!engine.send(fade))
        #expect(engine.refusedCommandCount == 5)
        let out = renderBlocks(engine, periods: 2, blockSize: 64)
        #expect(out.left.allSatisfy { $0.isFinite && $0 != 0 })
    }

    @Test func aGainChangeDoesNotCancelAStopFade() throws {
        let (engine, id) = try engineWithSound()
        engine.send(.start(player: 0, sound: id, at: 0))
        engine.send(.stop(player: 0, at: 100, fadeFrames: 200))
        engine.send(.setGain(player: 0, .unity, at: 150))
        let out = renderBlocks(engine, periods: 8, blockSize: 64)
        #expect(out.left[299] != 0)
        #expect(out.left[300...].allSatisfy { $0 == 0 })
        #expect(!engine.isActive(player: 0))
    }

    @Test func cancellingAPlayersCommandsKeepsTheTriggersOfTheInstrumentWithTheSameIndex() throws {
        let (engine, id) = try engineWithSound()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 5, layers: [InstrumentLayer(sounds: [id])])])
        engine.send(.trigger(instrument: 0, velocity: 100, at: 100))
        engine.send(.start(player: 0, sound: id, at: 100))
        engine.send(Command.cancelPending(player: 0))
        _ = renderBlocks(engine, periods: 4, blockSize: 64)
        #expect(engine.isActive(player: 5))
        #expect(!engine.isActive(player: 0))
    }
}
