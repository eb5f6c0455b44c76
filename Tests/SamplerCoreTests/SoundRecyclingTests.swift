import Testing
@testable import SamplerCore

/// A slot's sound may be freed once unregistered; nothing on the render thread reads it after.
@Suite struct SoundRecyclingTests {
    @Test func anInactiveVoiceTouchedByACommandNeverReadsItsFreedSound() throws {
        let engine = Engine()
        var id: SoundID?
        do {
            let sound = try Sound(channels: [[Float](repeating: 0.5, count: 100_000)], sampleRate: 48000)
            id = try engine.register(sound)
        }
        engine.send(.start(player: 0, sound: id!, at: 0))
        engine.send(.stop(player: 0, at: 100))
        _ = renderBlocks(engine, periods: 2, blockSize: 64)
        engine.unregister(id!)
        _ = renderBlocks(engine, periods: 3, blockSize: 64, start: 128)
        // The slot is reused (its old sound released: under ASan a read of it is reported).
        let other = try engine.register(Sound(channels: [[0.25]], sampleRate: 48000))
        #expect(other == id)
        engine.send(.setPan(player: 0, 0.5))
        engine.send(.setPan(player: 1, 0.5))
        engine.send(.setGain(player: 2, .unity))
        let out = renderBlocks(engine, periods: 2, blockSize: 64, start: 320)
        #expect(out.left.allSatisfy { $0 == 0 })
    }

    /// Frames and positions the render thread could overflow on are refused where they are sent
    /// (issue 34: a late seek to Frame.max, a start at Frame.min + 1 trapped in JACK's thread).
    @Test func framesAndPositionsBeyondTheLimitAreRefused() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 10_000)], sampleRate: 48000))
        #expect(!engine.send(.start(player: 0, sound: id, at: .min + 1)))
        #expect(!engine.send(.start(player: 0, sound: id, at: .max)))
        #expect(!engine.send(.start(player: 0, sound: id, at: 0, from: .max)))
        #expect(!engine.send(.seek(player: 0, to: .max)))
        #expect(!engine.send(.seek(player: 0, to: 0, at: Command.frameLimit + 1)))
        #expect(engine.refusedCommandCount == 5)
        // The sentinels stay valid: `immediately`, and a cancel of every pending frame.
        #expect(engine.send(.start(player: 0, sound: id, at: Command.immediately)))
        #expect(engine.send(.cancelPending(player: 0)))
        #expect(engine.send(.seek(player: 0, to: 100, at: Command.frameLimit)))
        let out = renderBlocks(engine, periods: 4, blockSize: 64)
        #expect(out.left.allSatisfy { $0.isFinite })
    }
}
