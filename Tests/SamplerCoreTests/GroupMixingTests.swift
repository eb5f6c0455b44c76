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
            var sources: [Mixing.Source] = []
            for k in 0..<4 {
                let stereo = random.chance(trial % 3 == 0 ? 0 : 50)
                sources.append(Mixing.Source(left: buffers[2 * k] + offset, right: buffers[stereo ? 2 * k + 1 : 2 * k] + offset,
                                                 gainLeft: Float(random.int(0...1000)) / 700,
                                                 gainRight: Float(random.int(0...1000)) / 700))
            }
            let group = trial % 2 == 0 ? 2 : 4
            for s in sources.prefix(group) {
                Mixing.add(left: s.left, right: s.right, into: expectLeft + offset, right: expectRight + offset, count: count,
                           gainLeft: s.gainLeft, gainRight: s.gainRight)
            }
            if group == 2 {
                Mixing.addPair(sources[0], sources[1], into: outLeft + offset, right: outRight + offset, count: count)
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

    /// A voice and its declick tail in one pass (`Mixing.addWithRamped`) against `Mixing.add`
    /// and then `Mixing.addRamped`: random lengths, offsets, ramps and pans, mono and stereo
    /// sources in every combination, to the bit, with the same level after the ramp.
    @Test func aVoiceAndItsTailAddAsOneAfterTheOther() {
        var random = SeededRandom(state: 3838)
        let capacity = 400
        let buffers = (0..<8).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { buffers.forEach { $0.deallocate() } }
        let expectLeft = buffers[4], expectRight = buffers[5], outLeft = buffers[6], outRight = buffers[7]
        var mismatches = 0, levels = 0
        for trial in 0..<600 {
            for b in buffers.prefix(6) {
                for i in 0..<capacity { b[i] = Float(random.int(0...2_000_000)) / 1_000_000 - 1 }
            }
            outLeft.update(from: expectLeft, count: capacity)
            outRight.update(from: expectRight, count: capacity)
            let count = random.int(0...300), offset = random.int(0...40)
            let voiceStereo = random.chance(50), tailStereo = trial % 3 == 0 ? false : random.chance(50)
            let voice = Mixing.Source(left: buffers[0] + offset, right: buffers[voiceStereo ? 1 : 0] + offset,
                                      gainLeft: Float(random.int(0...1000)) / 700, gainRight: Float(random.int(0...1000)) / 700)
            let tailLeft = UnsafePointer(buffers[2] + offset), tailRight = UnsafePointer(buffers[tailStereo ? 3 : 2] + offset)
            let origin = Float(random.int(0...1000)) / 900, step = -Float(random.int(1...1000)) / 300_000
            let first = random.int(0...5000)
            let panLeft = Float(random.int(0...1000)) / 1000, panRight = Float(random.int(0...1000)) / 1000
            Mixing.add(left: voice.left, right: voice.right, into: expectLeft + offset, right: expectRight + offset, count: count,
                       gainLeft: voice.gainLeft, gainRight: voice.gainRight)
            let expectedLevel = Mixing.addRamped(left: tailLeft, right: tailRight, into: expectLeft + offset, right: expectRight + offset,
                                                 count: count, origin: origin, step: step, firstIndex: first,
                                                 panLeft: panLeft, panRight: panRight)
            let level = Mixing.addWithRamped(voice, rampedLeft: tailLeft, right: tailRight, origin: origin, step: step, firstIndex: first,
                                             panLeft: panLeft, panRight: panRight, into: outLeft + offset, right: outRight + offset,
                                             count: count)
            if level.bitPattern != expectedLevel.bitPattern { levels += 1 }
            for i in 0..<capacity where outLeft[i].bitPattern != expectLeft[i].bitPattern || outRight[i].bitPattern != expectRight[i].bitPattern {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
        #expect(levels == 0)
    }

    /// Many players of every kind at once (plain mono and stereo, varispeed, looping, ending
    /// mid-block, routed to a second output, metered, ramped, stopped, started late in the run,
    /// streamed from rings that wrap, run dry and end),
    /// rendered in blocks of random sizes into two outputs: each output equals the sum, in player
    /// order, of what each player renders alone, to the bit.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func theMixIsEachPlayerAloneSummedInPlayerOrder(seed: Int) throws {
        try checkTheMixIsEachPlayerAlone(seed: seed, rampHeavy: false)
    }

    /// As above with most players under long gain ramps and stop fades, and ramped voices mixed
    /// in groups (`Engine.groupsRampedVoices`, on in builds for AVX-512 CPUs).
    @Test(arguments: [7, 8, 9, 10])
    func rampedVoicesInGroupsMixAsEachPlayerAloneSummed(seed: Int) throws {
        try checkTheMixIsEachPlayerAlone(seed: seed, rampHeavy: true)
    }

    private func checkTheMixIsEachPlayerAlone(seed: Int, rampHeavy: Bool) throws {
        var random = SeededRandom(state: UInt64(seed) &* 7_919)
        let players = random.int(5...48)
        // A streamed part plays its samples through a ring of `ring` frames that is topped up
        // after every block (every third block when `lags`: it runs dry and takes the full path),
        // its end marked once all is written.
        struct Part { var channels: [[Float]]; var commands: [Command]; var ring = 0; var lags = false }
        var parts: [Part] = []
        for p in 0..<players {
            let frames = random.chance(20) ? random.int(40...300) : random.int(2000...6000)
            let stereo = random.chance(40)
            let channels = (0..<(stereo ? 2 : 1)).map { _ in (0..<frames).map { _ in Float(random.int(0...2_000_000)) / 1_000_000 - 1 } }
            let id = SoundID(rawValue: 0)  // each engine below registers one sound
            let kind = rampHeavy ? random.pick([1, 2, 3, 3, 3, 3, 3, 5, 5, 9]) : random.int(0...9)
            // Seeds 5 and 6 are nearly all streams (runs of four are grouped), the others a third.
            // A stream plays from its start, once, at rate 1.
            let streamed = random.chance(rampHeavy ? 10 : seed > 4 ? 90 : 35)
            let at = Frame(random.chance(70) ? 0 : random.int(1...3000))
            let gain = Gain(linear: Float(random.int(1...1000)) / 600), pan = PanGains(pan: Float(random.int(-100...100)) / 100)
            var commands = [streamed
                ? Command.start(player: p, sound: id, at: at, gain: gain, pan: pan)
                : Command.start(player: p, sound: id, at: at, from: Frame(random.int(0...(frames - 1))),
                                loops: random.pick([0, 2, -1]), gain: gain, pan: pan, rate: kind == 0 ? 1.5 : 1)]
            switch kind {
            case 1: commands.append(.setOutput(player: p, 1, at: 0))
            case 2: commands.append(.setMetering(player: p, true))
            case 3 where rampHeavy:
                commands.append(.setGain(player: p, Gain(linear: 0.3), fadeFrames: random.int(200...20000), at: Frame(random.int(0...300))))
            case 3: commands.append(.setGain(player: p, Gain(linear: 0.3), fadeFrames: random.int(10...2000), at: Frame(random.int(0...2000))))
            case 4: commands.append(.stop(player: p, at: Frame(random.int(100...4000))))
            case 5 where rampHeavy: commands.append(.stop(player: p, at: Frame(random.int(0...3000)), fadeFrames: random.int(100...4000)))
            default: break
            }
            parts.append(streamed ? Part(channels: channels, commands: commands, ring: random.int(200...2500), lags: random.chance(20))
                                  : Part(channels: channels, commands: commands))
        }
        let blocks = (0..<60).map { _ in random.int(1...200) }

        // Each player's published position and activity, and the active voice count, after the
        // last render.
        var lastStates: (players: [[Int64]], active: Int) = ([], 0)
        func render(_ selected: [Int]) throws -> [[Float]] {
            let engine = Engine(configuration: .init(maxPlayers: players))
            engine.groupsRampedVoices = rampHeavy
            var rings: [(ring: StreamRing, part: Int, written: Int)] = []
            func topUp(_ r: Int) {
                let part = parts[rings[r].part], ring = rings[r].ring
                let n = min(ring.writableFrames, part.channels[0].count - rings[r].written)
                if n > 0 {
                    let from = rings[r].written
                    part.channels[0].withUnsafeBufferPointer { l in
                        part.channels[part.channels.count - 1].withUnsafeBufferPointer { rr in
                            ring.write(left: l.baseAddress! + from, right: part.channels.count == 2 ? rr.baseAddress! + from : nil, count: n)
                        }
                    }
                    rings[r].written += n
                    if rings[r].written == part.channels[0].count { ring.markEnd() }
                }
            }
            for p in selected {
                let id: SoundID
                if parts[p].ring > 0 {
                    let ring = StreamRing(capacity: parts[p].ring, channelCount: parts[p].channels.count, sampleRate: 48000)
                    rings.append((ring, p, 0))
                    topUp(rings.count - 1)
                    id = try engine.register(stream: ring)
                } else {
                    id = try engine.register(Sound(channels: parts[p].channels, sampleRate: 48000))
                }
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
                for (index, n) in blocks.enumerated() {
                    engine.render(frameCount: n, periodStart: frame, outputs: try #require(b.baseAddress), outputCount: 2)
                    for k in 0..<4 { out[k] += UnsafeBufferPointer(start: b[k], count: n) }
                    frame += Frame(n)
                    for r in rings.indices where !parts[rings[r].part].lags || index % 3 == 0 { topUp(r) }
                }
            }
            lastStates = ((0..<players).map { [engine.position(ofPlayer: $0), engine.isActive(player: $0) ? 1 : 0] },
                          engine.activeVoiceCount)
            return out
        }
        let mixed = try render(Array(0..<players))
        let mixedStates = lastStates
        var expected = [[Float]](repeating: [Float](repeating: 0, count: mixed[0].count), count: 4)
        var expectedActive = 0
        for p in 0..<players {
            let alone = try render([p])
            for k in 0..<4 { for i in expected[k].indices { expected[k][i] += alone[k][i] } }
            // What the player published at the end, as when it played alone.
            #expect(mixedStates.players[p] == lastStates.players[p], "player \(p)")
            expectedActive += lastStates.active
        }
        #expect(mixedStates.active == expectedActive)
        for k in 0..<4 {
            let differing = zip(mixed[k], expected[k]).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(differing == 0, "buffer \(k): \(differing) samples differ (\(players) players)")
        }
    }

    /// A player restarted with a declick fade has a tail listed right after its voice, among
    /// plain voices that are grouped: the tail is mixed as a tail (never taken for its voice),
    /// and the groups go on after it. Samples, gains and the fade are exact in binary, so the
    /// mix equals the players rendered alone, summed, whatever the order.
    @Test func aTailAmongGroupedVoicesIsMixedAsATail() throws {
        let frames = 4096
        let samples = (0..<frames).map { Float($0 % 64) / 64 - 0.5 }
        func render(_ players: [Int]) throws -> [Float] {
            let engine = Engine(configuration: .init(maxPlayers: 8))
            let id = try engine.register(Sound(channels: [samples], sampleRate: 48000))
            for p in players {
                engine.send(.start(player: p, sound: id, at: 0, from: Frame(p * 8), pan: PanGains(pan: -1)))
                if p == 1 || p == 4 {
                    engine.send(.start(player: p, sound: id, at: 64, from: 1000, pan: PanGains(pan: -1), declickFrames: 256))
                }
            }
            return renderBlocks(engine, periods: 8, blockSize: 64).left
        }
        let mixed = try render(Array(0..<8))
        var expected = [Float](repeating: 0, count: mixed.count)
        for p in 0..<8 {
            for (i, x) in try render([p]).enumerated() { expected[i] += x }
        }
        #expect(PanGains(pan: -1).monoLeft == 1)
        #expect(mixed == expected)
    }

    /// Two players started on one ring read it one after the other (the second where the first
    /// stopped), as one at a time would: such voices are never mixed together.
    @Test func twoVoicesOnOneRingReadItOneAfterTheOther() throws {
        let engine = Engine()
        let ring = StreamRing(capacity: 1000, channelCount: 1, sampleRate: 48000)
        let values = (0..<1000).map { Float($0 + 1) / 1000 }
        values.withUnsafeBufferPointer { ring.write(left: $0.baseAddress!, right: nil, count: 1000) }
        let id = try engine.register(stream: ring)
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        engine.send(.start(player: 1, sound: id, at: 0, pan: PanGains(pan: -1)))
        let out = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(ring.readIndex == 128)
        let left = PanGains(pan: -1).monoLeft
        #expect(out.left[0] == (0 + values[0] * left) + values[64] * left)
    }

    /// Four streams where two share a ring (the first and third, or the second and fourth): the
    /// quad is refused, and each reads the ring where the one before it in the list stopped.
    @Test(arguments: [[0, 1, 0, 2], [0, 1, 2, 1]])
    func fourStreamsOfWhichTwoShareARingReadItInListOrder(ringOfPlayer: [Int]) throws {
        let engine = Engine()
        let rings = (0..<3).map { _ in StreamRing(capacity: 1000, channelCount: 1, sampleRate: 48000) }
        let values = (0..<3).map { r in (0..<1000).map { Float(r * 1000 + $0 + 1) / 4096 } }
        var ids: [SoundID] = []
        for (r, ring) in rings.enumerated() {
            values[r].withUnsafeBufferPointer { ring.write(left: $0.baseAddress!, right: nil, count: 1000) }
            ids.append(try engine.register(stream: ring))
        }
        let gains: [Float] = [0.5, 0.75, 1.25, 1.5]
        for p in 0..<4 {
            engine.send(.start(player: p, sound: ids[ringOfPlayer[p]], at: 0, gain: Gain(linear: gains[p]), pan: PanGains(pan: -1)))
        }
        let out = renderBlocks(engine, periods: 1, blockSize: 64)
        // Where each player read its ring: a player after another on the same ring, 64 on.
        var read = [Int](repeating: 0, count: 3), at: [Int] = []
        for p in 0..<4 {
            at.append(read[ringOfPlayer[p]])
            read[ringOfPlayer[p]] += 64
        }
        let pan = PanGains(pan: -1).monoLeft
        for t in [0, 17, 63] {
            var sum: Float = 0
            for p in 0..<4 { sum = sum + values[ringOfPlayer[p]][at[p] + t] * (gains[p] * pan) }
            #expect(out.left[t].bitPattern == sum.bitPattern, "frame \(t)")
        }
        for r in 0..<3 { #expect(rings[r].readIndex == Int64(read[r])) }
    }

    /// Nine plain voices, the first stopping in the first period: the other eight are mixed in
    /// quads from the second period on, the list compacted under them; their output, positions
    /// and the active count are those of one voice at a time.
    @Test func quadsAfterAVoiceLeftTheListKeepTheirPlace() throws {
        let engine = Engine(configuration: .init(maxPlayers: 9))
        let values = (0..<9).map { p in (0..<1000).map { Float(p * 1000 + $0 + 1) / 8192 } }
        let gains: [Float] = (0..<9).map { 0.25 + Float($0) / 8 }
        for p in 0..<9 {
            let id = try engine.register(Sound(channels: [values[p]], sampleRate: 48000))
            engine.send(.start(player: p, sound: id, at: 0, gain: Gain(linear: gains[p]), pan: PanGains(pan: -1)))
        }
        engine.send(.stop(player: 0, at: 10))
        let out = renderBlocks(engine, periods: 3, blockSize: 64)
        let pan = PanGains(pan: -1).monoLeft
        for t in [0, 9, 10, 64, 100, 191] {
            var sum: Float = 0
            for p in 0..<9 where p > 0 || t < 10 { sum = sum + values[p][t] * (gains[p] * pan) }
            #expect(out.left[t].bitPattern == sum.bitPattern, "frame \(t)")
        }
        #expect(engine.voiceList.count == 8)
        #expect(engine.activeVoiceCount == 8)
        #expect(!engine.isActive(player: 0))
        for p in 1..<9 {
            #expect(engine.isActive(player: p))
            #expect(engine.position(ofPlayer: p) == 192)
        }
    }

    /// A voice whose samples overflow the output, in each place of a quad of plain voices and of
    /// streams: its share of the period's bound makes the render look at the samples and repair
    /// them (the other three alone would not).
    @Test(arguments: [0, 1, 2, 3])
    func anOverflowingVoiceInAGroupIsRepaired(place: Int) throws {
        for streamed in [false, true] {
            let engine = Engine()
            for p in 0..<4 {
                let samples: [Float] = p == place ? [3e38, 1, 1, 1] : [0.25, 0.5, 0.25, 0.5]
                let full = (0..<64).map { samples[$0 % 4] }
                let id: SoundID
                if streamed {
                    // A frame beyond the block written: the block takes the short path (an end
                    // could still be marked on the write index).
                    let ring = StreamRing(capacity: 256, channelCount: 1, sampleRate: 48000)
                    ring.write(left: full + [0], right: nil, count: 65)
                    id = try engine.register(stream: ring)
                } else {
                    id = try engine.register(Sound(channels: [full + full], sampleRate: 48000))
                }
                engine.send(.start(player: p, sound: id, at: 0, gain: Gain(linear: 2), pan: PanGains(pan: -1)))
            }
            let out = renderBlocks(engine, periods: 1, blockSize: 64)
            let finite = out.left.allSatisfy { $0.isFinite } && out.right.allSatisfy { $0.isFinite }
            #expect(finite, "streamed \(streamed)")
            #expect(engine.nonFiniteOutputCount > 0, "streamed \(streamed)")
        }
    }

    /// Voices steered by controllers glide to each new level over the instrument's
    /// `steerFrames`, ending inside blocks: in groups of four or two (`mixGlidingGroups`), one at
    /// a time (`mixSegmentedVoice`, groups off) and on the general path (every voice metered) the
    /// output is the same to the bit, for mono and stereo sounds, with blocks of any size.
    @Test(arguments: [1, 2, 3])
    func glidingVoicesMixAsTheGeneralPathDoes(seed: Int) throws {
        var random = SeededRandom(state: UInt64(seed) &* 104_729)
        let voices = random.int(5...11)
        let sounds = (0..<voices).map { k in
            (0..<(k % 3 == 0 ? 2 : 1)).map { _ in (0..<6_000).map { _ in Float(random.int(0...2_000_000)) / 1_000_000 - 1 } }
        }
        let blocks = (0..<50).map { _ in random.int(1...200) }
        let changes = (0..<40).map { _ in (frame: Frame(random.int(0...5_000)), number: random.pick([1, 2]), value: UInt8(random.int(0...127))) }
        let glide = random.pick([48, 96, 300])
        func render(grouped: Bool, metered: Bool) throws -> [Float] {
            let engine = Engine(configuration: .init(maxPlayers: voices))
            engine.groupsRampedVoices = grouped
            let ids = try sounds.map { try engine.register(Sound(channels: $0, sampleRate: 48000)) }
            var instrument = InstrumentDefinition(firstPlayer: 0, voiceCount: voices, loops: -1, layers: [InstrumentLayer(sounds: ids)])
            instrument.modulations = [ControllerModulation(controller: 1, target: .amplitude, depth: 1),
                                      ControllerModulation(controller: 2, target: .pan, depth: 1)]
            instrument.steerFrames = glide
            instrument.followsChannelControllers = false
            engine.setInstruments([instrument], controllers: ControllerSetup(defaults: [1: 1, 2: 0.5]))
            if metered { for p in 0..<voices { engine.send(.setMetering(player: p, true)) } }
            for k in 0..<voices { engine.send(.trigger(instrument: 0, velocity: 100, at: Frame(k * 7))) }
            for c in changes {
                engine.send(try #require(Command.channelMessage([0xB0, UInt8(c.number), c.value], at: c.frame)))
            }
            return Self.renderInBlocks(engine, blocks).out
        }
        let grouped = try render(grouped: true, metered: false)
        #expect(grouped.contains { $0 != 0 })
        for (name, other) in [("one at a time", try render(grouped: false, metered: false)), ("general path", try render(grouped: true, metered: true))] {
            let first = zip(grouped, other).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "\(name): differs from sample \(first ?? -1)")
        }
    }

    /// Voices under envelopes (attack, decay, release) and fades, retriggered (their declick
    /// tails) and released at random frames, while a controller moves their level: segments end
    /// inside blocks of any size and the next begins (`mixSegmentedVoice`). The output is the same
    /// to the bit as on the general path (every voice metered), and so are the events.
    @Test(arguments: [4, 5, 6])
    func envelopeSegmentsEndingInABlockMixAsTheGeneralPathDoes(seed: Int) throws {
        var random = SeededRandom(state: UInt64(seed) &* 15_485_863)
        let instruments = random.int(3...6)
        let sounds = (0..<instruments).map { k in
            (0..<(k % 2 == 0 ? 2 : 1)).map { _ in (0..<20_000).map { _ in Float(random.int(0...2_000_000)) / 1_000_000 - 1 } }
        }
        let envelopes = (0..<instruments).map { _ in
            AmplitudeEnvelope(attackFrames: random.int(0...400), holdFrames: random.int(0...100), decayFrames: random.int(0...3_000),
                              sustain: Float(random.int(1...10)) / 10, releaseFrames: random.int(1...4_000))
        }
        let blocks = (0..<60).map { _ in random.int(1...256) }
        var commands: [Command] = []
        for _ in 0..<30 {
            let i = random.int(0...(instruments - 1)), at = Frame(random.int(0...7_000))
            commands.append(random.chance(60) ? .trigger(instrument: i, velocity: random.int(1...127), at: at) : .release(instrument: i, at: at))
        }
        for _ in 0..<20 {
            commands.append(try #require(Command.channelMessage([0xB0, 1, UInt8(random.int(0...127))], at: Frame(random.int(0...7_000)))))
        }
        func render(metered: Bool) throws -> (out: [Float], events: [String]) {
            let engine = Engine(configuration: .init(maxPlayers: 2 * instruments))
            var definitions: [InstrumentDefinition] = []
            for k in 0..<instruments {
                let id = try engine.register(Sound(channels: sounds[k], sampleRate: 48000))
                var d = InstrumentDefinition(firstPlayer: 2 * k, voiceCount: 2, layers: [InstrumentLayer(sounds: [id])], declickFrames: 64,
                                             envelope: envelopes[k])
                d.modulations = [ControllerModulation(controller: 1, target: .amplitude, depth: 1)]
                d.steerFrames = 48
                d.followsChannelControllers = false
                definitions.append(d)
            }
            engine.setInstruments(definitions, controllers: ControllerSetup(defaults: [1: 1]))
            if metered { for p in 0..<(2 * instruments) { engine.send(.setMetering(player: p, true)) } }
            for c in commands { engine.send(c) }
            return Self.renderInBlocks(engine, blocks)
        }
        let short = try render(metered: false), general = try render(metered: true)
        #expect(short.out.contains { $0 != 0 })
        #expect(short.events.contains { $0.hasPrefix("stopped") })
        let first = zip(short.out, general.out).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil, "differs from sample \(first ?? -1)")
        #expect(short.events == general.events)
    }

    /// Varispeed voices (rates from a fiftieth to above 3, mono and stereo, from any offset,
    /// looping or not, sounds shorter and longer than a block, some faded or stopped on the way)
    /// in blocks of any size: on their short path (`mixVarispeedVoice`, a block that does not
    /// reach the sound's end) and on the general path (every voice metered) the output is the
    /// same to the bit, and so are the events (starts, stops and ends).
    @Test(arguments: [11, 12, 13])
    func varispeedVoicesMixAsTheGeneralPathDoes(seed: Int) throws {
        var random = SeededRandom(state: UInt64(seed) &* 2_750_159)
        let players = random.int(4...12)
        let sounds = (0..<players).map { _ in
            let frames = random.chance(25) ? random.int(2...300) : random.int(1_000...9_000)
            return (0..<(random.chance(50) ? 2 : 1)).map { _ in (0..<frames).map { _ in Float(random.int(0...2_000_000)) / 1_000_000 - 1 } }
        }
        let rates = [0.02, 0.5, 0.77, 0.999, 1.001, 1.5, 2, 3.3]
        var commands: [[Command]] = []
        for p in 0..<players {
            let frames = sounds[p][0].count
            commands.append([])
            commands[p].append(.start(player: p, sound: SoundID(rawValue: 0), at: Frame(random.int(0...500)),
                                   from: Frame(random.int(0...(frames - 1))), loops: random.pick([0, 2, -1]),
                                   gain: Gain(linear: Float(random.int(1...1000)) / 600), pan: PanGains(pan: Float(random.int(-100...100)) / 100),
                                   rate: random.pick(rates)))
            if random.chance(30) {
                commands[p].append(.setGain(player: p, Gain(linear: 0.3), fadeFrames: random.int(10...2_000), at: Frame(random.int(0...4_000))))
            }
            if random.chance(20) { commands[p].append(.stop(player: p, at: Frame(random.int(100...6_000)), fadeFrames: random.int(0...500))) }
        }
        let blocks = (0..<60).map { _ in random.int(1...256) }
        func render(metered: Bool, wide: Bool = Engine.cpuHasAVX512) throws -> (out: [Float], events: [String]) {
            let engine = Engine(configuration: .init(maxPlayers: players))
            engine.usesWideVarispeed = wide
            if metered { for p in 0..<players { engine.send(.setMetering(player: p, true)) } }
            for (p, channels) in sounds.enumerated() {
                let id = try engine.register(Sound(channels: channels, sampleRate: 48000))
                for var c in commands[p] {
                    if c.kind == .start { c.sound = id.rawValue }
                    engine.send(c)
                }
            }
            return Self.renderInBlocks(engine, blocks)
        }
        let short = try render(metered: false)
        #expect(short.out.contains { $0 != 0 })
        // Where the CPU has AVX-512, the wide kernel against frame by frame as well.
        var others = [("general path", try render(metered: true))]
        if Engine.cpuHasAVX512 { others.append(("frame by frame", try render(metered: false, wide: false))) }
        for (name, other) in others {
            let first = zip(short.out, other.out).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "\(name): differs from sample \(first ?? -1)")
            #expect(short.events == other.events, "\(name)")
        }
    }

    /// The AVX-512 varispeed kernels (`sampler_varispeed_span_avx512`, and its ramped twin)
    /// against the frame-by-frame loops of `Mixing.addVarispeedSpan` and
    /// `addRampedVarispeedSpan`, to the bit: random sources (each in memory of exactly its
    /// length, so that a read past its end shows under AddressSanitizer), positions, lengths,
    /// gains, ramps and rates from a thousandth to 17 (a window of 32 frames up to 2, gathers
    /// above), mono and stereo.
    @Test(.enabled(if: Engine.cpuHasAVX512, "this CPU has no AVX-512"))
    func theWideVarispeedKernelAddsAsFrameByFrame() {
        var random = SeededRandom(state: 48_611)
        let rates: [Double] = [0.001, 0.02, 0.5, 0.999, 1.0001, 1.5, 1.9999, 2, 2.0001, 3.7, 17.3]
        var differing = 0, cases = 0
        for _ in 0..<3_000 {
            let frames = random.int(2...3_000)
            let stereo = random.chance(50)
            let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            let right = stereo ? UnsafeMutablePointer<Float>.allocate(capacity: frames) : left
            defer {
                left.deallocate()
                if stereo { right.deallocate() }
            }
            for i in 0..<frames {
                left[i] = Float(random.int(0...2_000_000)) / 1_000_000 - 1
                right[i] = stereo ? Float(random.int(0...2_000_000)) / 1_000_000 - 1 : left[i]
            }
            let rate = UInt64(random.pick(rates) * 4_294_967_296)
            let at = UInt64(random.int(0...(frames - 2))) << 32 | UInt64(random.int(0...Int(UInt32.max)))
            // Every frame's next inside the source.
            let most = Int(((UInt64(frames - 1) << 32) - at + rate - 1) / rate)
            guard most > 0 else { continue }
            let count = random.int(1...min(most, 300))
            let gainLeft = Float(random.int(1...1000)) / 600, gainRight = Float(random.int(1...1000)) / 700
            // Half the cases under a gain ramp, its frame index up to 2^31 (not every index a
            // float holds exactly).
            let ramped = random.chance(50)
            let origin = Float(random.int(0...1000)) / 700, step = Float(random.int(-1000...1000)) / 9e6
            let elapsed = random.chance(50) ? random.int(0...5_000) : random.int(0...(1 << 31))
            let start = (0..<(2 * count)).map { _ in Float(random.int(0...2_000_000)) / 1_000_000 - 1 }
            var outputs: [[Float]] = []
            for wide in [false, true] {
                var out = start
                out.withUnsafeMutableBufferPointer { o in
                    let base = o.baseAddress!
                    if ramped {
                        Mixing.addRampedVarispeedSpan(left: left, right: right, at: at, rate: rate, count: count, into: base,
                                                      right: base + count, origin: origin, step: step, elapsed: elapsed,
                                                      panLeft: gainLeft, panRight: gainRight, wide: wide)
                    } else {
                        Mixing.addVarispeedSpan(left: left, right: right, at: at, rate: rate, count: count, into: base, right: base + count,
                                                gainLeft: gainLeft, gainRight: gainRight, wide: wide)
                    }
                }
                outputs.append(out)
            }
            cases += 1
            if zip(outputs[0], outputs[1]).contains(where: { $0.bitPattern != $1.bitPattern }) { differing += 1 }
        }
        #expect(cases > 2_500)
        #expect(differing == 0, "\(differing) of \(cases) cases differ")
    }

    /// `engine` rendered in blocks of the sizes `blocks` (at most 256 frames), each block's left
    /// then right samples, and its voices' started, stopped and finished events.
    static func renderInBlocks(_ engine: Engine, _ blocks: [Int]) -> (out: [Float], events: [String]) {
        var out: [Float] = [], events: [String] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { l.deallocate(); r.deallocate() }
        var frame: Frame = 0
        for n in blocks {
            engine.render(frameCount: n, periodStart: frame, left: l, right: r)
            out += UnsafeBufferPointer(start: l, count: n)
            out += UnsafeBufferPointer(start: r, count: n)
            frame += Frame(n)
            engine.drainEvents { e in
                if e.kind == .started || e.kind == .stopped || e.kind == .finished { events.append("\(e.kind) \(e.player) \(e.frame)") }
            }
        }
        return (out, events)
    }
}
