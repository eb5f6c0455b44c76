// Commands that reach the render thread after their frame: how late they are, and how a voice is
// put where the command on time would have left it (rewound, its ramp moved on, its level as of
// the command's frame).

extension Engine {
    /// Moves voice `v` back over the `frames` frames it played at its rate, when they lie within
    /// its current pass through its sound (no wrap, no end, no ramp under way or ended since `frame`); returns whether it
    /// could. Real-time safe.
    @_noLocks @_noAllocation
    func rewind(_ v: UnsafeMutablePointer<Voice>, by frames: Int64, since frame: Frame) -> Bool {
        // A stream's samples come from its ring, which only moves forward; a voice (re)started
        // after `frame` has nothing of it to undo; beyond the catch-up limit nothing would
        // carry it forward again.
        guard v.pointee.rampFramesLeft == 0, v.pointee.rampEndedAt <= frame, !v.pointee.isStreamed, v.pointee.startedAt <= frame,
              frames <= Int64(configuration.maxCatchUpFrames) else { return false }
        // A filter's memory holds the frames heard: they cannot be taken back (counted).
        if v.pointee.isFiltered { lateCommandCounter.add(1, ordering: .relaxed) }
        // Not back across where the current pass began: 0, or past a loop start, the loop start
        // (a position before it is in the first pass; one after it may be in a later one).
        let loopStart = v.pointee.sound >= 0 ? sounds[Int(v.pointee.sound)].loopStart : 0
        var passStart: Int64 = v.pointee.position >= loopStart ? loopStart : 0
        // A streamed tail's ring holds nothing before its `tailStart` (what the filler may have
        // written over).
        if v.pointee.sound >= 0 { passStart = max(passStart, sounds[Int(v.pointee.sound)].tailStart) }
        if !v.pointee.isVarispeed {
            guard v.pointee.position - frames >= passStart else { return false }
            v.pointee.position -= frames
            return true
        }
        // Fixed point (`Voice.rateStep`): n steps back are exactly the n steps played forward.
        let back = UInt128(UInt64(frames)) * UInt128(v.pointee.rateStep)
        let at = UInt128(UInt64(v.pointee.position)) << 32 | UInt128(v.pointee.phase)
        guard at >= back, Int64(truncatingIfNeeded: (at - back) >> 32) >= passStart else { return false }
        let earlier = at - back
        v.pointee.position = Int64(earlier >> 32)
        v.pointee.phase = UInt32(truncatingIfNeeded: earlier)
        return true
    }

    /// Whether voice `v`, playing on over the last `late` frames, wrapped in them, and how many
    /// passes it began since (at most `Int32.max`): in its own fixed point (`Voice.rateStep`,
    /// 2^32 per frame at rate 1), so exactly what playing them did.
    @_noLocks @_noAllocation
    func playedSince(_ v: UnsafeMutablePointer<Voice>, late: Int64) -> (wrapped: Bool, passes: Int32) {
        let step = UInt128(v.pointee.isVarispeed ? v.pointee.rateStep : 1 << 32)
        let at = UInt128(UInt64(max(0, v.pointee.position))) << 32 | UInt128(v.pointee.isVarispeed ? v.pointee.phase : 0)
        let moved = UInt128(UInt64(max(0, late))) * step
        // With a loop start, a position before it is in the first pass (which began at 0), one
        // past it in the first or a later one (which began at the loop start): frames played
        // since that reach back past the loop start may or may not hold a wrap, which cannot be
        // placed (counted; taken as one).
        let loopStart = v.pointee.sound >= 0 && !v.pointee.isStreamed ? sounds[Int(v.pointee.sound)].loopStart : 0
        if loopStart > 0, v.pointee.frames > 0 {
            let start = UInt128(UInt64(loopStart)) << 32
            if at < start || moved <= at - start { return (false, 0) }
            lateCommandCounter.add(1, ordering: .relaxed)
            return (true, 1)
        }
        guard at < moved, v.pointee.frames > 0 else { return (false, 0) }
        let length = UInt128(UInt64(v.pointee.frames)) << 32
        let passes = (moved - at + length - 1) / length
        return (true, passes > UInt128(Int32.max) ? Int32.max : Int32(passes))
    }

    /// Counts a late `command` (`lateCommandCount`) that finds voice `v` ended where on time it
    /// would have found it sounding: it cannot be revived (its sound may be released already),
    /// so the command cannot have its on-time effect.
    @_noLocks @_noAllocation @inline(__always)
    func countIfEndedSince(_ v: UnsafeMutablePointer<Voice>, _ command: Command, at frame: Frame) {
        if v.pointee.isActive { return }
        if lateness(command, at: frame) == 0 { return }
        if v.pointee.endedAt > command.frame {
            if v.pointee.startedAt <= command.frame { lateCommandCounter.add(1, ordering: .relaxed) }
        }
    }

    /// Before a gain ramp due on `due` is started `late` frames late on voice `v`: sets the
    /// voice's level to the one it had on `due` (its origin on time) when a ramp under way then
    /// is still under way; counts the command (`lateCommandCount`) when that level cannot be
    /// known (a ramp began or ended since `due`). Returns the frames the voice played since
    /// `due` (the late frames, or up to its pause), which the new ramp is to be advanced by.
    /// Real-time safe.
    @_noLocks @_noAllocation
    func restoreLevel(_ v: UnsafeMutablePointer<Voice>, due: Frame, late: Int64) -> Int64 {
        if late <= 0 { return 0 }
        var played = late
        // A paused voice played only up to its pause (its ramp waits while it is paused).
        if v.pointee.isPaused { played = max(0, min(late, v.pointee.pausedAt - due)) }
        if played <= 0 { return 0 }
        // A filter heard the frames since at the level they had: its memory is not where the
        // change on time would have left it (counted).
        if v.pointee.isFiltered { lateCommandCounter.add(1, ordering: .relaxed) }
        if v.pointee.rampFramesLeft > 0 {
            let k = Int64(v.pointee.rampElapsed) - played
            if k >= 0 {
                v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(k)
            } else {
                lateCommandCounter.add(1, ordering: .relaxed)
            }
        } else if v.pointee.rampEndedAt > due {
            lateCommandCounter.add(1, ordering: .relaxed)
        }
        return played
    }

    /// How many frames after its own frame `command` is applied at `frame` (0 for an
    /// immediate command).
    @_noLocks @_noAllocation @inline(__always)
    func lateness(_ command: Command, at frame: Frame) -> Int64 {
        command.frame == Command.immediately ? 0 : max(0, frame - command.frame)
    }

    /// Moves a gain ramp started `frames` frames late to where it would be now; ends it (and
    /// stops the voice if the ramp was a stop fade) when it would be over. `p` is -1 for a
    /// tail, which reports no events. Real-time safe.
    @_noLocks @_noAllocation
    func advanceRamp(_ v: UnsafeMutablePointer<Voice>, player p: Int, by frames: Int64, rampStart: Frame) {
        guard v.pointee.rampFramesLeft > 0, frames > 0 else { return }
        // A filter heard those frames at the level before the ramp: its memory is not where
        // the ramp on time would have left it (counted).
        if v.pointee.isFiltered { lateCommandCounter.add(1, ordering: .relaxed) }
        if frames >= Int64(v.pointee.rampFramesLeft) {
            _ = finishRamp(v, player: p, at: rampStart + Int64(v.pointee.rampFramesLeft))
        } else {
            v.pointee.rampElapsed += Int32(frames)
            v.pointee.rampFramesLeft -= Int32(frames)
            v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(v.pointee.rampElapsed)
        }
    }
}
