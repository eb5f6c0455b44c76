// The short paths for one voice: a plain voice, a ramp, a voice with its declick tail, a streamed
// voice whose ring holds the block. Each mixes exactly as the general path would.

extension Engine {
    /// The common case, kept small so that it stays in registers: a plain voice (`isPlain`).
    /// Mixes it exactly as `mixVoice` would and returns `true`, or does nothing and returns `false`.
    @_noLocks @_noAllocation @inline(__always)
    func mixPlainVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool) -> Bool {
        let count = end - start
        if !isPlain(v, count: count) { return false }
        let position = v.pointee.position
        if silent {
            v.pointee.position = position + Int64(count)
            return true
        }
        addPlainVoice(v, from: start, to: end, left: left, right: right)
        return true
    }

    /// The common case of varispeed: a voice from memory at a rate other than 1, at a steady
    /// level (no ramp), neither metered nor filtered, whose every frame in the block
    /// interpolates between two frames of its sound (no end, wrap or tail in it). Mixes it
    /// exactly as `mixVoice` would (through `Mixing.addVarispeedSpan`, as `Mixing.addVarispeed`
    /// does) and returns `true`, or changes nothing and returns `false`.
    @_noLocks @_noAllocation @inline(__always)
    func mixVarispeedVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                           left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool) -> Bool {
        if silent { return false }
        if !v.pointee.isVarispeed { return false }
        if v.pointee.isStreamed { return false }
        if v.pointee.generalPath != 0 { return false }
        if v.pointee.rampFramesLeft != 0 { return false }
        let count = end &- start
        let frames = v.pointee.frames, position = v.pointee.position
        let rate = v.pointee.rateStep
        // Bounds that keep every product below in 64 bits.
        if frames >= 1 << 31 || position < 0 || count < 1 || count >= 1 << 16 || rate >= 1 << 40 { return false }
        let at = UInt64(position) << 32 | UInt64(v.pointee.phase)
        // The last frame's position, and so every one before it, has its next frame in the sound.
        let last = at &+ UInt64(count &- 1) &* rate
        if frames < 2 || last >= UInt64(frames &- 1) << 32 { return false }
        let level = v.pointee.level
        Mixing.addVarispeedSpan(left: v.pointee.left.unsafelyUnwrapped, right: v.pointee.right.unsafelyUnwrapped, at: at, rate: rate,
                                count: count, into: left + start, right: right + start,
                                gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight,
                                wide: wideVarispeed.load(ordering: .relaxed))
        let moved = at &+ UInt64(count) &* rate
        v.pointee.position = Int64(moved >> 32)
        v.pointee.phase = UInt32(truncatingIfNeeded: moved)
        return true
    }

    /// The common case of a ramp (a fade, or a tail's declick): a voice at rate 1, not streamed
    /// or metered, whose ramp goes on past the block and whose sound does not end in it. Mixes
    /// it exactly as `mixVoice` would (nothing to report, no segment to end) and returns `true`,
    /// or changes nothing and returns `false`.
    @_noLocks @_noAllocation @inline(__always)
    func mixRampedVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool) -> Bool {
        if silent { return false }
        let count = end &- start
        if !v.pointee.playsFromMemoryAtRateOne { return false }
        if Int(v.pointee.rampFramesLeft) <= count { return false }
        let position = v.pointee.position
        if position &+ Int64(count) >= v.pointee.frames { return false }
        let pos = Int(position)
        v.pointee.level = Mixing.addRamped(left: v.pointee.left.unsafelyUnwrapped + pos, right: v.pointee.right.unsafelyUnwrapped + pos,
                                           into: left + start, right: right + start, count: count,
                                           origin: v.pointee.rampOrigin, step: v.pointee.levelStep,
                                           firstIndex: Int(v.pointee.rampElapsed), panLeft: v.pointee.panLeft, panRight: v.pointee.panRight)
        v.pointee.rampElapsed &+= Int32(truncatingIfNeeded: count)
        v.pointee.rampFramesLeft &-= Int32(truncatingIfNeeded: count)
        v.pointee.position = position &+ Int64(count)
        return true
    }

    /// A voice (or a declick tail: `player` -1) at rate 1 from memory, on no general path, under
    /// a ramp that ends in the block, whose sound does not end in it: an envelope's segments, a
    /// fade that stops it, a glide. Each stretch up to a ramp's end and after it, exactly as
    /// `mixVoice` mixes them (the same kernels on the same frames, `finishRamp` at each end:
    /// the next segment, or the voice's end; for a controller's glide, the voice at its new level).
    /// Returns `true`, or changes nothing and returns `false`.
    @_noLocks @_noAllocation
    func mixSegmentedVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, from start: Int, to end: Int, periodStart: Frame,
                           left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool) -> Bool {
        if silent { return false }
        if !v.pointee.playsFromMemoryAtRateOne { return false }
        if v.pointee.rampFramesLeft <= 0 { return false }
        if v.pointee.position &+ Int64(end &- start) >= v.pointee.frames { return false }
        let l = v.pointee.left.unsafelyUnwrapped, r = v.pointee.right.unsafelyUnwrapped
        var out = start
        while out < end {
            var n = end &- out
            let ramping = v.pointee.rampFramesLeft > 0
            if ramping { n = min(n, Int(v.pointee.rampFramesLeft)) }
            let pos = Int(v.pointee.position)
            if ramping {
                v.pointee.level = Mixing.addRamped(left: l + pos, right: r + pos, into: left + out, right: right + out, count: n,
                                                   origin: v.pointee.rampOrigin, step: v.pointee.levelStep,
                                                   firstIndex: Int(v.pointee.rampElapsed),
                                                   panLeft: v.pointee.panLeft, panRight: v.pointee.panRight)
                v.pointee.rampElapsed += Int32(n)
                v.pointee.rampFramesLeft -= Int32(n)
                if v.pointee.rampFramesLeft == 0 {
                    if v.pointee.stopsAfterRamp { v.pointee.position += Int64(n) }
                    // A stop's fade ends the voice; an envelope goes on with its next segment.
                    if !finishRamp(v, player: p, at: periodStart + Int64(out + n)) { return true }
                }
            } else {
                let level = v.pointee.level
                Mixing.add(left: l + pos, right: r + pos, into: left + out, right: right + out,
                           count: n, gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
            }
            v.pointee.position += Int64(n)
            out += n
        }
        return true
    }

    /// Plain voice `v` (sounding into the main mix, not silent) and its own declick tail `t`,
    /// listed right after it, when the tail sounds into the main mix and takes the ramped short
    /// path (`mixRampedVoice`): mixed in one pass over the outputs (`Mixing.addWithRamped`), to
    /// the bit as `addPlainVoice` for the voice and then `mixRampedVoice` for its tail. Returns
    /// the tail's share of the period's bound (taken before it moves on), or nil (nothing done).
    @_noLocks @_noAllocation @inline(__always)
    func mixPlainWithTail(_ v: UnsafeMutablePointer<Voice>, _ t: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                          left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int) -> Float? {
        if !t.pointee.isActive { return nil }
        let o = Int(t.pointee.output)
        if o != 0, o < busCount { return nil }
        let count = end &- start
        if t.pointee.isStreamed { return nil }
        if t.pointee.isVarispeed { return nil }
        if t.pointee.generalPath != 0 { return nil }
        if Int(t.pointee.rampFramesLeft) <= count { return nil }
        let tailPosition = t.pointee.position
        if tailPosition &+ Int64(count) >= t.pointee.frames { return nil }
        let share = t.pointee.peakGain * largestGain(t)
        let position = Int(v.pointee.position), level = v.pointee.level, tp = Int(tailPosition)
        let voice = Mixing.Source(left: v.pointee.left.unsafelyUnwrapped + position, right: v.pointee.right.unsafelyUnwrapped + position,
                                  gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
        t.pointee.level = Mixing.addWithRamped(voice, rampedLeft: t.pointee.left.unsafelyUnwrapped + tp,
                                               right: t.pointee.right.unsafelyUnwrapped + tp,
                                               origin: t.pointee.rampOrigin, step: t.pointee.levelStep,
                                               firstIndex: Int(t.pointee.rampElapsed), panLeft: t.pointee.panLeft,
                                               panRight: t.pointee.panRight, into: left + start, right: right + start, count: count)
        v.pointee.position &+= Int64(count)
        t.pointee.rampElapsed &+= Int32(truncatingIfNeeded: count)
        t.pointee.rampFramesLeft &-= Int32(truncatingIfNeeded: count)
        t.pointee.position = tailPosition &+ Int64(count)
        return share
    }

    /// Mixes plain voice `v` (`isPlain`, not silent) for block offsets `start ..< end`.
    @_noLocks @_noAllocation @inline(__always)
    func addPlainVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let count = end - start
        let position = v.pointee.position, level = v.pointee.level
        Mixing.add(left: v.pointee.left.unsafelyUnwrapped + Int(position), right: v.pointee.right.unsafelyUnwrapped + Int(position),
                   into: left + start, right: right + start, count: count,
                   gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
        v.pointee.position = position + Int64(count)
    }

    /// The common case of a streamed voice: without a ramp or meters, its ring holding every
    /// frame of the block, and no wrap or end in it (nothing to report). Mixes it exactly as
    /// `mixVoice` would and returns `true`, or changes nothing and returns `false`.
    @_noLocks @_noAllocation @inline(__always)
    func mixPlainStream(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool) -> Bool {
        if silent { return false }
        let count = end - start
        guard let block = plainStreamBlock(v, count: count) else { return false }
        // One run of the ring's samples (`plainStreamBlock`), through the voice's copies of its
        // pointers (on its first line).
        let source = streamSource(v, block)
        Mixing.add(left: source.left, right: source.right, into: left + start, right: right + start,
                   count: count, gainLeft: source.gainLeft, gainRight: source.gainRight)
        advancePlainStream(v, block, count: count)
        releasePlainStream(block)
        return true
    }

    /// A streamed voice's next block on the short path (`plainStreamBlock`): its ring, the
    /// block's offset in it and the read index after it.
    struct PlainStreamBlock {
        var stream: UnsafeMutablePointer<StreamRingState>
        var at: Int
        var last: Int64
    }

    /// Whether streamed voice `v`'s next `count` frames take the short path: no ramp or meters,
    /// its ring holding every frame of them in one run (not across the ring's end), and no wrap
    /// or end in them.
    ///
    /// The ring's write index, peak and marks are looked at only when a block would end past
    /// the voice's `streamLimit`, the last end they allowed when they were last looked at
    /// (while the ring's read index is still the voice's `streamRead`: no other voice read it
    /// since). That is the same answer: the write index only grows; the peak only grows and is
    /// taken into `streamPeak` then, for every sample below the write index; a timeline's
    /// next wrap or end may be kept (see `streamLimit`); and the writer marks a wrap or an end only at
    /// or after its write index, which is at or after the limit (an end on the write index
    /// would end a block there: the limit stays one short of it). Changes only the voice's
    /// cached `streamLimit`, `streamRead`, `streamAt` and `streamPeak`.
    @_noLocks @_noAllocation @inline(__always)
    func plainStreamBlock(_ v: UnsafeMutablePointer<Voice>, count: Int) -> PlainStreamBlock? {
        if !v.pointee.isStreamed { return nil }
        if v.pointee.generalPath != 0 { return nil }
        return ringBlock(v, count: count)
    }

    /// `plainStreamBlock` for a streamed voice without meters.
    @_noLocks @_noAllocation @inline(__always)
    func ringBlock(_ v: UnsafeMutablePointer<Voice>, count: Int) -> PlainStreamBlock? {
        if v.pointee.rampFramesLeft != 0 { return nil }
        guard let stream = v.pointee.stream else { return nil }
        let read = stream.pointee.readIndex.load(ordering: .relaxed)
        // Wrapping adds (`&+`) here and in the groups: indices are far below `Int64.max`, and a
        // checked add is a branch per voice.
        let last = read &+ Int64(count)  // one past the block's last frame
        if read == v.pointee.streamRead {
            if last <= v.pointee.streamLimit { return PlainStreamBlock(stream: stream, at: Int(v.pointee.streamAt), last: last) }
            // The last block ended on the ring's end (`advancePlainStream`): the next lap.
            if Int(v.pointee.streamAt) == stream.pointee.capacity { v.pointee.streamAt = 0 }
        } else {
            v.pointee.streamAt = Int32(truncatingIfNeeded: read % Int64(stream.pointee.capacity))
            v.pointee.streamRead = read
        }
        v.pointee.streamLimit = streamLimit(v, stream, read: read)
        if last > v.pointee.streamLimit { return nil }
        return PlainStreamBlock(stream: stream, at: Int(v.pointee.streamAt), last: last)
    }

    /// The largest read index a short-path block of streamed voice `v` may end on from read
    /// index `read` (see `plainStreamBlock`), from its ring's write index and marks, or its
    /// timeline; takes the ring's peak into the voice's `streamPeak`.
    @_noLocks @_noAllocation @inline(never)
    func streamLimit(_ v: UnsafeMutablePointer<Voice>, _ stream: UnsafeMutablePointer<StreamRingState>, read: Int64) -> Int64 {
        let written = stream.pointee.writeIndex.load(ordering: .acquiring)
        // After `written`: it covers every sample below it.
        let peak = Float(bitPattern: stream.pointee.peakBits.load(ordering: .relaxed))
        v.pointee.streamPeak = max(v.pointee.streamPeak, peak)
        // Within the written frames, and in one run of the ring: not past its end (the read
        // index where the ring's next lap starts), so that a block is one run of samples.
        let lapEnd = read - Int64(v.pointee.streamAt) + Int64(stream.pointee.capacity)
        let sourceFrames = stream.pointee.timelineSourceFrames.load(ordering: .acquiring)
        if sourceFrames > 0 {
            // Before the next wrap or end at or after the read index. The limit keeps it from
            // block to block: the timeline is fixed while the voice plays it, and a loop count
            // changed since can only move the end later than the next wrap the writer has not
            // passed.
            let mark = Mixing.nextStreamMark(stream, after: read, sourceFrames: sourceFrames)
            return min(min(written, lapEnd), mark - 1)
        }
        // Before the end, and not past a wrap at or after the read index.
        var limit = min(written - 1, lapEnd)
        let endIndex = stream.pointee.endIndex.load(ordering: .acquiring)
        if endIndex != .max { limit = min(limit, endIndex - 1) }
        let wrap = stream.pointee.wrapIndex.load(ordering: .acquiring)
        if wrap >= read { limit = min(limit, wrap) }
        return limit
    }

    /// A short-path block of `count` frames: the voice's position, ring offset and read index
    /// move on, as `mixVoice` would leave them (the offset may be the ring's capacity, the block
    /// ending on the ring's end: `plainStreamBlock` starts the next lap). Then, once its
    /// samples were mixed, `releasePlainStream`.
    @_noLocks @_noAllocation @inline(__always)
    func advancePlainStream(_ v: UnsafeMutablePointer<Voice>, _ block: PlainStreamBlock, count: Int) {
        v.pointee.streamRead = block.last
        v.pointee.streamAt = Int32(truncatingIfNeeded: block.at &+ count)
        v.pointee.position &+= Int64(count)
    }

    /// After a short-path block's samples were mixed: the ring's read index moves on, and the
    /// writer may write over them.
    @_noLocks @_noAllocation @inline(__always)
    func releasePlainStream(_ block: PlainStreamBlock) {
        block.stream.pointee.readIndex.store(block.last, ordering: .releasing)
    }
}
