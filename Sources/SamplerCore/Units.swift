import RealModule
#if canImport(Glibc)
import Glibc
#endif

/// A position on the device clock or inside a sound, in sample frames.
///
/// Device-clock frames are absolute (frame 0 is where the clock started); positions inside a
/// sound count from the sound's first frame. Both are 64-bit so that they never wrap in practice.
public typealias Frame = Int64

/// A linear amplitude factor (1 = unity, 0 = silence).
public struct Gain: Hashable, Sendable {
    /// The linear factor.
    public var linear: Float

    /// A gain from a linear factor. Negative values are clamped to 0.
    public init(linear: Float) { self.linear = max(0, linear) }

    /// A gain from decibels relative to unity (0 dB = 1.0, -6 dB ≈ 0.5). `-infinity` is silence.
    public init(decibels: Double) {
        self.linear = decibels == -.infinity ? 0 : Float(Double.pow(10, decibels / 20))
    }

    /// The gain in decibels (`-infinity` for silence).
    public var decibels: Double {
        linear <= 0 ? -.infinity : 20 * Double.log10(Double(linear))
    }

    public static let unity = Gain(linear: 1)
}

/// The pan law: how a pan position in -1…1 becomes left/right channel factors.
///
/// Mono sources use constant power (centre is -3 dB per side, the summed power is the same at
/// every position). Stereo sources use a balance: centre leaves both channels at unity, moving
/// right attenuates the left channel linearly down to silence at +1, and vice versa.
/// Which law turns a mono source's pan into left/right factors.
public enum PanLawKind: String, Equatable, Sendable, CaseIterable {
    /// Constant power: −3 dB each side at the centre (the default).
    case constantPower = "constant-power"
    /// Balance: the nearer side stays at unity, the other falls linearly to 0 (unity both sides
    /// at the centre): Hydrogen 1.2's default law, "ratio straight polygonal", and what stereo
    /// sources use always.
    case balance
    /// Constant power for stereo sources too: each channel panned as a mono source (sfizz's
    /// law, −3 dB each side at the centre).
    case constantPowerStereo = "constant-power-stereo"
}

public enum PanLaw {
    /// Left/right factors for a mono source at `pan` (-1 = hard left, 1 = hard right).
    /// Real-time safe (libm's cos and sin).
    @_noLocks @_noAllocation
    public static func mono(pan: Float) -> (left: Float, right: Float) {
        let p = Double(min(1, max(-1, pan)))
        let theta = (p + 1) * 0.7853981633974483
        // Hard left/right are exactly silent on the other side (cos(π/2) is 6e-17, not 0).
        let (c, s) = cosineAndSine(theta)
        return (abs(c) < 1e-9 ? 0 : Float(c), abs(s) < 1e-9 ? 0 : Float(s))
    }

    /// libm's cos and sin: real-time safe (they neither lock nor allocate), but the checker
    /// cannot see into C.
    @_semantics("no_performance_analysis")
    static func cosineAndSine(_ x: Double) -> (Double, Double) {
        (cos(x), sin(x))
    }

    /// Left/right factors for a stereo source with balance `pan`.
    @_noLocks @_noAllocation
    public static func stereo(pan: Float) -> (left: Float, right: Float) {
        let p = min(1, max(-1, pan))
        return (min(1, 1 - p), min(1, 1 + p))
    }
}
