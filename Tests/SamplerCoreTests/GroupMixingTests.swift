import Testing
@testable import SamplerCore

/// Plain voices are mixed two or four at a time (`Mixing.addPair`, `Mixing.addQuad`, issue 38):
/// the output must be, to the bit, what mixing them one at a time in list order gives.
@Suite struct GroupMixingTests {
    /// The group kernels against `Mixing.add` called once per source, in order: random lengths
    /// (with and without a scalar tail), offsets, mono and stereo sources in every combination.
    @Test func groupKernelsAddAsOneSourceAtATime() {
        var random = SeededRandom(state: 38)
        let capacity = 400
        // 8 sources, then the expected and the grouped outputs, left and right.
        let buffers = (0..<12).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { buffers.forEach { $0.deallocate() } }
        let expectLeft = buffers[8], expectRight = buffers[9], outLeft = buffers[10], outRight = buffers[11]
        var mismatches = 0
        for trial in 0..<600 {
            for b in buffers.prefix(10) {
                for i in 0..<capacity { b[i] = Float(random.int(0...2_000_000)) / 1_000_000 - 1 }
            }
            outLeft.update(from: expectLeft, count: capacity)
            outRight.update(from: expectRight, count: capacity)
            let count = random.int(0...300), offset = random.int(0...40)
            // Four sources, each mono (right = left) or stereo, each with its own gains.
            var sources: [Mixing.QuadSource] = []
            for k in 0..<4 {
                let stereo = random.chance(trial % 3 == 0 ? 0 : 50)
                sources.append(Mixing.QuadSource(left: buffers[2 * k] + offset, right: buffers[stereo ? 2 * k + 1 : 2 * k] + offset,
                                                 gainLeft: Float(random.int(0...1000)) / 700,
                                                 gainRight: Float(random.int(0...1000)) / 700))
            }
            let group = trial % 2 == 0 ? 2 : 4
            for s in sources.prefix(group) {
                Mixing.add(left: s.left, right: s.right, into: expectLeft + offset, right: expectRight + offset, count: count,
                           gainLeft: s.gainLeft, gainRight: s.gainRight)
            }
            if group == 2 {
                let a = sources[0], b = sources[1]
                Mixing.addPair(left: a.left, right: a.right, gainLeft: a.gainLeft, gainRight: a.gainRight,
                               left: b.left, right: b.right, gainLeft: b.gainLeft, gainRight: b.gainRight,
                               into: outLeft + offset, right: outRight + offset, count: count)
            } else {
                Mixing.addQuad(sources[0], sources[1], sources[2], sources[3], into: outLeft + offset,
                               right: outRight + offset, count: count)
            }
            for i in 0..<capacity where outLeft[i].bitPattern != expectLeft[i].bitPattern
                || outRight[i].bitPattern != expectRight[i].bitPattern {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    /// Many players of every kind at once (plain mono and stereo, varispeed, looping, ending
    /// mid-block, routed to a second output, metered, ramped, paused, started late in the run),
    /// rendered in blocks of random sizes into two outputs: each output equals the sum, in player
    /// order, of what each player renders alone, to the bit.
    @Test(arguments: [1, 2, 3, 4])
    func theMixIsEachPlayerAloneSummedInPlayerOrder(seed: Int) throws {
        var random = SeededRandom(state: UInt64(seed) &* 7_919)
        let players = random.int(5...48)
        struct Part { var channels: [[Float]]; var commands: [Command] }
        var parts: [Part] = []
        for p in 0..<players {
            let frames = random.chance(20) ? random.int(40...300) : random.int(2000...6000)
            let stereo = random.chance(40)
            let channels = (0..<(stereo ? 2 : 1)).map { _ in (0..<frames).map { _ in Float(random.int(0...2_000_000)) / 1_000_000 - 1 } }
            let id = SoundID(rawValue: 0)  // each engine below registers one sound
            let kind = random.int(0...9)
            var commands = [Command.start(player: p, sound: id, at: Frame(random.chance(70) ? 0 : random.int(1...3000)),
                                          from: Frame(random.int(0...(frames - 1))), loops: random.pick([0, 2, -1]),
                                          gain: Gain(linear: Float(random.int(1...1000)) / 600),
                                          pan: PanGains(pan: Float(random.int(-100...100)) / 100),
                                          rate: kind == 0 ? 1.5 : 1)]
            switch kind {
            case 1: commands.append(.setOutput(player: p, 1, at: 0))
            case 2: commands.append(.setMetering(player: p, true))
            case 3: commands.append(.setGain(player: p, Gain(linear: 0.3), fadeFrames: random.int(10...2000), at: Frame(random.int(0...2000))))
            case 4: commands.append(.stop(player: p, at: Frame(random.int(100...4000))))
            default: break
            }
            parts.append(Part(channels: channels, commands: commands))
        }
        let blocks = (0..<60).map { _ in random.int(1...200) }

        func render(_ selected: [Int]) throws -> [[Float]] {
            let engine = Engine(configuration: .init(maxPlayers: players))
            for p in selected {
                let id = try engine.register(Sound(channels: parts[p].channels, sampleRate: 48000))
                for var c in parts[p].commands {
                    if c.kind == .start { c.sound = id.rawValue }
                    engine.send(c)
                }
            }
            var out = [[Float]](repeating: [], count: 4)
            let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 256) }
            defer { buffers.forEach { $0.deallocate() } }
            var frame: Frame = 0
            try buffers.withUnsafeBufferPointer { b in
                for n in blocks {
                    engine.render(frameCount: n, periodStart: frame, outputs: try #require(b.baseAddress), outputCount: 2)
                    for k in 0..<4 { out[k] += UnsafeBufferPointer(start: b[k], count: n) }
                    frame += Frame(n)
                }
            }
            return out
        }
        let mixed = try render(Array(0..<players))
        var expected = [[Float]](repeating: [Float](repeating: 0, count: mixed[0].count), count: 4)
        for p in 0..<players {
            let alone = try render([p])
            for k in 0..<4 { for i in expected[k].indices { expected[k][i] += alone[k][i] } }
        }
        for k in 0..<4 {
            let differing = zip(mixed[k], expected[k]).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(differing == 0, "buffer \(k): \(differing) samples differ (\(players) players)")
        }
    }
}

