@testable import SamplerCore
import Testing

/// A new device clock (a reconnected server, issue 34): nothing made on the old clock plays on
/// the new one, and what is dropped is reported.
@Suite struct NewClockTests {
    @Test func aStartOfTheOldClockIsDroppedAndReported() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(rampSound(frames: 1000))
        _ = renderBlocks(engine, periods: 4, blockSize: 64, start: 1_000_000)
        // Made on the old clock: an hour ahead of the new one's first frames.
        engine.send(.start(player: 0, sound: id, at: 1_000_500, tag: 7))
        engine.beginNewClock()
        engine.send(.start(player: 1, sound: id, at: 100, tag: 8))
        let out = renderBlocks(engine, periods: 4, blockSize: 64, start: 0)
        let reported = events(engine).filter { $0.kind == .staleCommand }
        #expect(reported.map(\.tag) == [7] && reported.first?.value == 1_000_500)
        #expect(engine.staleCommandCount == 1)
        #expect(firstNonZero(out.left) == 100)
    }

    /// A command stamped with an older clock that reaches the render thread after the reset is
    /// dropped, not placed on the new clock's frames.
    @Test func aCommandStampedWithAnOlderClockIsDropped() throws {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let id = try engine.register(rampSound(frames: 1000))
        engine.beginNewClock()
        var stale = Command.start(player: 0, sound: id, at: 10, tag: 3)
        stale.epoch = 0
        let pushed = engine.commands.push(stale)
        #expect(pushed)
        let out = renderBlocks(engine, periods: 2, blockSize: 64)
        #expect(out.left.allSatisfy { $0 == 0 })
        #expect(events(engine).contains { $0.kind == .staleCommand && $0.tag == 3 })
    }

    /// When the queue has no room for the new clock's reset, nothing else is sent before it.
    @Test func theResetGoesFirstWhenTheQueueWasFull() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2, commandCapacity: 4))
        let id = try engine.register(rampSound(frames: 1000))
        while engine.send(.setGain(player: 1, .unity)) {}
        #expect(!engine.beginNewClock())
        #expect(!engine.send(.start(player: 0, sound: id, at: 10)))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 5000)
        #expect(engine.send(.start(player: 0, sound: id, at: 100)))
        let out = renderBlocks(engine, periods: 3, blockSize: 64)
        #expect(firstNonZero(out.left) == 100)
        #expect(engine.staleCommandCount == 0)
    }

    /// What the render thread remembers of the old clock's frames (when voices ended, when a
    /// layer was last triggered) is forgotten: on the new clock a pool takes its first free voice
    /// and on-time triggers are not counted as out of order.
    @Test func aPoolAndItsLayersStartAfreshOnANewClock() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let short = try engine.register(rampSound(frames: 100)), long = try engine.register(rampSound(frames: 50_000))
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, voiceCount: 2, layers: [
            InstrumentLayer(velocities: 1...63, sounds: [short]), InstrumentLayer(velocities: 64...127, sounds: [long]),
        ])])
        // Old clock: voice 0 plays the short sound and ends near 1,000,100; voice 1 the long one.
        engine.send(.trigger(instrument: 0, velocity: 30, at: 1_000_000))
        engine.send(.trigger(instrument: 0, velocity: 100, at: 1_000_050))
        _ = renderBlocks(engine, periods: 8, blockSize: 64, start: 999_936)
        _ = events(engine)
        engine.beginNewClock()
        for (k, f) in [200, 300, 400].enumerated() {
            engine.send(.trigger(instrument: 0, velocity: k == 0 ? 30 : 100, at: Frame(f)))
        }
        _ = renderBlocks(engine, periods: 10, blockSize: 64)
        #expect(engine.lateCommandCount == 0)
        // The first trigger takes voice 0, free on the new clock.
        #expect(events(engine).filter { $0.kind == .started }.map(\.player).first == 0)
    }

    /// Nothing of the old clock's frames judges a command on the new one: a player last
    /// started at 1,000,000 on the old clock takes an on-time command at 500 on the new one, and
    /// a ramp that ended at 1,000,200 does not stop a late pause on the new clock from being
    /// placed exactly.
    @Test func theOldClocksStartsAndRampsDoNotJudgeTheNewClocksCommands() throws {
        func run(oldRamp: Bool) throws -> (counted: Int, position: Frame) {
            let engine = Engine(configuration: .init(maxPlayers: 2))
            let id = try engine.register(rampSound(frames: 100_000))
            engine.send(.start(player: 0, sound: id, at: 1_000_000))
            engine.send(.start(player: 1, sound: id, at: 1_000_000))
            if oldRamp { engine.send(.setGain(player: 0, Gain(linear: 0.5), fadeFrames: 100, at: 1_000_100)) }
            _ = renderBlocks(engine, periods: 8, blockSize: 64, start: 1_000_000)
            engine.beginNewClock()
            engine.send(.start(player: 0, sound: id, at: 100))
            engine.send(.setGain(player: 1, Gain(linear: 0.5), at: 500))  // on time
            _ = renderBlocks(engine, periods: 17, blockSize: 64, start: 0)  // to 1,088
            engine.send(Command(kind: .pause, player: 0, frame: 1000))  // 88 frames late
            _ = renderBlocks(engine, periods: 2, blockSize: 64, start: 1088)
            return (engine.lateCommandCount, engine.position(ofPlayer: 0))
        }
        let plain = try run(oldRamp: false), ramped = try run(oldRamp: true)
        #expect(plain.counted == 0 && ramped.counted == 0)
        // Paused where it was on frame 1,000: 900 frames into its sound.
        #expect(plain.position == 900 && ramped.position == 900)
    }
}
