import Testing
@testable import SamplerCore

/// A lost stretch is caught up in closed form (issue 38): after it, every voice is where rendering
/// the stretch would have left it, to the bit, and the output that follows is the same.
@Suite struct CatchUpTests {
    static let sampleRate = 48_000
    /// Ten seconds lost (470 periods of 1,024 frames), from frame `lostFrom`.
    static let lostFrom: Frame = 4_096
    static let lostFrames: Frame = 481_280

    /// Voices of every kind, with commands due inside the lost stretch.
    static func program(_ engine: Engine) throws {
        func sound(_ frames: Int, stereo: Bool = false, seed: Int) throws -> SoundID {
            let a = (0..<frames).map { Float((($0 + seed) * 7919) % 1000) / 1000 - 0.5 }
            let b = (0..<frames).map { Float((($0 + seed) * 104_729) % 997) / 997 - 0.5 }
            return try engine.register(Sound(channels: stereo ? [a, b] : [a], sampleRate: 48000))
        }
        let a = try sound(2_999, seed: 1)
        let b = try sound(257, stereo: true, seed: 2)
        let c = try sound(48_000, seed: 3)
        let tiny = try sound(2, seed: 4)
        let hit = try sound(9_000, seed: 5)
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 20, voiceCount: 2, loops: -1, layers: [InstrumentLayer(sounds: [c])],
                                 envelope: AmplitudeEnvelope(attackFrames: 3_000, holdFrames: 1_000, decayFrames: 40_000,
                                                             sustain: 0.3, releaseFrames: 30_000)),
            InstrumentDefinition(firstPlayer: 22, voiceCount: 1, chokeGroup: 1, layers: [InstrumentLayer(sounds: [hit])]),
            InstrumentDefinition(firstPlayer: 23, voiceCount: 1, chokeGroup: 1, layers: [InstrumentLayer(sounds: [a])],
                                 chokeFadeFrames: 5_000),
        ])
        engine.send(.start(player: 0, sound: a, at: 100, loops: -1, pan: PanGains(pan: 0.2)))
        engine.send(.start(player: 1, sound: b, at: 333, loops: 400))
        engine.send(.start(player: 2, sound: c, at: 1_000, loops: -1, rate: 0.77))
        engine.send(.start(player: 3, sound: b, at: 50, loops: 1_000, rate: 1.5))
        engine.send(.start(player: 4, sound: a, at: 0, loops: 3))
        engine.send(.start(player: 5, sound: c, at: 10, loops: -1, rate: 1.37))
        engine.send(.setGain(player: 5, Gain(linear: 0.1), fadeFrames: 300_000, at: 10_000))
        engine.send(.start(player: 6, sound: a, at: 20, loops: -1))
        engine.send(.stop(player: 6, at: 200_000, fadeFrames: 7_777))
        engine.send(.start(player: 7, sound: c, at: 30, loops: -1))
        engine.send(.start(player: 7, sound: a, at: 250_001, loops: 50, declickFrames: 64))
        engine.send(.start(player: 8, sound: c, at: 40, loops: -1, rate: 2.5))
        engine.send(.seek(player: 8, to: 1_234, at: 300_000))
        engine.send(.setRate(player: 2, 1.25, at: 123_457))
        engine.send(.start(player: 9, sound: tiny, at: 60, loops: -1, rate: 3))
        engine.send(.start(player: 10, sound: a, at: 70, loops: -1))
        engine.send(.setMetering(player: 10, true))
        engine.send(.start(player: 11, sound: c, at: 5_000, loops: -1, rate: 0.5))
        engine.send(.setGain(player: 11, Gain(linear: 0.5), fadeFrames: 100_000, at: 3_000))
        // Hundreds of wraps under a gain ramp, and under a stop fade at varispeed (skipped in
        // whole passes up to the ramp's last frame).
        engine.send(.start(player: 12, sound: b, at: 200, loops: -1))
        engine.send(.setGain(player: 12, Gain(linear: 0.2), fadeFrames: 400_000, at: 3_000))
        engine.send(.start(player: 13, sound: a, at: 300, loops: 100_000, rate: 1.5))
        engine.send(.stop(player: 13, at: 14_000, fadeFrames: 300_001))
        engine.send(.trigger(instrument: 0, velocity: 100, at: 500))
        engine.send(.trigger(instrument: 0, velocity: 90, at: 150_000))
        engine.send(.release(instrument: 0, at: 400_000))
        engine.send(.trigger(instrument: 1, velocity: 120, at: 1_000))
        engine.send(.trigger(instrument: 2, velocity: 120, at: 2_000))
        engine.send(.trigger(instrument: 1, velocity: 120, at: 350_000))
        for k in 0..<30 {
            engine.send(.trigger(instrument: 1 + k % 2, velocity: 30 + k * 3, at: 60_000 + Frame(k) * 13_001))
        }
    }

    /// Renders periods as `renderBlocks` does, draining the events after each.
    static func render(_ engine: Engine, periods: Int, blockSize: Int, start: Frame = 0, events: inout [Event])
        -> (left: [Float], right: [Float]) {
        var left: [Float] = [], right: [Float] = []
        for k in 0..<periods {
            let one = renderBlocks(engine, periods: 1, blockSize: blockSize, start: start + Frame(k * blockSize))
            left += one.left
            right += one.right
            engine.drainEvents { events.append($0) }
        }
        return (left, right)
    }

    /// What a voice's record says about where it is (everything but its meters).
    static func state(_ v: Voice) -> String {
        "active \(v.isActive) paused \(v.isPaused) position \(v.position) phase \(v.phase) rate \(v.rate) "
            + "loops \(v.loopsRemaining) level \(v.level.bitPattern) ramp \(v.rampFramesLeft)/\(v.rampElapsed) "
            + "target \(v.levelTarget.bitPattern) env \(v.envStage) \(v.envValue.bitPattern) ended \(v.endedAt)"
    }

    @Test func aTenSecondLostStretchLeavesEveryVoiceWhereRenderingItWould() throws {
        let block = 1_024
        let after = 8 * block
        let end = Self.lostFrom + Self.lostFrames + Frame(after)
        // Rendered through.
        // Room for every event of a period (player 9 wraps on every frame).
        let configuration = EngineConfiguration(eventCapacity: 1 << 16)
        let through = Engine(configuration: configuration)
        try Self.program(through)
        var full: [Event] = [], caughtUp: [Event] = []
        let whole = Self.render(through, periods: Int(end) / block, blockSize: block, events: &full)
        // The same program, with ten seconds the device skipped.
        let skipping = Engine(configuration: configuration)
        try Self.program(skipping)
        _ = Self.render(skipping, periods: Int(Self.lostFrom) / block, blockSize: block, events: &caughtUp)
        let resumed = Self.render(skipping, periods: after / block, blockSize: block, start: Self.lostFrom + Self.lostFrames,
                                  events: &caughtUp)
        #expect(skipping.lostFrameCount == Int(Self.lostFrames))
        #expect(skipping.clockRestartCount == 0)

        // The voices after the stretch (and the periods after it) are the same, to the bit.
        for p in 0..<24 {
            #expect(Self.state(skipping.voices[p]) == Self.state(through.voices[p]), "player \(p)")
            #expect(Self.state(skipping.tails[p]) == Self.state(through.tails[p]), "tail of player \(p)")
        }
        let offset = Int(Self.lostFrom + Self.lostFrames)
        var wrong = 0
        for i in 0..<after where resumed.left[i] != whole.left[offset + i] || resumed.right[i] != whole.right[offset + i] {
            wrong += 1
        }
        #expect(wrong == 0)
        #expect(whole.left[offset..<(offset + after)].contains { $0 != 0 })

        // Every end, stop and start is reported on its frame; of the wraps, at least the first and
        // the last of each player's in the stretch (the passes between may be skipped at once),
        // each on its frame.
        func key(_ e: Event) -> String { "\(e.kind) \(e.player) \(e.frame) \(e.tag)" }
        // (A start due in the stretch is also reported late: it was not heard.)
        // (Caught up voice by voice: the same events, each on its frame, in another order.)
        #expect(full.filter { $0.kind != .looped }.map(key).sorted() == caughtUp.filter { $0.kind != .looped && $0.kind != .lateStart }.map(key).sorted())
        #expect(through.lostEventCount == 0 && skipping.lostEventCount == 0)
        #expect(caughtUp.filter { $0.kind == .lateStart }.allSatisfy { $0.frame >= Self.lostFrom && $0.frame <= Self.lostFrom + Self.lostFrames })
        let wraps = Set(full.filter { $0.kind == .looped }.map(key))
        #expect(caughtUp.filter { $0.kind == .looped }.allSatisfy { wraps.contains(key($0)) })
        // Every player that wraps in the stretch (player 6's loop ends in its stop fade there).
        #expect(Set(full.filter { $0.kind == .looped && $0.frame >= Self.lostFrom && $0.frame <= Self.lostFrom + Self.lostFrames }.map(\.player)).isSuperset(of: [0, 1, 2, 3, 6, 9, 12, 13]))
        for p in Set(full.filter { $0.kind == .looped && $0.frame >= Self.lostFrom && $0.frame <= Self.lostFrom + Self.lostFrames }.map(\.player)).sorted() {
            let inStretch = full.filter { $0.kind == .looped && $0.player == p && $0.frame >= Self.lostFrom && $0.frame <= Self.lostFrom + Self.lostFrames }
            let reported = caughtUp.filter { $0.kind == .looped && $0.player == p && $0.frame >= Self.lostFrom && $0.frame <= Self.lostFrom + Self.lostFrames }
            if [0, 1, 2, 3].contains(p) { #expect(inStretch.count > 9, "player \(p) wraps often") }
            #expect(reported.first.map(key) == inStretch.first.map(key) && reported.last.map(key) == inStretch.last.map(key), "player \(p)")
            // Short sounds: more than 2 wraps between two commands, those between skipped at once.
            if [0, 1, 3].contains(p) { #expect(reported.count < inStretch.count, "player \(p): passes skipped at once") }
        }
    }

    /// The closed forms against the steps they replace: `skipVarispeed` against `addVarispeed`'s
    /// frame-by-frame phase, `skipPasses` against whole passes played one by one.
    @Test func theClosedFormsEqualTheSteps() throws {
        var random = SeededRandom(state: 38)
        let samples = UnsafeMutablePointer<Float>.allocate(capacity: 5_000)
        samples.initialize(repeating: 0.25, count: 5_000)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 20_000)
        defer { samples.deallocate(); out.deallocate() }
        for _ in 0..<2_000 {
            let frames = Int64(random.int(1...5_000))
            let rate = random.pick([0.25, 0.5, 0.77, 1.0594630943592953, 1.37, 1.5, 2.5, 4.0, 3.999])
            var v = Voice()
            v.setSound(0, SoundSlot(left: samples, right: samples, frames: frames, isStereo: false, stream: nil))
            v.setRate(rate)
            v.position = Int64(random.int(0...Int(frames - 1)))
            v.phase = UInt32(truncatingIfNeeded: random.next())
            v.loopsRemaining = -1
            let slot = SoundSlot(left: samples, right: samples, frames: frames, isStereo: false, stream: nil)
            let count = random.int(1...20_000)
            // One stretch to the sound's end at most.
            var stepped = v, skipped = v
            let played = Mixing.addVarispeed(&stepped, slot: slot, into: out, right: out, maxCount: count, panLeft: 0, panRight: 0,
                                             wide: false)
            skipped.position = v.position
            let closed = Mixing.skipVarispeed(&skipped, frames: frames, maxCount: count)
            #expect(played.output == closed.output && played.consumed == closed.consumed && stepped.phase == skipped.phase,
                    "frames \(frames) rate \(rate) count \(count)")
            // Whole passes: the steps (each pass to its end, then the wrap) against one product.
            var passes = v
            let limit = random.int(1...50)
            let closedPasses = Mixing.skipPasses(&passes, frames: frames, maxCount: count, maxPasses: limit)
            var walked = v, wrapped = 0, output = 0
            while wrapped < limit {
                var probe = walked
                let step = Mixing.skipVarispeed(&probe, frames: frames, maxCount: count - output)
                probe.position += Int64(step.consumed)
                if probe.position < frames { break }  // the pass does not end within the count
                probe.position -= frames
                walked = probe
                output += step.output
                wrapped += 1
            }
            if Double(walked.rateStep) > Double(frames) * 4_294_967_296 {
                #expect(closedPasses.passes == 0)  // sounds shorter than a step are left to the steps
                continue
            }
            #expect(closedPasses.passes == wrapped && closedPasses.output == output, "frames \(frames) rate \(rate) count \(count) limit \(limit)")
            #expect(passes.position == walked.position && passes.phase == walked.phase)
        }
    }

    /// The varispeed kernel (each frame from its own position) against the plain per-frame
    /// formula (the phase stepped frame by frame), to the bit: mono and stereo, with and without
    /// a ramp, up to and past the sound's end, looping and not.
    @Test func theVarispeedKernelIsThePerFrameFormula() {
        var random = SeededRandom(state: 3_801)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 3_000)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 3_000)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 4_096)
        defer { left.deallocate(); right.deallocate(); out.deallocate() }
        for i in 0..<3_000 {
            left[i] = Float(Int(random.next() % 2_001) - 1_000) / 997
            right[i] = Float(Int(random.next() % 2_001) - 1_000) / 991
        }
        for _ in 0..<3_000 {
            let frames = Int64(random.int(1...3_000))
            let stereo = random.chance(50)
            let slot = SoundSlot(left: left, right: stereo ? right : left, frames: frames, isStereo: stereo, stream: nil)
            var v = Voice()
            v.setSound(0, slot)
            v.setRate(random.pick([0.25, 0.5, 0.77, 1.0594630943592953, 1.37, 1.5, 2.5, 4.0]))
            v.position = Int64(random.int(0...Int(frames - 1)))
            v.phase = UInt32(truncatingIfNeeded: random.next())
            v.loopsRemaining = random.chance(50) ? -1 : 0
            v.level = Float(random.int(1...1_000)) / 700
            if random.chance(50) {
                v.rampFramesLeft = 4_096
                v.rampElapsed = Int32(random.int(0...100_000))
                v.rampOrigin = 0.3
                v.levelStep = Float(random.int(-1_000...1_000)) / 1e7
            }
            let count = random.int(1...4_096)
            let pan: (Float, Float) = (Float(random.int(0...100)) / 100, Float(random.int(0...100)) / 100)
            for k in 0..<(2 * count) { out[k] = Float(k % 7) / 7 }
            let before = v
            let played = Mixing.addVarispeed(&v, slot: slot, into: out, right: out + count, maxCount: count,
                                             panLeft: pan.0, panRight: pan.1, wide: Engine.cpuHasAVX512)
            // The formula, frame by frame.
            var pos = before.position, phase = before.phase, k = 0
            var mismatches = 0
            while k < count && pos < frames {
                let next = pos + 1 < frames ? pos + 1 : (before.loopsRemaining != 0 ? 0 : -1)
                let f = Float(phase >> 8) * 0x1p-24
                let a = slot.left[Int(pos)], c = slot.right[Int(pos)]
                let b = next >= 0 ? slot.left[Int(next)] : 0, d = next >= 0 ? slot.right[Int(next)] : 0
                var l = Float(k % 7) / 7, r = Float((count + k) % 7) / 7
                if before.rampFramesLeft > 0 {
                    let g = before.rampOrigin + before.levelStep * Float(Int(before.rampElapsed) + k)
                    l += (a + (b - a) * f) * g * pan.0
                    r += (c + (d - c) * f) * g * pan.1
                } else {
                    l += (a + (b - a) * f) * (before.level * pan.0)
                    r += (c + (d - c) * f) * (before.level * pan.1)
                }
                if l.bitPattern != out[k].bitPattern || r.bitPattern != out[count + k].bitPattern { mismatches += 1 }
                let sum = UInt64(phase) + (before.rateStep & 0xFFFF_FFFF)
                phase = UInt32(truncatingIfNeeded: sum)
                pos += Int64(before.rateStep >> 32) + Int64(sum >> 32)
                k += 1
            }
            #expect(mismatches == 0 && played.output == k && played.consumed == Int(pos - before.position) && v.phase == phase,
                    "frames \(frames) rate \(before.rate) stereo \(stereo) count \(count)")
        }
    }
}
