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

    /// A short-path block keeps what it learnt of the ring (`Voice.streamLimit`) for the blocks
    /// after it. An end the writer marks later, on the write index it had then (or the end of
    /// a timeline), still ends the stream on its frame, in the period that reaches it: the
    /// period ending on that frame reports it, as the full path does.
    @Test(arguments: [false, true])
    func anEndMarkedAfterABlockStillEndsTheStreamInThePeriodThatReachesIt(timeline: Bool) throws {
        let engine = Engine()
        let ring = StreamRing(capacity: 1000, channelCount: 1, sampleRate: 48000)
        if timeline { ring.setTimeline(sourceFrames: 128, sourceStart: 0, ratio: 1, passes: 1) }
        write(ring, [Float](repeating: 0.5, count: 128))
        let id = try engine.register(stream: ring)
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        let first = renderBlocks(engine, periods: 1, blockSize: 64).left
        #expect(first.allSatisfy { $0 == 0.5 })
        #expect(events(engine).map { "\($0.kind)@\($0.frame)" } == ["started@0"])
        if !timeline { ring.markEnd() }
        let second = renderBlocks(engine, periods: 1, blockSize: 64, start: 64).left
        #expect(second.allSatisfy { $0 == 0.5 })
        #expect(events(engine).map { "\($0.kind)@\($0.frame)" } == ["finished@128"])
        #expect(ring.underrunFrameCount == 0)
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
    /// A streamed voice without a ramp or meters takes a short path when its block holds no
    /// wrap, no end and no missing frame (`mixPlainStream`). Played beside the same stream with
    /// meters on (which always takes the full path), it gives the same samples, events and read
    /// index, block for block: timelines at rate ratio 1 and not, started mid-file, with a few
    /// passes or forever, blocks of random sizes (some longer than the ring), rings wrapping, a
    /// writer that falls behind, loop counts changed while playing, lost stretches.
    @Test func theShortPathOfAStreamPlaysAsTheFullOne() throws {
        var seed: UInt64 = 0x5EED
        func random(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        let cases: [(frames: Int64, start: Int64, ratio: Double, passes: Int64?)] = [
            (300, 0, 1, nil), (300, 123, 1, 3), (257, 200, 48000.0 / 44100, 4), (1000, 999, 0.5, nil), (64, 0, 1, 2), (0, 0, 1, nil),
        ]
        for c in cases {
            let engine = Engine()
            var rings: [StreamRing] = []
            for p in 0..<2 {
                let ring = StreamRing(capacity: 500, channelCount: 2, sampleRate: 48000)
                if c.frames > 0 { ring.setTimeline(sourceFrames: c.frames, sourceStart: c.start, ratio: c.ratio, passes: c.passes) }
                let id = try engine.register(stream: ring)
                engine.send(.start(player: p, sound: id, at: 7, gain: Gain(linear: 0.75), pan: PanGains(pan: p == 0 ? -1 : 1)))
                rings.append(ring)
            }
            engine.send(.setMetering(player: 1, true))
            var written: Int64 = 0, frame: Frame = 0
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 700), r = UnsafeMutablePointer<Float>.allocate(capacity: 700)
            defer { l.deallocate(); r.deallocate() }
            var events: [Event] = []
            for block in 0..<400 {
                // The writer: usually keeps the rings full, sometimes falls behind; without a
                // timeline it marks a wrap and, late on, the end.
                if random(5) != 0 {
                    // After a lost stretch the reader is ahead: the writer skips what it passed.
                    written += rings.map { $0.skipToRead() }.max() ?? 0
                    let room = rings[0].writableFrames
                    let data = (0..<room).map { Float((Int(written) + $0) % 211) / 211 - 0.5 }
                    for ring in rings { ring.write(left: data, right: data.map { -$0 }, count: room) }
                    written += Int64(room)
                    if c.frames == 0, block % 50 == 10 { for ring in rings { ring.markWrap() } }
                    if c.frames == 0, block == 350 { for ring in rings { ring.markEnd() } }
                }
                // A loop count changed while playing, now and then to fewer passes than
                // played (the ring keeps at least the pass under way).
                if c.frames > 0, random(40) == 0 {
                    let passes: Int64? = random(3) == 0 ? nil : Int64(random(6))
                    for ring in rings { ring.setTimelinePasses(passes) }
                }
                // Blocks up to longer than the ring (which the short path must refuse).
                let n = 1 + random(random(10) == 0 ? 700 : 300)
                // Now and then a lost stretch, caught up in closed form (the full path).
                if random(20) == 0 { frame += Frame(1 + random(3000)) }
                engine.render(frameCount: n, periodStart: frame, left: l, right: r)
                frame += Frame(n)
                // Player 0 is on the left only, player 1 on the right only, the one negated.
                for k in 0..<n { #expect(l[k] == -r[k], "case \(c), block \(block), frame \(k)") }
                #expect(rings[0].readIndex == rings[1].readIndex)
                engine.drainEvents { events.append($0) }
            }
            let zero = events.filter { $0.player == 0 }.map { "\($0.kind)@\($0.frame) \($0.value)" }
            let one = events.filter { $0.player == 1 }.map { "\($0.kind)@\($0.frame) \($0.value)" }
            #expect(zero == one, "case \(c)")
            #expect(zero.contains { $0.hasPrefix("looped") || $0.hasPrefix("finished") }, "case \(c): \(zero)")
        }
    }
}
