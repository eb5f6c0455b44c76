import Testing
@testable import SamplerCore

/// Outputs beside the main mix (issue 36): instruments and players routed to their own stereo pair.
@Suite struct OutputTests {
    /// Renders `periods` blocks of `blockSize` into `outputs` stereo outputs; [output][channel] samples.
    func renderOutputs(_ engine: Engine, outputs: Int, periods: Int, blockSize: Int, stamps: [Frame]? = nil) -> [[[Float]]] {
        var result = [[[Float]]](repeating: [[], []], count: outputs)
        let buffers = (0..<(2 * outputs)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockSize) }
        defer { buffers.forEach { $0.deallocate() } }
        for period in 0..<periods {
            let start = stamps?[period] ?? Frame(period * blockSize)
            buffers.withUnsafeBufferPointer { engine.render(frameCount: blockSize, periodStart: start, outputs: $0.baseAddress!, outputCount: outputs) }
            for o in 0..<outputs {
                for c in 0..<2 { result[o][c] += UnsafeBufferPointer(start: buffers[2 * o + c], count: blockSize) }
            }
        }
        return result
    }

    func engine(routes: [Int]) throws -> Engine {
        let engine = Engine(configuration: .init(maxPlayers: 8))
        let ramp = try engine.register(Sound(channels: [(0..<3000).map { Float($0) / 3000 }], sampleRate: 48_000))
        let tone = try engine.register(Sound(channels: [(0..<3000).map { Float(($0 % 50) - 25) / 25 }, [Float](repeating: 0.25, count: 3000)],
                                             sampleRate: 48_000))
        engine.setInstruments(routes.enumerated().map { i, output in
            InstrumentDefinition(firstPlayer: 2 * i, voiceCount: 2, pan: i == 0 ? -0.5 : 0.3, layers: [InstrumentLayer(sounds: [i % 2 == 0 ? ramp : tone])],
                                 midiNotes: [36 + i], envelope: i == 2 ? AmplitudeEnvelope(attackFrames: 100, releaseFrames: 500) : nil,
                                 output: output)
        })
        for (i, frame) in [(0, 10), (1, 700), (2, 1_000), (0, 1_900), (1, 2_100)] {
            engine.send(.trigger(instrument: i, velocity: 100, at: Frame(frame)))
        }
        engine.send(.release(instrument: 2, at: 2_500))
        return engine
    }

    @Test func eachOutputHasItsInstrumentsAndTheirSumIsTheWholeMix() throws {
        let whole = renderBlocks(try engine(routes: [0, 0, 0]), periods: 40, blockSize: 128)
        let split = renderOutputs(try engine(routes: [1, 0, 2]), outputs: 3, periods: 40, blockSize: 128)
        let alone0 = renderOutputs(try engine(routes: [0, 3, 3]), outputs: 4, periods: 40, blockSize: 128)
        // Output 1 has instrument 0 alone, exactly as the main mix has it when it sounds alone.
        #expect(split[1][0] == alone0[0][0] && split[1][1] == alone0[0][1])
        #expect(split[1][0].contains { $0 != 0 } && split[2][0].contains { $0 != 0 } && split[0][1].contains { $0 != 0 })
        // The outputs sum to the whole mix (to float rounding of the order of the additions).
        for c in 0..<2 {
            for t in 0..<whole.left.count {
                let sum = split[0][c][t] + split[1][c][t] + split[2][c][t]
                let w = c == 0 ? whole.left[t] : whole.right[t]
                #expect(abs(sum - w) <= 1e-6, "channel \(c) frame \(t)")
                if abs(sum - w) > 1e-6 { return }
            }
        }
    }

    @Test func anOutputTheRenderDoesNotHaveIsMixedIntoTheMainMix() throws {
        let whole = renderBlocks(try engine(routes: [0, 0, 0]), periods: 30, blockSize: 100)
        let main = renderBlocks(try engine(routes: [5, 9, 63]), periods: 30, blockSize: 100)
        #expect(main.left == whole.left && main.right == whole.right)
    }

    @Test func outputsKeepTheDeviceTimelineThroughALostStretch() throws {
        // The same program rendered with periods 8 … 11 lost: every output equals the
        // uninterrupted render outside the gap, and is silent in it.
        let reference = renderOutputs(try engine(routes: [1, 0, 2]), outputs: 3, periods: 40, blockSize: 128)
        let stamps = (0..<36).map { Frame(($0 < 8 ? $0 : $0 + 4) * 128) }
        let lossy = renderOutputs(try engine(routes: [1, 0, 2]), outputs: 3, periods: 36, blockSize: 128, stamps: stamps)
        for o in 0..<3 {
            for c in 0..<2 {
                #expect(Array(lossy[o][c][0..<1024]) == Array(reference[o][c][0..<1024]))
                #expect(Array(lossy[o][c][1024...]) == Array(reference[o][c][1536...]))
            }
        }
    }

    @Test func aPlayerMovesToAnotherOutputOnItsFrameAndItsDeclickTailStaysBehind() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 10_000)], sampleRate: 48_000))
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        engine.send(.setOutput(player: 0, 1, at: 300))
        // A restart on output 1 (its old sound's declick tail is there), then back to the main mix.
        engine.send(.start(player: 0, sound: id, at: 600, pan: PanGains(pan: -1), declickFrames: 100))
        engine.send(.setOutput(player: 0, 0, at: 600))
        let out = renderOutputs(engine, outputs: 2, periods: 1, blockSize: 1000)
        let main = out[0][0], aux = out[1][0]
        #expect(main[299] > 0 && main[300] == 0 && aux[300] > 0 && aux[599] > 0)
        // At 600 the new start plays on the main mix; the old sound's declick fades on output 1.
        #expect(main[600] > 0 && aux[600] > 0 && aux[650] > 0 && aux[700] == 0)
        #expect(!Command.setOutput(player: 0, 64).isValid && !Command.setOutput(player: 0, -1).isValid)
    }

    @Test func aRoutingSurvivesCancelsAndNewClocksAndALateOneIsCounted() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 100_000)], sampleRate: 48_000))
        // Routed, then the player's pending commands cancelled before the routing's frame: the
        // routing stays (it is the player's, not one sound's).
        engine.send(.setOutput(player: 0, 1, at: 100))
        engine.send(Command.cancelPending(player: 0))
        engine.send(.start(player: 0, sound: id, at: 200, pan: PanGains(pan: -1)))
        var out = renderOutputs(engine, outputs: 2, periods: 1, blockSize: 1000)
        #expect(out[0][0].allSatisfy { $0 == 0 } && out[1][0][200] > 0)
        // A new clock drops what was scheduled, but applies a routing rather than lose it.
        engine.send(.setOutput(player: 0, 0, at: 5_000))
        engine.beginNewClock()
        engine.send(.start(player: 0, sound: id, at: Command.immediately, pan: PanGains(pan: -1)))
        out = renderOutputs(engine, outputs: 2, periods: 1, blockSize: 1000)
        #expect(out[0][0][10] > 0 && out[1][0].allSatisfy { $0 == 0 })
        // Late on a sounding voice: its frames since were on the old output. Counted.
        let late = engine.lateCommandCount
        engine.send(.setOutput(player: 0, 1, at: 500))
        _ = renderOutputs(engine, outputs: 2, periods: 1, blockSize: 1000, stamps: [1000])
        #expect(engine.lateCommandCount == late + 1)
    }

    @Test func buffersBeyondTheEnginesOutputsAreWrittenAsSilence() throws {
        let engine = try engine(routes: [1, 0, 2])
        let count = Engine.maxOutputCount + 2
        let buffers = (0..<(2 * count)).map { _ -> UnsafeMutablePointer<Float> in
            let b = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            b.initialize(repeating: .nan, count: 64)
            return b
        }
        defer { buffers.forEach { $0.deallocate() } }
        buffers.withUnsafeBufferPointer { engine.render(frameCount: 64, periodStart: 0, outputs: $0.baseAddress!, outputCount: count) }
        #expect(buffers.allSatisfy { b in (0..<64).allSatisfy { b[$0].isFinite } })
    }
}
