/// Left/right factors for one pan position, precomputed on the control thread for both kinds of
/// source, so that the render thread never evaluates a pan law.
public struct PanGains: BitwiseCopyable, Equatable, Sendable {
    public var monoLeft: Float, monoRight: Float
    public var stereoLeft: Float, stereoRight: Float

    /// The factors for `pan` in -1…1 (see `PanLaw`); with `law: .balance` mono sources follow
    /// the stereo (balance) law too, with `.constantPowerStereo` stereo ones the mono law.
    /// Real-time safe.
    @_noLocks @_noAllocation
    public init(pan: Float, law: PanLawKind = .constantPower) {
        switch law {
        case .balance:
            (monoLeft, monoRight) = PanLaw.stereo(pan: pan)
            (stereoLeft, stereoRight) = PanLaw.stereo(pan: pan)
        case .constantPower:
            (monoLeft, monoRight) = PanLaw.mono(pan: pan)
            (stereoLeft, stereoRight) = PanLaw.stereo(pan: pan)
        case .constantPowerStereo:
            (monoLeft, monoRight) = PanLaw.mono(pan: pan)
            (stereoLeft, stereoRight) = PanLaw.mono(pan: pan)
        }
    }

    /// Explicit factors for a pan of 0: all-stored values, so real-time code can use them.
    @_noLocks @_noAllocation
    public init(monoLeft: Float, monoRight: Float, stereoLeft: Float, stereoRight: Float) {
        self.monoLeft = monoLeft
        self.monoRight = monoRight
        self.stereoLeft = stereoLeft
        self.stereoRight = stereoRight
    }

    /// Centre: -3 dB each side for mono (cos π/4), unity for stereo. Computed, not stored: a
    /// stored static is initialized lazily, through a lock.
    public static var center: PanGains {
        @_noLocks @_noAllocation get {
            PanGains(monoLeft: 0.70710677, monoRight: 0.70710677, stereoLeft: 1, stereoRight: 1)
        }
    }
}

/// An instruction from the control thread to the render thread, applied on an exact frame.
///
/// Every command carries the device-clock frame it takes effect on (`Command.immediately` for
/// "as soon as the render thread sees it"). The render thread applies it at that frame inside
/// whatever period contains it, so starts, stops, seeks and fades are all sample-exact.
/// Plain data: copying it never allocates or retains.
public struct Command: BitwiseCopyable, Sendable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// Start `sound` on `player` from `position`, replacing whatever the player was playing.
        case start
        /// Stop the player (with a fade of `fadeFrames` when non-zero). The position is kept.
        case stop
        /// Ramp the player's gain to `level` over `fadeFrames` (0 = at once).
        case setGain
        /// Set the player's pan.
        case setPan
        /// Set how many more times the player's sound repeats (-1 = forever).
        case setLoops
        /// Hold the voice where it is; `resume` continues from the same frame.
        case pause
        case resume
        /// Move the voice to `position` inside its sound.
        case seek
        /// Stop every player at once.
        case stopAll
        /// Set the playback speed of the player to `rate` (0.25…4; pitch follows).
        case setRate
        /// Turn the player's meters on (`loops` = 1) or off (0).
        case setMetering
        /// Stop every voice and forget every pending command (after a server change). Acts when
        /// the render thread receives it, whatever its frame.
        case reset
        /// Forget the player's commands sent before this one that are still waiting for their
        /// frame, from frame `position` on (`Frame.min`: all of them; see
        /// `Command.cancelPending(player:from:)`). Acts when the render thread receives it,
        /// whatever its frame. Instrument triggers are never removed.
        case cancelPending
        /// Trigger instrument `player` (an index into the engine's instruments) with velocity
        /// `level` (1…127): the render thread picks the layer, sample and voice.
        case trigger
        /// Send a MIDI message of `loops` (1…3) bytes, `tag`'s low bytes (first byte lowest), on
        /// the engine's MIDI output on the command's frame (see `Engine.midiOutputCount`). A
        /// message due in frames the device skipped, or that reaches the render thread after its
        /// frame, is not sent (`Engine.lateMIDICount`): a gap, never a shift. `player` only
        /// groups messages for `cancelPending` (no voice is involved).
        case midi
        /// Set instrument `player`'s gain (`level`, linear; when `loops` has bit 0) and pan
        /// (`pan`; when `loops` has bit 1) for its triggers from the command's frame on. What
        /// already sounds keeps its own (a drum machine's mixer, as Hydrogen's instrument volume
        /// applies to the notes that follow).
        case setInstrumentMix
        /// Swap in the instruments `Engine.replaceInstruments` prepared, on the command's frame.
        case replaceInstruments
        /// Confirm, once nothing refers to sound `sound` any more, request `position` (see
        /// `Engine.requestUnreferenced`). Acts when the render thread receives it.
        case confirmUnreferenced
        /// A note-off for instrument `player`: its sounding voices whose envelope follows
        /// note-offs (`AmplitudeEnvelope.followsNoteOff`) begin their release on the command's
        /// frame. Instruments without an envelope ignore it.
        case release
        /// Route the player to output `loops` (0: the main mix; see
        /// `Engine.render(frameCount:periodStart:outputs:outputCount:)`) from the command's frame
        /// on, for what it plays now and later. A declick tail stays on the output it began on.
        case setOutput
        /// A MIDI channel message other than a note on MIDI channel `player` (0…15): controller
        /// `position` (0 ..< `Controller.count`) to `level` (0…1), or one of
        /// `Command.ChannelMessage`'s (pitch bend, pressure, a key switch note, a program change).
        /// See `Command.controller(channel:number:value:at:)`.
        case controller
    }

    /// What a `.controller` command's `position` names besides a controller number.
    public enum ChannelMessage {
        /// Pitch bend, `level` 0…1 for −1…1 (`Command.bendLevel`: 8192 of 0…16383 is exactly 0.5).
        public static var pitchBend: Int64 { @_noLocks @_noAllocation get { 512 } }
        /// Channel pressure (aftertouch), `level` 0…1.
        public static var channelPressure: Int64 { @_noLocks @_noAllocation get { 513 } }
        /// Polyphonic pressure on note `sound`, `level` 0…1.
        public static var polyPressure: Int64 { @_noLocks @_noAllocation get { 514 } }
        /// A note-on of note `sound`, as conditions read it (a key switch takes effect; the key is
        /// down; it is the last note played), sent before the note's triggers.
        public static var noteOn: Int64 { @_noLocks @_noAllocation get { 515 } }
        /// A program change to `sound` (counted: `Engine.programChangeCount`).
        public static var programChange: Int64 { @_noLocks @_noAllocation get { 516 } }
        /// A note-off of note `sound`, as conditions read it (the key is up).
        public static var noteOff: Int64 { @_noLocks @_noAllocation get { 517 } }
    }

    /// The frame meaning "as soon as possible": never reported as late.
    public static var immediately: Frame {
        @_noLocks @_noAllocation get { .min }
    }

    public var kind: Kind
    public var player: Int32
    /// Device-clock frame the command takes effect on.
    public var frame: Frame
    public var sound: Int32 = -1
    /// A frame inside the sound (start and seek).
    public var position: Frame = 0
    /// Extra repeats: 0 = play once, N = N more times, -1 = forever.
    public var loops: Int32 = 0
    /// Linear gain (start and setGain).
    public var level: Float = 1
    public var pan: PanGains = .center
    /// Length of a gain ramp or stop fade, in frames. On a start: when the player is still
    /// sounding, its old voice fades out over this many frames (a declick) while the new one
    /// starts on its exact frame.
    public var fadeFrames: Int32 = 0
    /// Playback speed (setRate, and start).
    public var rate: Double = 1
    /// A value the caller chooses, echoed in the events this command causes.
    public var tag: UInt32 = 0
    /// The device clock the command's frame was made on (`Engine.clockEpoch`, stamped by
    /// `Engine.send`): a timed command of an older clock is dropped, never played on a new one.
    public var epoch: UInt32 = 0

    @_noLocks @_noAllocation
    public init(kind: Kind, player: Int32, frame: Frame) {
        self.kind = kind
        self.player = player
        self.frame = frame
    }

    /// Starts `sound` on `player` at device frame `frame`.
    public static func start(player: Int, sound: SoundID, at frame: Frame, from position: Frame = 0,
                             loops: Int = 0, gain: Gain = .unity, pan: PanGains = .center, rate: Double = 1,
                             declickFrames: Int = 0, tag: UInt32 = 0) -> Command {
        var c = Command(kind: .start, player: Int32(player), frame: frame)
        c.rate = rate
        c.fadeFrames = Int32(clamping: declickFrames)
        c.sound = sound.rawValue
        c.position = position
        c.loops = Int32(clamping: loops)
        c.level = gain.linear
        c.pan = pan
        c.tag = tag
        return c
    }

    /// Forgets the player's commands still waiting whose frame is `from` or later (default: all
    /// of them): rescheduling, and a pause that must keep what starts before it.
    public static func cancelPending(player: Int, from frame: Frame = .min) -> Command {
        var c = Command(kind: .cancelPending, player: Int32(player), frame: immediately)
        c.cancelFrom = frame
        return c
    }

    /// Forgets instrument `instrument`'s triggers still waiting whose frame is `from` or later
    /// (a sequencer re-anchored on another grid).
    public static func cancelPendingTriggers(instrument: Int, from frame: Frame = .min) -> Command {
        var c = cancelPending(player: instrument, from: frame)
        c.cancelsTriggers = true
        return c
    }

    /// Stops `player` at `frame`, fading out over `fadeFrames`.
    public static func stop(player: Int, at frame: Frame = immediately, fadeFrames: Int = 0) -> Command {
        var c = Command(kind: .stop, player: Int32(player), frame: frame)
        c.fadeFrames = Int32(clamping: fadeFrames)
        return c
    }

    /// Ramps `player`'s gain to `gain` over `fadeFrames`, starting at `frame`.
    public static func setGain(player: Int, _ gain: Gain, fadeFrames: Int = 0, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .setGain, player: Int32(player), frame: frame)
        c.level = gain.linear
        c.fadeFrames = Int32(clamping: fadeFrames)
        return c
    }

    /// Sets `player`'s pan at `frame`.
    public static func setPan(player: Int, _ pan: Float, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .setPan, player: Int32(player), frame: frame)
        c.pan = PanGains(pan: pan)
        return c
    }

    /// Sets `player`'s remaining repeats at `frame`.
    public static func setLoops(player: Int, _ loops: Int, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .setLoops, player: Int32(player), frame: frame)
        c.loops = Int32(clamping: loops)
        return c
    }

    /// The MIDI message `bytes` (its first `length` bytes, 1…3) on `frame`, e.g. a MIDI clock
    /// tick `.midi([0xF8], at: f)` or a song position pointer `.midi([0xF2, lsb, msb], at: f)`.
    /// `player` only groups messages, for `cancelPending(player:from:)`.
    public static func midi(_ bytes: [UInt8], player: Int = 0, at frame: Frame) -> Command {
        var c = Command(kind: .midi, player: Int32(player), frame: frame)
        var packed: UInt32 = 0
        for (i, byte) in bytes.prefix(3).enumerated() { packed |= UInt32(byte) << (8 * UInt32(i)) }
        c.midiBytes = packed
        c.midiLength = Int32(clamping: bytes.count)
        return c
    }

    /// Instrument `instrument`'s gain and pan (nil: unchanged) for its triggers from `frame` on.
    public static func setInstrumentMix(instrument: Int, gain: Gain?, pan: PanGains?, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .setInstrumentMix, player: Int32(instrument), frame: frame)
        if let gain { c.level = gain.linear; c.setsInstrumentLevel = true }
        if let pan { c.pan = pan; c.setsInstrumentPan = true }
        return c
    }

    /// A note-off for `instrument` at `frame` (see `Kind.release`).
    public static func release(instrument: Int, at frame: Frame) -> Command {
        Command(kind: .release, player: Int32(instrument), frame: frame)
    }

    /// Routes `player` to `output` (0: the main mix; 1 ..< `Engine.maxOutputCount`).
    public static func setOutput(player: Int, _ output: Int, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .setOutput, player: Int32(player), frame: frame)
        c.outputIndex = Int32(clamping: output)
        return c
    }

    /// Triggers instrument `instrument` with MIDI-style `velocity` (1…127) at `frame`, as a note
    /// of MIDI channel `channel` (1…16).
    public static func trigger(instrument: Int, velocity: Int, channel: Int = 1, at frame: Frame) -> Command {
        var c = Command(kind: .trigger, player: Int32(instrument), frame: frame)
        c.velocity = Float(min(127, max(0, velocity)))
        c.channel = Int32(min(16, max(1, channel)) - 1)
        return c
    }

    /// Sets controller `number` (0 ..< `Controller.count`) of MIDI channel `channel` (1…16) to
    /// `value` (0…1) at `frame`.
    public static func controller(channel: Int, number: Int, value: Float, at frame: Frame) -> Command {
        var c = Command(kind: .controller, player: Int32(min(16, max(1, channel)) - 1), frame: frame)
        c.position = Int64(min(Controller.count - 1, max(0, number)))
        c.level = value.isNaN ? value : min(1, max(0, value))
        c.sound = 0
        return c
    }

    /// A channel message at `frame` (`ChannelMessage`), `note` where it names one.
    public static func channelMessage(_ message: Int64, channel: Int, value: Float, note: Int = 0, at frame: Frame) -> Command {
        var c = controller(channel: channel, number: 0, value: value, at: frame)
        c.position = message
        c.sound = Int32(min(127, max(0, note)))
        return c
    }

    /// A 14-bit pitch bend (0…16383, 8192 the centre) as a `.controller` command's level: 0…1,
    /// the centre exactly 0.5 (−1…0 below it in steps of 1/8192, 0…1 above in steps of 1/8191).
    @_noLocks @_noAllocation
    public static func bendLevel(_ raw: Int) -> Float {
        let r = min(16383, max(0, raw)) - 8192
        let bend = r >= 0 ? Float(r) / 8191 : Float(r) / 8192
        return (bend + 1) / 2
    }

    /// The command for one MIDI channel message (`bytes`, a status byte and its data) other than
    /// a note-on or note-off, at `frame`; nil for anything else.
    public static func channelMessage(_ bytes: [UInt8], at frame: Frame) -> Command? {
        guard let status = bytes.first, status >= 0x80, status < 0xF0 else { return nil }
        let channel = Int(status & 0x0F) + 1
        let kind = status & 0xF0
        let needed = kind == 0xC0 || kind == 0xD0 ? 2 : 3
        guard bytes.count >= needed, bytes[1..<needed].allSatisfy({ $0 < 0x80 }) else { return nil }
        switch kind {
        case 0xB0: return controller(channel: channel, number: Int(bytes[1]), value: Float(bytes[2]) / 127, at: frame)
        case 0xE0: return channelMessage(ChannelMessage.pitchBend, channel: channel, value: bendLevel(Int(bytes[2]) << 7 | Int(bytes[1])), at: frame)
        case 0xD0: return channelMessage(ChannelMessage.channelPressure, channel: channel, value: Float(bytes[1]) / 127, at: frame)
        case 0xA0: return channelMessage(ChannelMessage.polyPressure, channel: channel, value: Float(bytes[2]) / 127, note: Int(bytes[1]), at: frame)
        case 0xC0: return channelMessage(ChannelMessage.programChange, channel: channel, value: 0, note: Int(bytes[1]), at: frame)
        default: return nil
        }
    }

    /// Sets `player`'s playback speed at `frame` (clamped to 0.25…4; NaN is kept, and refused
    /// by `Engine.send`).
    public static func setRate(player: Int, _ rate: Double, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .setRate, player: Int32(player), frame: frame)
        c.rate = rate.isNaN ? rate : min(4, max(0.25, rate))
        return c
    }

    /// Turns `player`'s meters on or off.
    public static func setMetering(player: Int, _ enabled: Bool) -> Command {
        var c = Command(kind: .setMetering, player: Int32(player), frame: immediately)
        c.meteringOn = enabled
        return c
    }

    /// Moves `player` to `position` in its sound at `frame`.
    public static func seek(player: Int, to position: Frame, at frame: Frame = immediately) -> Command {
        var c = Command(kind: .seek, player: Int32(player), frame: frame)
        c.position = position
        return c
    }
}

extension Command {
    /// The playback speeds a voice accepts.
    public static let rateRange: ClosedRange<Double> = 0.25...4

    /// The largest magnitude of a command's frame and position: 2^53 frames.
    public static let frameLimit: Frame = 1 << 53

    /// Whether every value the render thread will use is in range: a finite rate in
    /// `rateRange` (start, setRate), a finite non-negative gain (start, setGain, trigger), finite
    /// pan factors, non-negative fade lengths and positions. Checked by `Engine.send` on the
    /// control thread.
    public var isValid: Bool {
        // Frames and positions beyond ±2^53 (over 5,900 years at 48 kHz) are refused: the render
        // thread adds and subtracts them, and must never trap on overflow (a late seek to
        // Frame.max, a start at Frame.min + 1). `immediately` (Frame.min) is a frame of its own,
        // and so is a cancel's "from every frame" (Frame.min).
        let limit = Command.frameLimit
        if frame != Command.immediately && (frame < -limit || frame > limit) { return false }
        if !(kind == .cancelPending && position == .min) && (position < -limit || position > limit) { return false }
        // A cancel's position is a frame threshold on the device clock (any value within the limit).
        if fadeFrames < 0 || (position < 0 && kind != .cancelPending) || loops < -1 { return false }
        if !(level.isFinite && level >= 0) { return false }
        if !(pan.monoLeft.isFinite && pan.monoRight.isFinite && pan.stereoLeft.isFinite && pan.stereoRight.isFinite) { return false }
        switch kind {
        case .start, .setRate: return rate.isFinite && Command.rateRange.contains(rate)
        case .midi: return (1...3).contains(midiLength)
        case .setOutput: return outputIndex >= 0 && Int(outputIndex) < Engine.maxOutputCount
        case .controller:
            return player >= 0 && player < 16 && level <= 1 && position <= Command.ChannelMessage.noteOff && sound >= 0 && sound < 128
        case .trigger: return loops >= 0 && loops < 16
        default: return true
        }
    }
}

/// The fields some kinds of command use under another name: `Command` stays one fixed-size
/// record (the queue's element), and every kind reads its payload through these.
extension Command {
    /// The frame the command acts as of when applied on `frame`: its own, or `frame` for an
    /// immediate one.
    @_noLocks @_noAllocation @inline(__always)
    public func due(at frame: Frame) -> Frame { self.frame == Command.immediately ? frame : self.frame }

    /// `.trigger`, `.release`: the MIDI channel (0…15), in `loops`.
    public var channel: Int32 {
        @_noLocks @_noAllocation @inline(__always) get { loops }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue }
    }

    /// `.trigger`, `.release`, `.setInstrumentMix`, a cancel of triggers: the instrument (an index
    /// into the engine's instruments), in `player`.
    public var instrument: Int32 {
        @_noLocks @_noAllocation @inline(__always) get { player }
        @_noLocks @_noAllocation @inline(__always) set { player = newValue }
    }

    /// `.trigger`: the MIDI velocity 1…127, in `level`.
    public var velocity: Float {
        @_noLocks @_noAllocation @inline(__always) get { level }
        @_noLocks @_noAllocation @inline(__always) set { level = newValue }
    }

    /// `.midi`: the message's length in bytes (1…3), in `loops`.
    public var midiLength: Int32 {
        @_noLocks @_noAllocation @inline(__always) get { loops }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue }
    }

    /// `.midi`: the message's bytes, first byte lowest, in `tag`.
    public var midiBytes: UInt32 {
        @_noLocks @_noAllocation @inline(__always) get { tag }
        @_noLocks @_noAllocation @inline(__always) set { tag = newValue }
    }

    /// `.setOutput`: the output (0: the main mix), in `loops`.
    public var outputIndex: Int32 {
        @_noLocks @_noAllocation @inline(__always) get { loops }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue }
    }

    /// `.setMetering`: meters on or off, in `loops`.
    public var meteringOn: Bool {
        @_noLocks @_noAllocation @inline(__always) get { loops != 0 }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue ? 1 : 0 }
    }

    /// `.setInstrumentMix`: whether it sets the instrument's level (`level`), bit 0 of `loops`.
    public var setsInstrumentLevel: Bool {
        @_noLocks @_noAllocation @inline(__always) get { loops & 1 != 0 }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue ? loops | 1 : loops & ~1 }
    }

    /// `.setInstrumentMix`: whether it sets the instrument's pan (`pan`), bit 1 of `loops`.
    public var setsInstrumentPan: Bool {
        @_noLocks @_noAllocation @inline(__always) get { loops & 2 != 0 }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue ? loops | 2 : loops & ~2 }
    }

    /// `.cancelPending`: whether it cancels instrument `instrument`'s triggers (1 in `loops`)
    /// rather than player `player`'s commands.
    public var cancelsTriggers: Bool {
        @_noLocks @_noAllocation @inline(__always) get { loops == 1 }
        @_noLocks @_noAllocation @inline(__always) set { loops = newValue ? 1 : 0 }
    }

    /// `.cancelPending`: the first frame it cancels from, in `position`.
    public var cancelFrom: Frame {
        @_noLocks @_noAllocation @inline(__always) get { position }
        @_noLocks @_noAllocation @inline(__always) set { position = newValue }
    }

    /// `.confirmUnreferenced`: the request's number, in `position`.
    public var request: Int64 {
        @_noLocks @_noAllocation @inline(__always) get { position }
        @_noLocks @_noAllocation @inline(__always) set { position = newValue }
    }
}

/// A MIDI message the engine sends on `frame` (see `Command.Kind.midi`).
public struct MIDIMessage: BitwiseCopyable, Sendable, Equatable {
    public var frame: Frame
    /// The message's bytes, first byte lowest.
    public var bytes: UInt32
    /// 1…3.
    public var length: Int32

    @_noLocks @_noAllocation
    public init(frame: Frame, bytes: UInt32, length: Int32) {
        self.frame = frame
        self.bytes = bytes
        self.length = length
    }

    /// The bytes as an array (control thread, tests).
    public var byteArray: [UInt8] { (0..<Int(length)).map { UInt8(truncatingIfNeeded: bytes >> (8 * UInt32($0))) } }
}

/// Something the render thread reports back to the control thread.
public struct Event: BitwiseCopyable, Sendable, Equatable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// A voice started; `value` is the command's tag.
        case started
        /// A voice wrapped to its first frame; `value` is the number of repeats left (-1 = forever).
        case looped
        /// A voice played its last frame; `frame` is the first frame after it.
        case finished
        /// A voice was stopped by a command.
        case stopped
        /// A start whose frame had passed played at once; `value` is how many frames late it was.
        case lateStart
        /// A command was dropped because the render thread's schedule was full; `value` is its frame.
        case commandDropped
        /// A timed command made on an older device clock (before a reconnect) was dropped;
        /// `value` is its frame, `tag` its tag.
        case staleCommand
    }

    public var kind: Kind
    public var player: Int32
    /// The device-clock frame where it happened.
    public var frame: Frame
    public var value: Int64
    /// The tag of the start command that began the voice this event is about.
    public var tag: UInt32

    @_noLocks @_noAllocation
    public init(kind: Kind, player: Int32, frame: Frame, value: Int64 = 0, tag: UInt32 = 0) {
        self.kind = kind
        self.player = player
        self.frame = frame
        self.value = value
        self.tag = tag
    }
}

/// The index of a sound registered with an `Engine`.
public struct SoundID: Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
}
