/// A sound's samples as the render thread sees them: plain pointers into memory a `Sound` owns.
struct SoundSlot {
    var left: UnsafeMutablePointer<Float>
    var right: UnsafeMutablePointer<Float>
    var frames: Int64
    var isStereo: Bool
    /// Set for a streamed sound: the voice reads the ring instead of `left`/`right`.
    var stream: UnsafeMutablePointer<StreamRingState>?
    /// The largest |sample| (`Sound.peak`); infinity for a stream (its samples are not known).
    var peak: Float = .infinity
    /// Where a looping voice goes on from after the last frame (`Sound.loopStart`; 0 for a stream).
    var loopStart: Int64 = 0
    /// The sound a voice of an instrument that loops until its release goes on in once released
    /// (the whole sample, of which this sound is the start: SFZ's `loop_sustain`); −1: none.
    var continuation: Int32 = -1
    /// For a sound whose tail streams from disk (`Engine.register(_:tail:)`): its source (−1:
    /// none, the sound is whole in memory), the whole sound's frames and largest |sample|. Its
    /// `frames` are its head's; its memory holds one frame more, the first of the tail, which
    /// interpolation across the join reads.
    var tail: Int32 = -1
    var tailFrames: Int64 = 0
    var tailPeak: Float = 0
    /// For a sound whose tail streams: its loop repeats in the tail (`TailSource.loopStart`),
    /// which is endless (`tailFrames`); its voices play straight through, never wrapping.
    var tailRepeats = false
    /// For a tail buffer's slot while its tail is partly read: the buffer (−1: the slot's
    /// `frames` are the sound's end). Its `frames` end one frame before the last one read (which
    /// interpolation across the end reads); a voice that reaches them goes on if more was read by
    /// then (`Engine.extendTail`).
    var tailBuffer: Int32 = -1
    /// For a tail buffer's slot: the sound frame its memory begins at (the head's end; nothing
    /// before it is there to read), also its `loopStart`. 0 for every other slot.
    var tailStart: Int64 = 0

    var isStreamed: Bool {
        @_noLocks @_noAllocation @inline(__always) get {
            if case .some = stream { return true }
            return false
        }
    }
}

/// The state of one player's voice. Owned and touched only by the render thread.
///
/// Laid out on whole 64-byte cache lines (`Engine` aligns the arrays to 64 bytes): the first line
/// holds everything the common case of mixing reads and writes every period (a copy of the
/// sound's pointers and length, the pan resolved for the sound's channel count, the flags that
/// send a voice down the full path), so that a plain voice costs one line besides its samples.
/// The rest is read only by ramps, varispeed, streams, meters, events and voice stealing.
/// Keep the first line first and the size a multiple of 64 (a test checks both).
struct Voice: BitwiseCopyable {
    // MARK: First line: read or written by every period's mixing.
    /// Next frame to play inside the sound.
    var position: Int64 = 0
    /// The sound's length and samples (copies of its `SoundSlot`; `left == right` for mono).
    var frames: Int64 = 0
    var left: UnsafeMutablePointer<Float>? = nil
    var right: UnsafeMutablePointer<Float>? = nil
    /// Current linear gain.
    var level: Float = 1
    /// The pan's factors for the sound: its mono or its stereo ones (see `setPan`).
    var panLeft: Float = 0.70710677
    var panRight: Float = 0.70710677
    var sound: Int32 = -1
    var rampFramesLeft: Int32 = 0
    var isActive = false
    var isPaused = false
    /// What sends the voice down the general path (`Engine.mixVoice`), never a grouped or
    /// single-voice one: `isMetered` (bit 0), `isFiltered` (bit 1).
    var generalPath: UInt8 = 0
    /// When set, the voice stops as soon as its gain ramp reaches its end (a stop with a fade).
    var stopsAfterRamp = false
    var isStereo = false
    var isStreamed = false
    /// `rate != 1`.
    var isVarispeed = false
    /// The output it is mixed into (0: the main mix; one the render does not have: the main mix).
    var output: UInt8 = 0
    /// A bound on what the voice adds to a sample, per unit of level (`Voice.peakGain`).
    var peakGain: Float = .infinity

    // MARK: The other lines.
    /// Playback speed (1 = as recorded); pitch follows speed.
    var rate: Double = 1
    /// `rate` in 32.32 fixed point (`setRate`): the phase moves by exactly this much per output
    /// frame, so where a voice is after n frames is one product (`Mixing.skipVarispeed`), the
    /// same bits as n steps.
    var rateStep: UInt64 = 1 << 32
    var meterSumLeft: Double = 0
    var meterSumRight: Double = 0
    var meterFrames: Int64 = 0
    var meterGeneration: Int64 = 0
    /// Device frame it started on (voice stealing takes the oldest).
    var startedAt: Frame = 0
    /// Repeats left after the current pass (-1 = forever).
    var loopsRemaining: Int32 = 0
    /// The sound's `peak`.
    var peak: Float = .infinity
    /// For a stream, its ring's peak when this voice last read it (`Mixing.StreamChunk.peak`):
    /// the stream's samples are not known when it starts.
    var streamPeak: Float = 0
    /// For a stream: this voice's ring offset after its last short-path block (see `streamRead`;
    /// a ring holds fewer than 2^31 frames). Beside `streamPeak`, so that `stream` fits this line.
    var streamAt: Int32 = 0
    /// For a stream: its ring's state (a copy of its `SoundSlot`'s), so that a short-path block
    /// does not go through the sound's slot.
    var stream: UnsafeMutablePointer<StreamRingState>? = nil
    /// For a stream: the read index after this voice's last short-path block (-1: not known),
    /// at ring offset `streamAt`, so that the next block skips a division, and the prefetch
    /// hints know where it will read.
    var streamRead: Int64 = -1
    /// For a stream, while its ring's read index is `streamRead`: the largest read index a
    /// short-path block may end on (one past its last frame) without looking at the ring's
    /// write index, peak and marks again (`Engine.plainStreamBlock`).
    var streamLimit: Int64 = -1
    /// The position between `position` and the next frame, in 2^-32 of a frame (varispeed).
    var phase: UInt32 = 0
    /// The ramp towards `levelTarget`: the level of ramp frame k is `rampOrigin + levelStep × k`,
    /// where k counts the frames of the ramp played so far (`rampElapsed`), so a ramp sounds the
    /// same however periods split it.
    var levelTarget: Float = 1
    var levelStep: Float = 0
    var rampOrigin: Float = 1
    var rampElapsed: Int32 = 0
    var meterPeakLeft: Float = 0
    var meterPeakRight: Float = 0
    /// The tag of the start command that began this voice, echoed in its events.
    var tag: UInt32 = 0
    /// Device frame the voice last stopped sounding on, by itself or by a command (`.min` when
    /// everything was silenced): a late command due before it finds the voice ended where on
    /// time it would have found it sounding.
    var endedAt: Frame = .min
    /// Device frame the last gain ramp ended on (a late ramp due before it cannot know its
    /// origin).
    var rampEndedAt: Frame = .min
    /// Device frame the voice was paused on (the pause command's frame).
    var pausedAt: Frame = .min
    // MARK: The envelope (see `AmplitudeEnvelope`), copied from the instrument at its trigger.
    var envStage: EnvelopeStage = .none
    var envFollowsNoteOff = false
    /// The level with the envelope at 1, and the envelope's value at the end of the current segment.
    var envBase: Float = 0
    var envValue: Float = 0
    var envHoldFrames: Int32 = 0
    var envDecaySegment: Int32 = 0
    var envDecayFactor: Float = 1
    var envSustain: Float = 1
    var envReleaseSegment: Int32 = 1
    var envReleaseFactor: Float = 0
    // Exactly four cache lines: add padding here when a field goes.

    /// Metering: when on, the render thread accumulates the peak and the sum of squares of what
    /// this player contributes, per channel, and publishes them every period.
    var isMetered: Bool {
        @_noLocks @_noAllocation @inline(__always) get { generalPath & 1 != 0 }
        @_noLocks @_noAllocation @inline(__always) set { generalPath = newValue ? generalPath | 1 : generalPath & 0xFE }
    }

    /// Plays from memory (not a stream) at rate 1, on no general path (not metered or
    /// filtered): what the short paths for one ramped voice take.
    var playsFromMemoryAtRateOne: Bool {
        @_noLocks @_noAllocation @inline(__always) get { !isStreamed && !isVarispeed && generalPath == 0 }
    }

    /// The voice goes through its filter (`Engine.filterState(of:)`).
    var isFiltered: Bool {
        @_noLocks @_noAllocation @inline(__always) get { generalPath & 2 != 0 }
        @_noLocks @_noAllocation @inline(__always) set { generalPath = newValue ? generalPath | 2 : generalPath & 0xFD }
    }

    /// max(peak, 1) × max(1, |pan factors|): × the level, a bound on every value the kernels
    /// form for the voice (sample × gain before the pan, gain × pan before the sample, the sum),
    /// and infinite, or NaN with a level of 0, when the sound's samples are not bounded.
    @_noLocks @_noAllocation @inline(__always)
    static func peakGain(_ peak: Float, _ panLeft: Float, _ panRight: Float) -> Float {
        max(peak, 1) * max(1, max(abs(panLeft), abs(panRight)))
    }

    /// What `peakGain` bounds, for the samples this voice has read: a stream's from its ring's
    /// peak (`streamPeak`), a sound's from the sound's.
    var readPeakGain: Float {
        @_noLocks @_noAllocation @inline(__always) get {
            isStreamed ? Voice.peakGain(streamPeak, panLeft, panRight) : peakGain
        }
    }

    /// Whether voice `v` is active, not paused, on no general path (metered, filtered), streamed and into output 0: its
    /// flags and `output` (bytes 52 to 59 of its first line, as `VoiceListTests` checks) read
    /// as one word and compared at once, where one check each cost a load and a branch per
    /// voice in `Engine.mixStreamGroup`. (A voice into an output the render does not have
    /// plays into the main mix all the same, on the path for one voice at a time.)
    @_noLocks @_noAllocation @inline(__always)
    static func isSoundingStreamIntoMainMix(_ v: UnsafeMutablePointer<Voice>) -> Bool {
        // Little-endian bytes: isActive, isPaused, generalPath, (stopsAfterRamp, isStereo),
        // isStreamed, (isVarispeed: a stream plays at rate 1), output.
        flags(v) & 0xFF00_FF00_00FF_FFFF == 0x0000_0100_0000_0001
    }

    /// Whether voice `v` is active, not paused, not metered, not streamed, at rate 1 and into
    /// output 0, as `isSoundingStreamIntoMainMix` checks its flags.
    @_noLocks @_noAllocation @inline(__always)
    static func isSoundingAtRateOneIntoMainMix(_ v: UnsafeMutablePointer<Voice>) -> Bool {
        // isActive, isPaused, generalPath, (stopsAfterRamp, isStereo), isStreamed, isVarispeed, output.
        flags(v) & 0xFFFF_FF00_00FF_FFFF == 0x0000_0000_0000_0001
    }

    @_noLocks @_noAllocation @inline(__always)
    static func flags(_ v: UnsafeMutablePointer<Voice>) -> UInt64 {
        UnsafeRawPointer(v).loadUnaligned(fromByteOffset: flagsOffset, as: UInt64.self)
    }

    /// Where `isActive` is, the first of the flags `isSoundingStreamIntoMainMix` and
    /// `isSoundingAtRateOneIntoMainMix` read.
    static var flagsOffset: Int { @_noLocks @_noAllocation @inline(__always) get { 52 } }

    /// Sets the pan factors for the current sound's channel count (call after `setSound`).
    @_noLocks @_noAllocation @inline(__always)
    mutating func setPan(_ gains: PanGains) {
        panLeft = isStereo ? gains.stereoLeft : gains.monoLeft
        panRight = isStereo ? gains.stereoRight : gains.monoRight
        peakGain = Voice.peakGain(peak, panLeft, panRight)
    }

    @_noLocks @_noAllocation @inline(__always)
    mutating func setRate(_ newRate: Double) {
        rate = newRate
        isVarispeed = newRate != 1
        // Commands clamp the rate to 0.25…4 (NaN is refused); anything else plays at 1.
        rateStep = newRate > 0 && newRate <= 256 ? UInt64(newRate * 4_294_967_296 + 0.5) : 1 << 32
    }

    /// Points the voice at `slot`'s samples.
    @_noLocks @_noAllocation @inline(__always)
    mutating func setSound(_ index: Int32, _ slot: SoundSlot) {
        sound = index
        frames = slot.frames
        left = slot.left
        right = slot.right
        isStereo = slot.isStereo
        isStreamed = slot.isStreamed
        peak = slot.peak
        streamPeak = 0
        stream = slot.stream
        streamRead = -1
        streamLimit = -1
        streamAt = 0
        peakGain = Voice.peakGain(peak, panLeft, panRight)
    }
}
