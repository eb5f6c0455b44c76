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
