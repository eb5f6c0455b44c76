import CMixReference
import SamplerCore
import SoundFiles

/// Which sources a mixing workload plays.
enum SourceKind: String, CaseIterable {
    case mono, stereo
}

/// Distinct sounds for the voices of a mixing workload: every voice reads its own memory, as in a
/// sampler playing many different samples, so that at high voice counts the job is bound by
/// memory bandwidth and not by one sound sitting in L1. Each sound is half a second of noise, in
/// `memory`: by default where the sound-file loaders put decoded sounds (2 MB pages), or on the
/// heap (`nil`, 4 KiB pages) to measure what the huge pages gain.
final class SoundPool {
    static let frames = 24_000
    let memory: (any SampleMemory)?

    init(memory: (any SampleMemory)? = HugePageSampleMemory.shared) {
        self.memory = memory
    }
    private var mono: [Sound] = []
    private var stereo: [Sound] = []
    private var seed: UInt32 = 12345

    func sounds(_ kind: SourceKind, count: Int) -> ArraySlice<Sound> {
        switch kind {
        case .mono:
            while mono.count < count { mono.append(try! Sound(channels: [noise()], sampleRate: 48_000, memory: memory)) }
            return mono.prefix(count)
        case .stereo:
            while stereo.count < count { stereo.append(try! Sound(channels: [noise(), noise()], sampleRate: 48_000, memory: memory)) }
            return stereo.prefix(count)
        }
    }

    private func noise() -> [Float] {
        [Float](unsafeUninitializedCapacity: SoundPool.frames) { buffer, count in
            for i in 0..<SoundPool.frames {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                buffer[i] = Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.5
            }
            count = SoundPool.frames
        }
    }
}

/// A small deterministic generator for positions, gains and pans.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Float { Float(next() >> 40) / Float(1 << 24) }
}

/// N voices, each looping its own sound from a random position with a random gain and pan (and,
/// with `fades`, a gain ramp that lasts the whole run; with `rate` ≠ 1, varispeed; with `tails`,
/// each player restarted with a declick on another sound, its old voice fading out on the
/// player's tail for the whole run), set up identically in an `Engine` and in the C reference's
/// voice arrays.
final class MixWorkload {
    let voiceCount: Int
    let kind: SourceKind
    let fades: Bool
    let tails: Bool
    let rate: Double
    let frameCount: Int
    let engine: Engine
    var reference: [CMixVoice]
    /// The tails' voices (ramping to 0), with `tails`.
    var tailReference: [CMixVoice] = []
    let streamed: Bool
    /// With `controlled`: the voices are one instrument's, whose level follows CC1 and pan CC2
    /// (SFZ's curve 1); each period begins with both moved, on the period's first frame, handed
    /// to the engine as `midi_in` hands them (the C reference sets every voice's gains from the
    /// same values).
    let controlled: Bool
    /// With `controlled`: frames over which each change of level glides (the instrument's
    /// `steerFrames`; 0: none, a step on the change's frame); the pan moves on the frame.
    let glideFrames: Int
    /// The C reference's level before this period's change (the glide's origin).
    private var referenceLevel: Float = 1
    /// With `filtered`: the voices are one instrument's, through a 2-pole low-pass whose cutoff
    /// follows CC74 (moved every period as CC1 is with `controlled`); the C reference computes
    /// each voice's coefficients for the same cents and runs the same biquad.
    let filtered: Bool
    var filterReference: [CMixFilterVoice] = []
    static let filterDepth: Float = 2400
    private var enginePeriods = 0
    private var referencePeriods = 0
    /// The controllers' 7-bit values for period `k`: a slow sweep of each.
    static func controllerValues(_ k: Int) -> (level: UInt8, pan: UInt8) {
        (UInt8(64 + Int(50 * Float.sin(Float(k) * 0.05))), UInt8(64 + Int(40 * Float.sin(Float(k) * 0.031))))
    }
    /// The two control changes, as `midi_in` delivers them: bytes in a buffer the engine is
    /// handed a pointer to (a Swift array here would add its exclusivity checks and reference
    /// counting to the engine's side of the comparison).
    private let messages: UnsafeMutablePointer<UInt8> = {
        let m = UnsafeMutablePointer<UInt8>.allocate(capacity: 6)
        m.initialize(from: [0xB0, 1, 0, 0xB0, 2, 0], count: 6)
        return m
    }()
    /// With `streamed`: each voice's ring and the sound whose first `ringFrames` frames it holds
    /// (slot j always holds frame j: refilling rewrites the same samples), and the C reference's.
    private var rings: [(ring: StreamRing, sound: Sound)] = []
    var streamReference: [CMixStream] = []
    /// A ring holds as many frames as a sound (half a second, like a player's preload).
    static let ringFrames = SoundPool.frames
    /// Periods one batch may render: a streamed workload's rings are refilled between batches.
    var maxPeriodsPerBatch: Int { streamed ? MixWorkload.ringFrames / frameCount : .max }
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    let referenceLeft: UnsafeMutablePointer<Float>
    let referenceRight: UnsafeMutablePointer<Float>
    private(set) var periodStart: Frame = 0

    /// Ramps last 2^30 frames (6 hours at 48 kHz): always active during a benchmark.
    static let rampFrames = 1 << 30

    /// `slots`: the engine's players (at least `voices`; the others stay idle).
    /// With `streamed`, each voice plays a stream ring instead of a sound, at rate 1 without a
    /// ramp: the ring is filled before each batch, as a disk thread would keep it filled.
    init(pool: SoundPool, voices: Int, kind: SourceKind, fades: Bool = false, rate: Double = 1, tails: Bool = false,
         streamed: Bool = false, controlled: Bool = false, glideFrames: Int = 0, filtered: Bool = false, frameCount: Int,
         slots: Int? = nil) {
        voiceCount = voices
        self.controlled = controlled
        self.glideFrames = glideFrames
        self.filtered = filtered
        self.kind = kind
        self.fades = fades
        self.tails = tails
        self.streamed = streamed
        self.rate = rate
        self.frameCount = frameCount
        engine = Engine(configuration: .init(maxPlayers: max(voices, slots ?? 0), maxSounds: 2 * voices,
                                             commandCapacity: 2 * voices + 64, eventCapacity: 1 << 16,
                                             scheduleCapacity: 2 * voices + 64))
        // Each output on a page of its own, at its start: the engine's and the C loop's outputs
        // then sit at the same place within a 4 KiB page, so neither is slowed more than the
        // other by loads of the sources waiting on stores to outputs whose addresses match in
        // their low 12 bits (4 KiB aliasing), which with heap blocks at arbitrary offsets
        // depends on where the heap puts them (Benchmarks/README.md, "What changed", 9).
        func page() -> UnsafeMutablePointer<Float> {
            UnsafeMutableRawPointer.allocate(byteCount: max(4096, frameCount * 4), alignment: 4096)
                .bindMemory(to: Float.self, capacity: frameCount)
        }
        left = page()
        right = page()
        referenceLeft = page()
        referenceRight = page()
        reference = []
        reference.reserveCapacity(voices)
        var random = SplitMix(state: UInt64(voices) &* 7919 &+ (kind == .stereo ? 1 : 0))
        let all = Array(pool.sounds(kind, count: tails ? 2 * voices : voices))
        if controlled {
            // One instrument with a voice per sound (round robin), looping from the start at
            // velocity 127 (level 1), triggered on the first frame.
            let ids = all.prefix(voices).map { try! engine.register($0) }
            var instrument = InstrumentDefinition(firstPlayer: 0, voiceCount: voices, loops: -1, layers: [InstrumentLayer(sounds: ids)],
                                                  declickFrames: 0)
            instrument.modulations = [ControllerModulation(controller: 1, target: .amplitude, depth: 1),
                                      ControllerModulation(controller: 2, target: .pan, depth: 1, curve: ControllerModulation.sfzCurve(1))]
            instrument.followsChannelControllers = false
            instrument.steerFrames = glideFrames
            engine.setInstruments([instrument], controllers: ControllerSetup(defaults: [1: 1, 2: 0.5]))
            for _ in 0..<voices { engine.send(.trigger(instrument: 0, velocity: 127, at: Command.immediately)) }
            for sound in all.prefix(voices) {
                reference.append(CMixVoice(left: sound.left, right: sound.right, frames: Int64(sound.frameCount),
                                           position: 0, gainLeft: 0, gainRight: 0, panLeft: 0, panRight: 0, rampOrigin: 1, rampStep: 0,
                                           rampElapsed: 0, rate: 1, rateStep: 1 << 32, phase: 0))
            }
        }
        if filtered {
            // As `controlled`, at the centre, through the filter.
            let ids = all.prefix(voices).map { try! engine.register($0) }
            var instrument = InstrumentDefinition(firstPlayer: 0, voiceCount: voices, loops: -1, layers: [InstrumentLayer(sounds: ids)],
                                                  declickFrames: 0)
            instrument.filter = VoiceFilter(kind: .lowpass2, cutoff: 800, resonance: 3)
            instrument.modulations = [ControllerModulation(controller: 74, target: .cutoff, depth: MixWorkload.filterDepth)]
            instrument.followsChannelControllers = false
            engine.setInstruments([instrument], controllers: ControllerSetup(defaults: [74: 0.5]))
            for _ in 0..<voices { engine.send(.trigger(instrument: 0, velocity: 127, at: Command.immediately)) }
            let pan = PanGains(pan: 0)
            let panLeft = kind == .mono ? pan.monoLeft : pan.stereoLeft, panRight = kind == .mono ? pan.monoRight : pan.stereoRight
            for sound in all.prefix(voices) {
                filterReference.append(CMixFilterVoice(left: sound.left, right: sound.right, frames: Int64(sound.frameCount), position: 0,
                                                       level: 1, panLeft: panLeft, panRight: panRight, baseCutoff: 800, resonance: 3,
                                                       b0: 0, b1: 0, b2: 0, na1: 0, na2: 0, lx1: 0, lx2: 0, ly1: 0, ly2: 0,
                                                       rx1: 0, rx2: 0, ry1: 0, ry2: 0))
            }
        }
        for (p, sound) in all.prefix(controlled || filtered ? 0 : voices).enumerated() {
            if tails {
                // The old voice: started first, then faded out on the tail by the restart below.
                let old = all[voices + p]
                let id = try! engine.register(old)
                let position = Frame(random.next() % UInt64(old.frameCount))
                let level = 0.2 + 0.8 * random.unit()
                let pan = PanGains(pan: 2 * random.unit() - 1)
                engine.send(.start(player: p, sound: id, at: Command.immediately, from: position, loops: -1,
                                   gain: Gain(linear: level), pan: pan))
                let panLeft = kind == .mono ? pan.monoLeft : pan.stereoLeft
                let panRight = kind == .mono ? pan.monoRight : pan.stereoRight
                tailReference.append(CMixVoice(left: old.left, right: old.right, frames: Int64(old.frameCount),
                                               position: position, gainLeft: 0, gainRight: 0,
                                               panLeft: panLeft, panRight: panRight, rampOrigin: level,
                                               rampStep: (0 - level) / Float(MixWorkload.rampFrames),
                                               rampElapsed: 0, rate: 1, rateStep: 1 << 32, phase: 0))
            }
            if streamed {
                // In the memory the product's rings use (as the pool's sounds are).
                let ring = StreamRing(capacity: MixWorkload.ringFrames, channelCount: kind == .mono ? 1 : 2, sampleRate: 48_000,
                                      memory: pool.memory)
                rings.append((ring, sound))
                let id = try! engine.register(stream: ring)
                let level = 0.2 + 0.8 * random.unit()
                let pan = PanGains(pan: 2 * random.unit() - 1)
                engine.send(.start(player: p, sound: id, at: Command.immediately, from: 0, loops: 0,
                                   gain: Gain(linear: level), pan: pan))
                let panLeft = kind == .mono ? pan.monoLeft : pan.stereoLeft
                let panRight = kind == .mono ? pan.monoRight : pan.stereoRight
                // The C loop reads the engine's ring memory: the same samples at the same addresses,
                // refilled by the same writes between batches.
                streamReference.append(CMixStream(left: ring.samples.left, right: ring.samples.right, capacity: Int64(MixWorkload.ringFrames),
                                                  readIndex: 0, writeIndex: Int64(MixWorkload.ringFrames), endIndex: .max,
                                                  underrunFrames: 0, gainLeft: level * panLeft, gainRight: level * panRight))
                continue
            }
            let id = try! engine.register(sound)
            let position = Frame(random.next() % UInt64(sound.frameCount))
            let level = 0.2 + 0.8 * random.unit()
            let pan = PanGains(pan: 2 * random.unit() - 1)
            engine.send(.start(player: p, sound: id, at: Command.immediately, from: position, loops: -1,
                               gain: Gain(linear: level), pan: pan, rate: rate,
                               declickFrames: tails ? MixWorkload.rampFrames : 0))
            let panLeft = kind == .mono ? pan.monoLeft : pan.stereoLeft
            let panRight = kind == .mono ? pan.monoRight : pan.stereoRight
            var voice = CMixVoice(left: sound.left, right: sound.right, frames: Int64(sound.frameCount),
                                  position: position, gainLeft: level * panLeft, gainRight: level * panRight,
                                  panLeft: panLeft, panRight: panRight, rampOrigin: level, rampStep: 0,
                                  rampElapsed: 0, rate: rate, rateStep: UInt64(rate * 4_294_967_296 + 0.5), phase: 0)
            if fades {
                let target = level * 0.5
                engine.send(.setGain(player: p, Gain(linear: target), fadeFrames: MixWorkload.rampFrames))
                voice.rampStep = (target - level) / Float(MixWorkload.rampFrames)
            }
            reference.append(voice)
        }
        refill()
    }

    /// Fills every stream ring up to its capacity, with the frames its slots always hold (the
    /// writer's part, untimed; the C reference's rings are refilled with `refillReference`).
    func refill() {
        for (ring, sound) in rings {
            var w = ring.writeIndex
            let target = ring.readIndex + Int64(ring.capacity)
            while w < target {
                let at = Int(w % Int64(ring.capacity))
                let n = min(ring.capacity - at, Int(target - w))
                ring.write(left: sound.left + at, right: kind == .stereo ? sound.right + at : nil, count: n)
                w += Int64(n)
            }
        }
    }

    func refillReference() {
        if streamed { cmix_refill_streams(&streamReference, Int32(voiceCount)) }
    }

    deinit {
        messages.deallocate()
        left.deallocate(); right.deallocate()
        referenceLeft.deallocate(); referenceRight.deallocate()
    }

    /// One period of the engine (the real render path).
    @inline(__always)
    func renderEngine() {
        if controlled {
            // As JACK's process callback hands `midi_in`'s events to the engine before it renders.
            let v = MixWorkload.controllerValues(enginePeriods)
            enginePeriods += 1
            messages[2] = v.level
            messages[5] = v.pan
            engine.receiveMIDI(messages, count: 3, at: periodStart)
            engine.receiveMIDI(messages + 3, count: 3, at: periodStart)
        }
        if filtered {
            let v = MixWorkload.controllerValues(enginePeriods)
            enginePeriods += 1
            messages[0] = 0xB0
            messages[1] = 74
            messages[2] = v.level
            engine.receiveMIDI(messages, count: 3, at: periodStart)
        }
        engine.render(frameCount: frameCount, periodStart: periodStart, left: left, right: right)
        periodStart += Frame(frameCount)
    }

    /// One period of the C reference.
    @inline(__always)
    func renderReference() {
        let count = Int32(voiceCount), frames = Int32(frameCount)
        if streamed {
            streamReference.withUnsafeMutableBufferPointer { streams in
                cmix_render_streams(streams.baseAddress, count, referenceLeft, referenceRight, frames)
            }
            return
        }
        if filtered {
            let v = MixWorkload.controllerValues(referencePeriods)
            referencePeriods += 1
            let cents = MixWorkload.filterDepth * (Float(v.level) / 127)
            filterReference.withUnsafeMutableBufferPointer { voices in
                cmix_filter_coefficients(voices.baseAddress, count, cents, 48_000)
                cmix_render_filtered(voices.baseAddress, count, referenceLeft, referenceRight, frames)
            }
            return
        }
        var gains: (left: Float, right: Float)?
        if controlled {
            let v = MixWorkload.controllerValues(referencePeriods)
            referencePeriods += 1
            let level = Float(v.level) / 127
            let pan = PanGains(pan: 2 * (Float(v.pan) / 127) - 1)
            gains = kind == .mono ? (level * pan.monoLeft, level * pan.monoRight) : (level * pan.stereoLeft, level * pan.stereoRight)
            if glideFrames > 0 {
                let origin = referenceLevel, step = (level - origin) / Float(glideFrames)
                let panLeft = kind == .mono ? pan.monoLeft : pan.stereoLeft, panRight = kind == .mono ? pan.monoRight : pan.stereoRight
                referenceLevel = level
                reference.withUnsafeMutableBufferPointer { voices in
                    for i in voices.indices {
                        voices[i].gainLeft = gains!.left
                        voices[i].gainRight = gains!.right
                        voices[i].panLeft = panLeft
                        voices[i].panRight = panRight
                        voices[i].rampOrigin = origin
                        voices[i].rampStep = step
                    }
                    cmix_render_glided(voices.baseAddress, count, referenceLeft, referenceRight, frames, Int32(glideFrames))
                }
                return
            }
        }
        // One access to the voices a period, as the engine's side has (setting each voice's
        // gains through the array would add its exclusivity checks to the C loop's side).
        reference.withUnsafeMutableBufferPointer { voices in
            if let gains {
                for i in voices.indices {
                    voices[i].gainLeft = gains.left
                    voices[i].gainRight = gains.right
                }
            }
            if fades {
                cmix_render_ramped(voices.baseAddress, count, referenceLeft, referenceRight, frames)
            } else {
                cmix_render(voices.baseAddress, count, referenceLeft, referenceRight, frames)
            }
        }
        if tails {
            tailReference.withUnsafeMutableBufferPointer { voices in
                cmix_add_ramped(voices.baseAddress, count, referenceLeft, referenceRight, frames)
            }
        }
    }

    /// Renders the first periods of both and returns the largest difference between them relative
    /// to the output's peak: the two do the same job (they differ only in rounding: the C loop may
    /// fuse multiply-adds).
    func checkAgreement(periods: Int = 4) -> Double {
        var worst = 0.0
        for _ in 0..<periods {
            renderEngine()
            renderReference()
            var peak: Float = 1e-9, diff: Float = 0
            for i in 0..<frameCount {
                peak = Swift.max(peak, abs(referenceLeft[i]), abs(referenceRight[i]))
                diff = Swift.max(diff, abs(left[i] - referenceLeft[i]), abs(right[i] - referenceRight[i]))
            }
            worst = Swift.max(worst, Double(diff / peak))
        }
        engine.drainEvents { _ in }
        refill()
        refillReference()
        return worst
    }

    /// Between two batches of the engine (untimed): its events drained, its rings refilled.
    func drainEvents() {
        engine.drainEvents { _ in }
        refill()
    }
}
