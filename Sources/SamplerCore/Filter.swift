#if canImport(Glibc)
import Glibc
#endif

// A voice's filter: what an instrument asks for (`VoiceFilter`), and the state each voice and
// tail keeps on the render thread (`FilterState`): the cutoff's parts, the coefficients and the
// memory of one biquad per channel.

/// The response of a voice's filter: SFZ's `fil_type` values, with the coefficients sfizz uses
/// (RBJ's cookbook biquads for the 2-pole kinds, one-pole sections for the 1-pole kinds).
public enum FilterKind: UInt8, Equatable, Sendable, CaseIterable, BitwiseCopyable {
    case none
    case lowpass1
    case lowpass2
    case highpass1
    case highpass2
    case bandpass2
    case notch2

    /// Whether it is `.none` (no filter). Real-time safe.
    var isNone: Bool {
        @_noLocks @_noAllocation @inline(__always) get { rawValue == 0 }
    }

    /// SFZ's name (`lpf_2p` …); `none` has none.
    public var sfzName: String {
        switch self {
        case .none: return "none"
        case .lowpass1: return "lpf_1p"
        case .lowpass2: return "lpf_2p"
        case .highpass1: return "hpf_1p"
        case .highpass2: return "hpf_2p"
        case .bandpass2: return "bpf_2p"
        case .notch2: return "brf_2p"
        }
    }

    /// The kind SFZ names `name`, nil for one not carried.
    public init?(sfzName name: String) {
        guard let kind = FilterKind.allCases.first(where: { $0 != .none && $0.sfzName == name }) else { return nil }
        self = kind
    }
}

/// An instrument's filter, one per voice (SFZ's `fil_type`, `cutoff`, `resonance`,
/// `fil_keytrack`, `fil_keycenter`, `fil_veltrack`, `fil_random`; controllers move the cutoff
/// and resonance through `ModulationTarget.cutoff` and `.resonance`).
/// A voice's cutoff in Hz is `cutoff × 2^(cents / 1200)` with cents = keytrack × (note −
/// keycenter) + veltrack × velocity / 127 + a random draw in 0…random + the controllers', clamped
/// to 1 Hz…20 kHz and below the Nyquist frequency.
public struct VoiceFilter: Equatable, Sendable {
    public var kind: FilterKind
    /// Hz.
    public var cutoff: Float
    /// dB: the 2-pole kinds' Q is 10^(resonance / 20) (0 dB: Q = 1, as sfizz).
    public var resonance: Float
    /// Cents per key away from `keycenter`.
    public var keytrack: Float
    public var keycenter: Int
    /// Cents at velocity 127.
    public var veltrack: Float
    /// Cents: each trigger draws an offset in 0…random.
    public var random: Float
    /// The rate the instrument's voices play at (the cutoff is in Hz at it).
    public var sampleRate: Double

    public init(kind: FilterKind, cutoff: Float, resonance: Float = 0, keytrack: Float = 0, keycenter: Int = 60,
                veltrack: Float = 0, random: Float = 0, sampleRate: Double = 48_000) {
        self.sampleRate = sampleRate
        self.kind = kind
        self.cutoff = cutoff
        self.resonance = resonance
        self.keytrack = keytrack
        self.keycenter = keycenter
        self.veltrack = veltrack
        self.random = random
    }
}

/// One channel's memory of a direct-form-I biquad: the last two inputs and outputs, in double
/// (as sfizz's filters keep theirs): a low cutoff's poles lie so near the unit circle that in
/// single precision they round onto or past it.
struct BiquadMemory: BitwiseCopyable {
    var x1: Double = 0
    var x2: Double = 0
    var y1: Double = 0
    var y2: Double = 0

    @_noLocks @_noAllocation
    init() {}
}

/// A biquad's coefficients, normalized (a0 = 1), with the feedback ones negated:
/// y = b0·x + b1·x1 + b2·x2 + na1·y1 + na2·y2.
struct BiquadCoefficients: BitwiseCopyable {
    var b0: Double = 1
    var b1: Double = 0
    var b2: Double = 0
    var na1: Double = 0
    var na2: Double = 0
    /// Frames after which what came before the filter's input has died away below double
    /// precision (its poles' radius r to the power of them is below e⁻⁴⁵), at most 65,536:
    /// rendering frames the device skipped, this many from rest leave its memory as rendering
    /// them all would.
    var settle: Int32 = 2

    @_noLocks @_noAllocation
    init() {}

    /// `settle` for the coefficients as they are.
    @_semantics("no_performance_analysis")
    mutating func computeSettle() {
        // The poles: z² = na1·z + na2.
        let d = na1 * na1 + 4 * na2
        let r = d < 0 ? (-na2).squareRoot() : max(abs(na1 + d.squareRoot()), abs(na1 - d.squareRoot())) / 2
        if !(r > 0) { settle = 2; return }
        if !(r < 1) { settle = 65_536; return }
        settle = Int32(min(65_536, 2 + (45 / -log(r)).rounded(.up)))
    }

    /// The coefficients of `kind` at `cutoff` Hz (clamped to 1 Hz…20 kHz and 0.49 × the rate)
    /// and `resonance` dB, as sfizz's Faust filters compute them (in double). Real-time safe
    /// (libm's cos, sin, exp and pow).
    @_semantics("no_performance_analysis")
    static func make(_ kind: FilterKind, cutoff: Float, resonance: Float, sampleRate: Double) -> BiquadCoefficients {
        let f = min(min(20_000, max(1, Double(cutoff.isNaN ? 1 : cutoff))), 0.49 * sampleRate)
        let w0 = 2 * Double.pi * f / sampleRate
        let q = max(0.001, pow(10, 0.05 * min(60, max(-60, Double(resonance.isNaN ? 0 : resonance)))))
        let cw = cos(w0), alpha = sin(w0) / (2 * q)
        let a0 = 1 + alpha
        var c = BiquadCoefficients()
        switch kind {
        case .none:
            return c
        case .lowpass1:
            let p = exp(-w0)
            c.b0 = 1 - p
            c.na1 = p
            c.computeSettle()
            return c
        case .highpass1:
            let p = exp(-w0)
            c.b0 = 0.5 * (1 + p)
            c.b1 = -0.5 * (1 + p)
            c.na1 = p
            c.computeSettle()
            return c
        case .lowpass2:
            c.b0 = (1 - cw) / 2 / a0
            c.b1 = (1 - cw) / a0
            c.b2 = c.b0
        case .highpass2:
            c.b0 = (1 + cw) / 2 / a0
            c.b1 = -(1 + cw) / a0
            c.b2 = c.b0
        case .bandpass2:
            c.b0 = alpha / a0
            c.b1 = 0
            c.b2 = -alpha / a0
        case .notch2:
            c.b0 = 1 / a0
            c.b1 = -2 * cw / a0
            c.b2 = c.b0
        }
        c.na1 = 2 * cw / a0
        c.na2 = -(1 - alpha) / a0
        c.computeSettle()
        return c
    }
}

/// A voice's (or tail's) filter on the render thread. `kind == .none`: the voice is not filtered.
struct FilterState: BitwiseCopyable {
    var kind: FilterKind = .none
    /// The cutoff (Hz) with the trigger's key, velocity and random draw, before the controllers.
    var baseCutoff: Float = 0
    /// The resonance (dB) before the controllers.
    var baseResonance: Float = 0
    /// What the controllers add now: cents to the cutoff, dB to the resonance.
    var cutoffCents: Float = 0
    var resonanceDb: Float = 0
    var coefficients = BiquadCoefficients()
    var left = BiquadMemory()
    var right = BiquadMemory()

    @_noLocks @_noAllocation
    init() {}

    /// No filter.
    @_noLocks @_noAllocation
    mutating func disable() { kind = .none }

    /// The coefficients for the cutoff and resonance as they are now, the memory cleared.
    @_noLocks @_noAllocation
    mutating func reset(sampleRate: Double) {
        update(sampleRate: sampleRate)
        left = BiquadMemory()
        right = BiquadMemory()
    }

    /// The coefficients for the cutoff and resonance as they are now (the memory kept).
    @_noLocks @_noAllocation
    mutating func update(sampleRate: Double) {
        let cutoff = baseCutoff * centsFactor(cutoffCents)
        coefficients = BiquadCoefficients.make(kind, cutoff: cutoff, resonance: baseResonance + resonanceDb, sampleRate: sampleRate)
    }
}

/// 2^(cents / 1200) in `Float`. Real-time safe (libm's exp2f; see `decibelFactor`).
@_semantics("no_performance_analysis")
func centsFactor(_ cents: Float) -> Float {
    exp2f(min(12_000, max(-12_000, cents.isNaN ? 0 : cents)) / 1200)
}

/// The filter kernels: one biquad step, a block in place, and the fused "read, level, filter,
/// pan, add" of a plain voice. Every path computes each sample with the same operations in the
/// same order (no fused multiply-adds), so that a voice filtered on any path, in blocks of any
/// length, gives the same bits.
enum Filtering {
    /// One sample through the biquad (in double; the output rounded to single).
    @_noLocks @_noAllocation @inline(__always)
    static func step(_ input: Float, _ c: BiquadCoefficients, _ m: inout BiquadMemory) -> Float {
        let x = Double(input)
        let y = c.b0 * x + c.b1 * m.x1 + c.b2 * m.x2 + c.na2 * m.y2 + c.na1 * m.y1
        m.x2 = m.x1
        m.x1 = x
        m.y2 = m.y1
        m.y1 = y
        return Float(y)
    }

    /// `count` samples of `x` through the biquad, in place.
    @_noLocks @_noAllocation
    static func apply(_ x: UnsafeMutablePointer<Float>, count: Int, _ c: BiquadCoefficients, _ m: inout BiquadMemory) {
        var mem = m
        for i in 0..<count { x[i] = step(x[i], c, &mem) }
        m = mem
    }

    /// Two channels through their biquads in one pass (the two recursions overlap).
    @_noLocks @_noAllocation
    static func apply(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, count: Int, _ c: BiquadCoefficients,
                      _ ml: inout BiquadMemory, _ mr: inout BiquadMemory) {
        var a = ml, b = mr
        for i in 0..<count {
            l[i] = step(l[i], c, &a)
            r[i] = step(r[i], c, &b)
        }
        ml = a
        mr = b
    }

    /// A mono source at `level` through the biquad, then panned and added:
    /// `out += step(s × level) × pan`, each channel.
    @_noLocks @_noAllocation
    static func addMono(_ s: UnsafePointer<Float>, count: Int, level: Float, _ c: BiquadCoefficients, _ m: inout BiquadMemory,
                        panLeft: Float, panRight: Float,
                        into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) {
        var mem = m
        for i in 0..<count {
            let y = step(s[i] * level, c, &mem)
            outLeft[i] = outLeft[i] + y * panLeft
            outRight[i] = outRight[i] + y * panRight
        }
        m = mem
    }

    /// Two mono sources, each as `addMono`, in one pass: every output frame gets the first's
    /// and then the second's, to the bit as two `addMono` calls.
    @_noLocks @_noAllocation
    static func addMonoPair(_ sa: UnsafePointer<Float>, level la: Float, _ ca: BiquadCoefficients, _ ma: inout BiquadMemory,
                            panLeft pla: Float, panRight pra: Float,
                            _ sb: UnsafePointer<Float>, level lb: Float, _ cb: BiquadCoefficients, _ mb: inout BiquadMemory,
                            panLeft plb: Float, panRight prb: Float, count: Int,
                            into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) {
        var a = ma, b = mb
        for i in 0..<count {
            let ya = step(sa[i] * la, ca, &a)
            let yb = step(sb[i] * lb, cb, &b)
            outLeft[i] = outLeft[i] + ya * pla + yb * plb
            outRight[i] = outRight[i] + ya * pra + yb * prb
        }
        ma = a
        mb = b
    }

    /// Two stereo sources, each as `addStereo`, in one pass (the same bits as two calls).
    @_noLocks @_noAllocation
    static func addStereoPair(_ al: UnsafePointer<Float>, _ ar: UnsafePointer<Float>, gainLeft gla: Float, gainRight gra: Float,
                              _ ca: BiquadCoefficients, _ mal: inout BiquadMemory, _ mar: inout BiquadMemory,
                              _ bl: UnsafePointer<Float>, _ br: UnsafePointer<Float>, gainLeft glb: Float, gainRight grb: Float,
                              _ cb: BiquadCoefficients, _ mbl: inout BiquadMemory, _ mbr: inout BiquadMemory, count: Int,
                              into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) {
        var a = mal, b = mar, c = mbl, d = mbr
        for i in 0..<count {
            let yal = step(al[i] * gla, ca, &a)
            let yar = step(ar[i] * gra, ca, &b)
            let ybl = step(bl[i] * glb, cb, &c)
            let ybr = step(br[i] * grb, cb, &d)
            outLeft[i] = outLeft[i] + yal + ybl
            outRight[i] = outRight[i] + yar + ybr
        }
        mal = a
        mar = b
        mbl = c
        mbr = d
    }

    /// A stereo source at its gains through the two biquads, then added:
    /// `out += step(s × gain)`, each channel.
    @_noLocks @_noAllocation
    static func addStereo(_ sl: UnsafePointer<Float>, _ sr: UnsafePointer<Float>, count: Int, gainLeft: Float, gainRight: Float,
                          _ c: BiquadCoefficients, _ ml: inout BiquadMemory, _ mr: inout BiquadMemory,
                          into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>) {
        var a = ml, b = mr
        for i in 0..<count {
            outLeft[i] = outLeft[i] + step(sl[i] * gainLeft, c, &a)
            outRight[i] = outRight[i] + step(sr[i] * gainRight, c, &b)
        }
        ml = a
        mr = b
    }

    /// A filtered mono block `y` (in `l`) panned in place: `r = y × panRight`, `l = y × panLeft`.
    @_noLocks @_noAllocation
    static func pan(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, count: Int, panLeft: Float, panRight: Float) {
        for i in 0..<count {
            let y = l[i]
            r[i] = y * panRight
            l[i] = y * panLeft
        }
    }
}
