/// A sound's samples as the render thread sees them: plain pointers into memory a `Sound` owns.
struct SoundSlot {
    var left: UnsafeMutablePointer<Float>
    var right: UnsafeMutablePointer<Float>
    var frames: Int64
    var isStereo: Bool
    /// Set for a streamed sound: the voice reads the ring instead of `left`/`right`.
    var stream: UnsafeMutablePointer<StreamRingState>?

    var isStreamed: Bool {
        @_noLocks @_noAllocation @inline(__always) get {
            if case .some = stream { return true }
            return false
        }
    }
}

/// The state of one player's voice. Owned and touched only by the render thread.
///
/// Laid out as two 64-byte cache lines (`Engine` aligns the arrays to 64 bytes): the first holds
/// what mixing reads every period, the second what only ramps' ends, varispeed, meters, events and
/// voice stealing read. Keep it at 128 bytes (a test checks the size).
struct Voice: BitwiseCopyable {
    // MARK: First line: read or written by every period's mixing.
    /// Next frame to play inside the sound.
    var position: Int64 = 0
    /// Playback speed (1 = as recorded); pitch follows speed.
    var rate: Double = 1
    var sound: Int32 = -1
    /// Repeats left after the current pass (-1 = forever).
    var loopsRemaining: Int32 = 0
    /// Current linear gain.
    var level: Float = 1
    var rampFramesLeft: Int32 = 0
    var pan: PanGains = .center
    var isActive = false
    var isPaused = false
    /// Metering: when on, the render thread accumulates the peak and the sum of squares of what
    /// this player contributes, per channel, and publishes them every period.
    var isMetered = false
    /// When set, the voice stops as soon as its gain ramp reaches its end (a stop with a fade).
    var stopsAfterRamp = false
    /// The ramp towards `levelTarget`: the level of ramp frame k is `rampOrigin + levelStep × k`,
    /// where k counts the frames of the ramp played so far (`rampElapsed`), so a ramp sounds the
    /// same however periods split it.
    var levelStep: Float = 0
    var rampOrigin: Float = 1
    var rampElapsed: Int32 = 0

    // MARK: Second line.
    /// The position between `position` and the next frame when the rate is not 1.
    var fraction: Double = 0
    var meterSumLeft: Double = 0
    var meterSumRight: Double = 0
    var meterFrames: Int64 = 0
    var meterGeneration: Int64 = 0
    /// Device frame it started on (voice stealing takes the oldest).
    var startedAt: Frame = 0
    var levelTarget: Float = 1
    var meterPeakLeft: Float = 0
    var meterPeakRight: Float = 0
    /// The tag of the start command that began this voice, echoed in its events.
    var tag: UInt32 = 0
}

/// Commands waiting for their frame, kept sorted by frame (stable for equal frames), in storage
/// allocated once. A copyable handle on unsafe storage so the render thread can use it without
/// reference counting or exclusivity checks; `Engine` allocates and frees it. Render thread only.
struct UnsafeCommandSchedule {
    let capacity: Int
    private let storage: UnsafeMutablePointer<Command>
    /// [0] = index of the first command, [1] = number of commands.
    private let state: UnsafeMutablePointer<Int>

    static func allocate(capacity: Int) -> UnsafeCommandSchedule {
        let state = UnsafeMutablePointer<Int>.allocate(capacity: 2)
        state.initialize(repeating: 0, count: 2)
        return UnsafeCommandSchedule(capacity: capacity, storage: .allocate(capacity: capacity), state: state)
    }

    func deallocate() {
        storage.deallocate()
        state.deallocate()
    }

    var count: Int {
        @_noLocks @_noAllocation get { state[1] }
    }

    /// Inserts `command` after every command with a frame ≤ its frame; `false` when full.
    @_noLocks @_noAllocation
    func insert(_ command: Command) -> Bool {
        let head = state[0], count = state[1]
        if count == capacity { return false }
        var i = count
        while i > 0 {
            let previous = storage[(head + i - 1) % capacity]
            if previous.frame <= command.frame { break }
            storage[(head + i) % capacity] = previous
            i -= 1
        }
        storage[(head + i) % capacity] = command
        state[1] = count + 1
        return true
    }

    /// The frame of the earliest command; only valid when `count > 0`.
    var firstFrame: Frame {
        @_noLocks @_noAllocation get { storage[state[0]].frame }
    }

    /// Removes every command for `player`, keeping the others in order.
    @_noLocks @_noAllocation
    func removeAll(forPlayer player: Int32) {
        let head = state[0], count = state[1]
        var kept = 0
        for i in 0..<count {
            let command = storage[(head + i) % capacity]
            if command.player != player {
                storage[(head + kept) % capacity] = command
                kept += 1
            }
        }
        state[1] = kept
    }

    @_noLocks @_noAllocation
    func removeFirst() -> Command {
        let command = storage[state[0]]
        state[0] = (state[0] + 1) % capacity
        state[1] -= 1
        return command
    }
}
