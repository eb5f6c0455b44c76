// The amplitude envelope of a voice: its stages and segments.

/// Where a voice's amplitude envelope is (`AmplitudeEnvelope`, resolved into straight segments
/// by `InstrumentTables`). Each stage plays as one or more ramps of the voice's level (`Voice`'s
/// `rampOrigin`, `levelStep`, `rampFramesLeft`); when a ramp ends, `Voice.nextEnvelopeSegment`
/// chooses what follows.
enum EnvelopeStage: UInt8, BitwiseCopyable {
    /// No envelope: the voice plays at its level (or under a command's ramp, which ends any
    /// envelope).
    case none = 0
    /// Before the attack (SFZ's `ampeg_delay`): held at the attack's start level (0 unless
    /// `ampeg_start`), as sfizz holds it.
    case delay
    /// A straight rise from its start (0 unless `ampeg_start` says otherwise) to the voice's base level.
    case attack
    /// Held at the base level.
    case hold
    /// Down by a factor per segment towards the sustain level.
    case decay
    /// At the sustain level until a note-off.
    case sustain
    /// Down by a factor per segment after a note-off (or a choke that releases).
    case release
    /// The release's last segment, from −80 dB to silence: the voice stops at its end.
    case releaseEnd

    /// An envelope is under way (any stage but `.none`).
    var isOn: Bool {
        @_noLocks @_noAllocation @inline(__always) get { rawValue != EnvelopeStage.none.rawValue }
    }

    /// At its sustain level, or no envelope: the level stays as it is.
    var isSteady: Bool {
        @_noLocks @_noAllocation @inline(__always) get {
            rawValue == EnvelopeStage.none.rawValue || rawValue == EnvelopeStage.sustain.rawValue
        }
    }

    /// Released already (a note-off or a choke): a gain change or another release leaves it be.
    var isReleased: Bool {
        @_noLocks @_noAllocation @inline(__always) get { rawValue >= EnvelopeStage.release.rawValue }
    }
}

extension Voice {
    /// Starts the envelope resolved in `inst` (the voice has just been started at its level,
    /// the envelope's 1). Real-time safe.
    @_noLocks @_noAllocation
    mutating func beginEnvelope(_ inst: InstrumentSlot) {
        envFollowsNoteOff = inst.followsNoteOff
        envBase = level
        envHoldFrames = inst.holdFrames
        envDecaySegment = inst.decaySegment
        envDecayFactor = inst.decayFactor
        envSustain = inst.sustain
        envReleaseSegment = inst.releaseSegment
        envReleaseFactor = inst.releaseFactor
        if inst.delayFrames > 0 {
            // At the attack's start level, as sfizz holds it (silence unless `ampeg_start`).
            envStage = .delay
            level = envBase * inst.attackStart
            envelopeSegment(to: inst.attackStart, frames: inst.delayFrames)
            return
        }
        beginAttack(inst)
    }

    /// The attack of the envelope resolved in `inst`, from its start (after its delay, if any).
    /// Real-time safe.
    @_noLocks @_noAllocation
    mutating func beginAttack(_ inst: InstrumentSlot) {
        envStage = .attack
        if inst.attackFrames > 0 {
            level = envBase * inst.attackStart
            envelopeSegment(to: 1, frames: inst.attackFrames)
        } else {
            // As if the attack had just ended.
            level = envBase
            envValue = 1
            nextEnvelopeSegment()
        }
    }

    /// In its envelope's delay.
    var isInEnvelopeDelay: Bool {
        @_noLocks @_noAllocation @inline(__always) get { envStage.rawValue == EnvelopeStage.delay.rawValue }
    }

    /// Begins the release from the level the voice has now: of its envelope, or, when a
    /// command's ramp ended the envelope, from that level as the envelope's 1. Real-time safe.
    @_noLocks @_noAllocation
    mutating func beginRelease() {
        if !envStage.isOn {
            envBase = level
            envValue = level > 0 ? 1 : 0
        } else {
            let base = envBase
            envValue = base > 0 ? level / base : 0
        }
        envStage = .release
        continueRelease()
    }

    /// A straight segment of the envelope to `value` (× its base level) over `frames`.
    @_noLocks @_noAllocation @inline(__always)
    mutating func envelopeSegment(to value: Float, frames: Int32) {
        let target = envBase * value
        envValue = value
        levelTarget = target
        levelStep = (target - level) / Float(frames)
        rampOrigin = level
        rampElapsed = 0
        rampFramesLeft = frames
    }

    /// The segment after the one that has just finished. Real-time safe.
    @_noLocks @_noAllocation
    mutating func nextEnvelopeSegment() {
        switch envStage {
        case .attack:
            if envHoldFrames > 0 {
                envStage = .hold
                envelopeSegment(to: 1, frames: envHoldFrames)
                return
            }
            envStage = .decay
        case .hold:
            envStage = .decay
        case .release:
            continueRelease()
            return
        case .decay:
            break
        case .none, .delay, .sustain, .releaseEnd:
            // The delay's end is the engine's to follow (`Engine.finishRamp`: the attack needs
            // the instrument).
            return
        }
        // The decay: down by a factor per segment, to the sustain level.
        let sustain = envSustain
        // Within 1e-4 (−80 dB) of the sustain level the decay is over: a fall towards 0 would
        // otherwise go on for ever in ever smaller (subnormal) steps.
        if envDecaySegment == 0 || envValue <= sustain + 1e-4 {
            envStage = .sustain
            envValue = sustain
            level = envBase * sustain
            levelTarget = level
            rampFramesLeft = 0
            return
        }
        envelopeSegment(to: max(sustain, envValue * envDecayFactor), frames: envDecaySegment)
    }

    /// The release's next segment; below −80 dB, a last one to silence, after which the voice stops.
    @_noLocks @_noAllocation
    mutating func continueRelease() {
        if envValue <= 1e-4 {
            envStage = .releaseEnd
            envelopeSegment(to: 0, frames: envReleaseSegment)
            stopsAfterRamp = true
            return
        }
        envelopeSegment(to: envValue * envReleaseFactor, frames: envReleaseSegment)
    }
}

extension Engine {
    /// Moves voice `v`'s envelope on by `frames` from frame `start`, segment by segment, as
    /// mixing them would (the level at a ramp's frame k is its origin + step × k; at a segment's
    /// end, its target). A release that ends in them stops the voice there. Real-time safe.
    @_noLocks @_noAllocation
    func advanceEnvelope(_ v: UnsafeMutablePointer<Voice>, player p: Int, by frames: Int64, from start: Frame) {
        // Beyond the catch-up limit nothing else is moved on either (see `advanceVoice`).
        guard frames <= Int64(configuration.maxCatchUpFrames) else { return }
        // A filter heard those frames at the level before the envelope: its memory is not where
        // the envelope on time would have left it (counted).
        if frames > 0, v.pointee.isFiltered, v.pointee.rampFramesLeft > 0 { lateCommandCounter.add(1, ordering: .relaxed) }
        var left = frames
        var at = start
        while left > 0 {
            if v.pointee.rampFramesLeft <= 0 { return }
            if !v.pointee.isActive { return }
            let step = min(left, Int64(v.pointee.rampFramesLeft))
            v.pointee.rampElapsed += Int32(step)
            v.pointee.rampFramesLeft -= Int32(step)
            left -= step
            at += step
            if v.pointee.rampFramesLeft == 0 {
                if !finishRamp(v, player: p, at: at) { return }
            } else {
                v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(v.pointee.rampElapsed)
            }
        }
    }
}
