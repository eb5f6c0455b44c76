#if canImport(Glibc)
import Glibc
#endif

// MIDI controllers: what an instrument asks of them (conditions, a trigger, modulations), and
// their state as the render thread keeps it, per MIDI channel, on the device timeline.

/// Controller numbers. 0…127 are MIDI's control changes; 128…511 are sfizz's extended numbers,
/// which only a kit's defaults set (`ControllerSetup.defaults`; SFZ's `set_hdcc201=0.5`).
public enum Controller {
    /// Controller numbers 0 ..< `count`.
    public static var count: Int { @_noLocks @_noAllocation get { 512 } }
    public static var volume: Int { @_noLocks @_noAllocation get { 7 } }
    public static var pan: Int { @_noLocks @_noAllocation get { 10 } }
    public static var expression: Int { @_noLocks @_noAllocation get { 11 } }
    /// At or above 64 (0.5): note-offs wait until it goes below (an instrument may name another
    /// pedal, or none: `InstrumentDefinition.sustainController`).
    public static var sustain: Int { @_noLocks @_noAllocation get { 64 } }
    /// Pressed (at or above 64): the instruments whose notes are down then keep them until it
    /// goes up, whatever their note-offs; notes played after are not held.
    public static var sostenuto: Int { @_noLocks @_noAllocation get { 66 } }
    /// Immediate silence of every instrument voice, declicked.
    public static var allSoundOff: Int { @_noLocks @_noAllocation get { 120 } }
    /// Every controller of the channel back to its default, pitch bend and pressure to 0.
    public static var resetAll: Int { @_noLocks @_noAllocation get { 121 } }
    /// A note-off of every instrument.
    public static var allNotesOff: Int { @_noLocks @_noAllocation get { 123 } }
    /// What a condition (`ControllerRange.controller`) may read besides controllers: the pitch
    /// bend (−1…1), the channel pressure and the polyphonic pressure of the instrument's own
    /// MIDI note (0…1).
    public static var pitchBend: Int { @_noLocks @_noAllocation get { 512 } }
    public static var channelPressure: Int { @_noLocks @_noAllocation get { 513 } }
    public static var polyPressure: Int { @_noLocks @_noAllocation get { 514 } }
}

/// A controller's value within a range, both ends included; values are normalized to 0…1 (a
/// 7-bit value v is v / 127, computed in `Float` as the engine computes it).
public struct ControllerRange: Equatable, Sendable {
    public var controller: Int
    public var low: Float
    public var high: Float

    public init(controller: Int, low: Float, high: Float) {
        self.controller = controller
        self.low = low
        self.high = high
    }

    /// The range of 7-bit values `low…high` (SFZ's `locc`/`hicc`).
    public init(controller: Int, values: ClosedRange<Int>) {
        self.init(controller: controller, low: Float(values.lowerBound) / 127, high: Float(values.upperBound) / 127)
    }
}

/// What a controller modulates in the voices of an instrument.
public enum ModulationTarget: UInt8, Equatable, Sendable {
    /// A factor on the level: `depth × curve(value)`; several multiply (SFZ's `amplitude_oncc`,
    /// depth 1 for 100 %).
    case amplitude
    /// Decibels added to the level: `depth × curve(value)` (SFZ's `volume_oncc`).
    case volume
    /// Added to the pan position (−1…1): `depth × curve(value)` (SFZ's `pan_oncc`, depth 1 for
    /// 100 %).
    case pan
    /// Cents added to the pitch: `depth × curve(value)` (SFZ's `tune_oncc`/`pitch_oncc`).
    case pitch
    /// Cents added to the filter's cutoff: `depth × curve(value)` (SFZ's `cutoff_oncc`).
    case cutoff
    /// Decibels added to the filter's resonance: `depth × curve(value)` (SFZ's `resonance_oncc`).
    case resonance
}

/// One controller's modulation of an instrument's voices: applied when a voice starts, and on
/// the frame the controller changes to every voice of the instrument still sounding.
public struct ControllerModulation: Equatable, Sendable {
    public var controller: Int
    public var target: ModulationTarget
    public var depth: Float
    /// 128 points over the values 0…1 (an SFZ curve), read with straight lines between them;
    /// nil: the value itself.
    public var curve: [Float]?
    /// Milliseconds over which a sounding voice's level glides to what a change gives it (SFZ's
    /// `*_smoothcc`); the instrument's voices glide over the longest of its modulations' and
    /// at least 1 ms (`InstrumentDefinition.steerFrames`).
    public var smoothing: Float

    public init(controller: Int, target: ModulationTarget, depth: Float, curve: [Float]? = nil, smoothing: Float = 0) {
        precondition(curve.map { $0.count == 128 } ?? true, "a controller curve has 128 points")
        self.controller = controller
        self.target = target
        self.depth = depth
        self.curve = curve
        self.smoothing = smoothing
    }

    /// SFZ's predefined curves (`*_curveccN=K`): 0 the value, 1 bipolar (−1…1), 2 inverted, 3
    /// inverted bipolar, 4 the square, 5 the square root, 6 the square root of the inverse;
    /// nil for another number.
    public static func sfzCurve(_ index: Int) -> [Float]? {
        let x = (0..<128).map { Float($0) / 127 }
        switch index {
        case 0: return x
        case 1: return x.map { 2 * $0 - 1 }
        case 2: return x.map { 1 - $0 }
        case 3: return x.map { 1 - 2 * $0 }
        case 4: return x.map { $0 * $0 }
        case 5: return x.map { $0.squareRoot() }
        case 6: return x.map { (1 - $0).squareRoot() }
        default: return nil
        }
    }
}

/// A kit's controller setup: the values its controllers start with (and return to on a reset),
/// and the key switch in force before any is pressed.
public struct ControllerSetup: Equatable, Sendable {
    /// Controller number → value (0…1); the rest start at 0, except volume (100/127), pan (64/127)
    /// and expression (1), as General MIDI players and sfizz start them.
    public var defaults: [Int: Float]
    /// The key switch in force at the start (SFZ's `sw_default`); nil: none.
    public var keySwitch: Int?

    public init(defaults: [Int: Float] = [:], keySwitch: Int? = nil) {
        self.defaults = defaults
        self.keySwitch = keySwitch
    }

    /// Every controller's starting value (`Controller.count` values).
    public var values: [Float] {
        var values = [Float](repeating: 0, count: Controller.count)
        values[Controller.volume] = 100 / 127
        values[Controller.pan] = 64 / 127
        values[Controller.expression] = 1
        for (number, value) in defaults where (0..<Controller.count).contains(number) {
            values[number] = value.isFinite ? min(1, max(0, value)) : 0
        }
        return values
    }
}

/// What the render thread holds of the MIDI channels: every controller's value per channel
/// (16 × `Controller.count`), pitch bend and channel pressure per channel, polyphonic pressure
/// per channel and key, and the key switch in force. Allocated once by the engine.
struct ControllerState {
    static var channels: Int { @_noLocks @_noAllocation get { 16 } }
    let values: UnsafeMutablePointer<Float>
    /// −1…1 per channel.
    let bend: UnsafeMutablePointer<Float>
    let channelPressure: UnsafeMutablePointer<Float>
    let polyPressure: UnsafeMutablePointer<Float>
    /// [0]: the key switch in force (−1: none); [1]: the last note-on's key, [2]: the one before
    /// it (−1: none; kept when some instrument has a `previousKey`).
    let keySwitch: UnsafeMutablePointer<Int32>
    /// Per key: held down (its note-on came, its note-off not yet; kept for the `keyDown`/`keyUp`
    /// keys).
    let keysDown: UnsafeMutablePointer<Bool>
    /// Per key: the frame of its latest note-on (`Frame.min`: none on this clock; kept for the
    /// keys of instruments whose level falls while held, `heldDecay`).
    let keyDownAt: UnsafeMutablePointer<Frame>
    /// Per channel and controller (and the bend, the channel pressure and the polyphonic
    /// pressure of any key: `Controller.pitchBend` …), the latest frame a message changed it on;
    /// [`channels` × `perChannel`], the key switch's last (`Frame.min`: none yet).
    let changedAt: UnsafeMutablePointer<Frame>
    /// [0]: the channels whose voices wait to be steered, a bit each (see `Engine.flushSteering`).
    let pendingSteer: UnsafeMutablePointer<UInt32>
    /// [0]: the number of the last steering (`SteerCache.stamp`).
    let steerStamp: UnsafeMutablePointer<UInt32>
    static var perChannel: Int { @_noLocks @_noAllocation get { Controller.count + 3 } }
    static var changeSlots: Int { @_noLocks @_noAllocation get { channels * perChannel + 1 } }

    static func allocate() -> ControllerState {
        let state = ControllerState(values: .allocate(capacity: channels * Controller.count), bend: .allocate(capacity: channels),
                                    channelPressure: .allocate(capacity: channels), polyPressure: .allocate(capacity: channels * 128),
                                    keySwitch: .allocate(capacity: 3), keysDown: .allocate(capacity: 128), keyDownAt: .allocate(capacity: 128),
                                    changedAt: .allocate(capacity: changeSlots),
                                    pendingSteer: .allocate(capacity: 1), steerStamp: .allocate(capacity: 1))
        state.values.initialize(repeating: 0, count: channels * Controller.count)
        state.bend.initialize(repeating: 0, count: channels)
        state.channelPressure.initialize(repeating: 0, count: channels)
        state.polyPressure.initialize(repeating: 0, count: channels * 128)
        state.keySwitch.initialize(repeating: -1, count: 3)
        state.keysDown.initialize(repeating: false, count: 128)
        state.keyDownAt.initialize(repeating: .min, count: 128)
        state.changedAt.initialize(repeating: .min, count: changeSlots)
        state.pendingSteer.initialize(to: 0)
        state.steerStamp.initialize(to: 0)
        return state
    }

    func deallocate() {
        values.deallocate()
        bend.deallocate()
        channelPressure.deallocate()
        polyPressure.deallocate()
        keySwitch.deallocate()
        keysDown.deallocate()
        keyDownAt.deallocate()
        changedAt.deallocate()
        pendingSteer.deallocate()
        steerStamp.deallocate()
    }

    /// Channel `channel`'s controllers back to `defaults` (`Controller.count` values), its bend
    /// and pressures to 0. Real-time safe.
    @_noLocks @_noAllocation
    func reset(channel: Int, to defaults: UnsafeMutablePointer<Float>) {
        let row = values + channel * Controller.count
        for k in 0..<Controller.count { row[k] = defaults[k] }
        bend[channel] = 0
        channelPressure[channel] = 0
        for k in 0..<128 { polyPressure[channel * 128 + k] = 0 }
    }

    /// Notes that controller `controller` (or `Controller.pitchBend` …; −1: the key switch) of
    /// `channel` changed on frame `due`.
    @_noLocks @_noAllocation @inline(__always)
    func changed(_ controller: Int, channel: Int, at due: Frame) {
        let slot = controller < 0 ? ControllerState.changeSlots - 1 : channel * ControllerState.perChannel + controller
        if due > changedAt[slot] { changedAt[slot] = due }
    }

    /// The latest frame controller `controller` of `channel` changed on (as `changed`).
    @_noLocks @_noAllocation @inline(__always)
    func lastChange(_ controller: Int, channel: Int) -> Frame {
        changedAt[controller < 0 ? ControllerState.changeSlots - 1 : channel * ControllerState.perChannel + controller]
    }

    @_noLocks @_noAllocation @inline(__always)
    func value(_ controller: Int, channel: Int) -> Float {
        values[channel * Controller.count + controller]
    }

    /// What a condition reads: controller `controller`, or the bend or a pressure (see
    /// `Controller.pitchBend`) of `channel`, the polyphonic one of key `note`.
    @_noLocks @_noAllocation @inline(__always)
    func conditionValue(_ controller: Int, channel: Int, note: Int) -> Float {
        if controller < Controller.count { return values[channel * Controller.count + controller] }
        if controller == Controller.pitchBend { return bend[channel] }
        if controller == Controller.channelPressure { return channelPressure[channel] }
        return note >= 0 ? polyPressure[channel * 128 + (note & 127)] : 0
    }
}

/// A curve read at `value` (0…1): straight lines between its 128 points. Real-time safe.
@_noLocks @_noAllocation @inline(__always)
func readCurve(_ curve: UnsafeMutablePointer<Float>, at value: Float) -> Float {
    let x = min(127, max(0, value * 127))
    let i = Int(x)
    let f = x - Float(i)
    // A point itself (every 7-bit value) is read exactly.
    if f == 0 { return curve[i] }
    return curve[i] + (curve[i + 1] - curve[i]) * f
}

/// Decibels as a factor. Real-time safe: libm's exp neither locks nor allocates, but the checker
/// cannot see into C.
@_semantics("no_performance_analysis")
func decibelFactor(_ db: Float) -> Float {
    expf(db * 0.11512925)
}

/// Cents as a playback rate. Real-time safe (libm's exp2; see `decibelFactor`).
@_semantics("no_performance_analysis")
func centsRate(_ cents: Float) -> Double {
    exp2(Double(cents) / 1200)
}
