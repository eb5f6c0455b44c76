@testable import SamplerCore
import Testing

/// A sound's loop start (`Sound.loopStart`, SFZ's `loop_start`): a looping voice plays the sound
/// once to its end, then from the loop start on each pass; the same through frames the device
/// skipped, at any rate.
@Suite struct LoopPointTests {
    /// Sample i of the sound is (i + 1) / 1000; 100 frames, the loop from frame 40.
    static func engine() throws -> (Engine, SoundID) {
        let engine = Engine(configuration: .init(maxPlayers: 4))
        let whole = try rampSound(frames: 100)
        return (engine, try engine.register(Sound(slicing: whole, from: 0, count: 100, loopStart: 40)))
    }

    @Test func aLoopingVoicePlaysToTheEndThenFromTheLoopStart() throws {
        let (engine, sound) = try Self.engine()
        engine.send(.start(player: 0, sound: sound, at: 0, loops: -1, pan: PanGains(pan: -1)))
        let out = renderBlocks(engine, periods: 10, blockSize: 32).left
        let expected = (0..<320).map { t -> Float in
            let position = t < 100 ? t : 40 + (t - 100) % 60
            return Float(position + 1) / 1000
        }
        #expect(out == expected)
        // Two passes, then one: the count of loops is kept as before.
        let (once, s) = try Self.engine()
        once.send(.start(player: 0, sound: s, at: 0, loops: 1, pan: PanGains(pan: -1)))
        let twice = renderBlocks(once, periods: 8, blockSize: 32).left
        #expect(Array(twice[..<160]) == Array(expected[..<160]) && twice[160...].allSatisfy { $0 == 0 })
    }

    /// A late `setLoops` or `seek` on a voice of a sound with a loop start: where its pass began
    /// (0, or the loop start) is not known from its position, so a wrap in the late frames cannot
    /// be placed: counted, and the voice plays on (not ended early).
    @Test func aLateSetLoopsOnALoopStartSoundIsCountedNotMisplaced() throws {
        let (engine, sound) = try Self.engine()
        engine.send(.start(player: 0, sound: sound, at: 0, loops: -1, pan: PanGains(pan: -1)))
        _ = renderBlocks(engine, periods: 1, blockSize: 30)
        // Due at 20, arriving at 30: the voice at 30 is in its first pass, far from a wrap.
        engine.send(.setLoops(player: 0, 0, at: 20))
        let out = renderBlocks(engine, periods: 3, blockSize: 30, start: 30).left
        #expect(engine.lateCommandCount == 0 && out[0] == Float(31) / 1000 && out[60] == Float(91) / 1000)
        // A voice looping for ever, at 150 at position 90 of its second pass (it wrapped on
        // frame 100): a setLoops due at 95 (before the wrap) reaches back past the loop start.
        let (looping, s) = try Self.engine()
        looping.send(.start(player: 0, sound: s, at: 0, loops: -1, pan: PanGains(pan: -1)))
        _ = renderBlocks(looping, periods: 5, blockSize: 30)
        // One due at 135 reaches back 15 frames within the pass: placed, not counted.
        looping.send(.setLoops(player: 0, -1, at: 135))
        _ = renderBlocks(looping, periods: 1, blockSize: 30, start: 150)
        #expect(looping.lateCommandCount == 0)
        looping.send(.setLoops(player: 0, 2, at: 95))
        _ = renderBlocks(looping, periods: 1, blockSize: 30, start: 180)
        #expect(looping.lateCommandCount == 1 && looping.voices[0].isActive)
    }

    /// Frames the device skipped (many passes in closed form), at rate 1 and in varispeed (whose
    /// last frame interpolates towards the loop start): the periods after are the same as
    /// rendering through.
    @Test(arguments: [1.0, 1.37, 0.61])
    func skippedFramesLeaveALoopWhereRenderingThemWould(rate: Double) throws {
        func run(skipping: Bool) throws -> [Float] {
            let (engine, sound) = try Self.engine()
            engine.send(.start(player: 0, sound: sound, at: 0, loops: -1, pan: PanGains(pan: -1), rate: rate))
            _ = renderBlocks(engine, periods: 1, blockSize: 64)
            if skipping { return renderBlocks(engine, periods: 4, blockSize: 64, start: 64 * 300).left }
            return Array(renderBlocks(engine, periods: 303, blockSize: 64, start: 64).left[(64 * 299)...])
        }
        let through = try run(skipping: false)
        #expect(try run(skipping: true) == through)
        #expect(through.allSatisfy { $0 >= Float(40) / 1000 - 1e-6 })
    }
}
