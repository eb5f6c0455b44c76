import Testing
@testable import SamplerCore

@Suite struct StreamRingTests {
    func write(_ ring: StreamRing, _ values: [Float]) {
        values.withUnsafeBufferPointer { ring.write(left: $0.baseAddress!, right: nil, count: values.count) }
    }

    @Test func aStreamPlaysWhatWasWrittenFromItsExactStartFrame() throws {
        let engine = Engine()
        let ring = StreamRing(capacity: 100, channelCount: 1, sampleRate: 48000)
        write(ring, (0..<100).map { Float($0 + 1) / 1000 })
        let id = try engine.register(stream: ring)
        engine.send(.start(player: 0, sound: id, at: 37, pan: PanGains(pan: -1)))
        var out: [Float] = []
        // The "disk thread" tops the ring up between periods, as a real one would.
        var next = 101
        for period in 0..<4 {
            out += renderBlocks(engine, periods: 1, blockSize: 64, start: Frame(period * 64)).left
            let room = ring.writableFrames
            write(ring, (next..<(next + room)).map { Float($0) / 1000 })
            next += room
        }
        #expect(firstNonZero(out) == 37)
        #expect(Array(out[37..<256]) == (1...219).map { Float($0) / 1000 })
        #expect(ring.underrunFrameCount == 0)
    }

    @Test func missingDataPlaysSilenceIsCountedAndTimeMovesOn() throws {
        let engine = Engine()
        let ring = StreamRing(capacity: 1000, channelCount: 1, sampleRate: 48000)
        write(ring, [Float](repeating: 0.5, count: 50))
        let id = try engine.register(stream: ring)
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        let out = renderBlocks(engine, periods: 2, blockSize: 64).left
        #expect(out[49] == 0.5 && out[50] == 0)
        #expect(ring.underrunFrameCount == 78)
        // The writer skips what the reader already passed, then playback is in time again.
        #expect(ring.skipToRead() == 78)
        write(ring, [Float](repeating: 0.25, count: 64))
        let after = renderBlocks(engine, periods: 1, blockSize: 64, start: 128).left
        #expect(after.allSatisfy { $0 == 0.25 })
    }

    @Test func endAndWrapAreReportedOnTheirFrames() throws {
        let engine = Engine()
        let ring = StreamRing(capacity: 1000, channelCount: 2, sampleRate: 48000)
        write(ring, [Float](repeating: 0.1, count: 30))
        ring.markWrap()
        write(ring, [Float](repeating: 0.2, count: 30))
        ring.markEnd()
        let id = try engine.register(stream: ring)
        engine.send(.start(player: 0, sound: id, at: 10))
        let out = renderBlocks(engine, periods: 2, blockSize: 64).left
        #expect(out[69] == 0.2 && out[70] == 0)
        let kinds = events(engine).map { "\($0.kind)@\($0.frame)" }
        #expect(kinds == ["started@10", "looped@40", "finished@70"])
    }

    @Test func twoStreamsStartedTogetherStayAligned() throws {
        let engine = Engine()
        let a = StreamRing(capacity: 4096, channelCount: 1, sampleRate: 48000)
        let b = StreamRing(capacity: 4096, channelCount: 1, sampleRate: 48000)
        let data = (0..<4096).map { Float($0 % 97) / 100 }
        write(a, data); write(b, data.map { -$0 })
        let ia = try engine.register(stream: a), ib = try engine.register(stream: b)
        engine.send(.start(player: 0, sound: ia, at: 100))
        engine.send(.start(player: 1, sound: ib, at: 100))
        let out = renderBlocks(engine, periods: 40, blockSize: 100).left
        #expect(out.allSatisfy { abs($0) < 1e-6 })  // they cancel exactly: sample-aligned
        #expect(a.readIndex == b.readIndex)
    }
}
