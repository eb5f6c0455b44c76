extension Mixing {
    /// What mixing a stretch of a streamed voice did.
    struct StreamChunk {
        /// Output frames covered (sounding, or silent for missing data).
        var frames: Int
        /// The stream ended at the end of these frames.
        var ended: Bool
        /// Offset inside these frames where the stream wrapped to its file's start, or -1.
        var wrapOffset: Int
        /// A bound on the |samples| it read: the ring's peak (`StreamRingState.peakBits`).
        var peak: Float
    }

    /// The first read index at or after `read` at which a stream with a published timeline (of
    /// `sourceFrames` frames a pass) wraps or ends: `addStream` reports something for a block
    /// that reaches it (a block ending exactly on the end reports the end), and nothing for one
    /// that stops short of it. Real-time safe.
    @_noLocks @_noAllocation
    static func nextStreamMark(_ stream: UnsafeMutablePointer<StreamRingState>, after read: Int64, sourceFrames: Int64) -> Int64 {
        let sourceStart = stream.pointee.timelineSourceStart.load(ordering: .relaxed)
        let ratio = Double(bitPattern: stream.pointee.timelineRatioBits.load(ordering: .relaxed))
        let passes = stream.pointee.timelinePasses.load(ordering: .acquiring)
        // A wrap on `read` itself is in the block that starts there.
        let k = StreamRingState.wraps(strictlyBefore: read, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio)
        let next = StreamRingState.wrapFrame(k + 1, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio)
        if passes < 0 { return next }
        return min(next, StreamRingState.wrapFrame(passes, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio))
    }

    /// Adds up to `count` frames of a streamed voice from its ring, with its gain or gain ramp.
    /// Frames the disk thread has not written yet play as silence and are counted as underrun;
    /// the read index moves on regardless, so the stream stays in time. Stops at the stream's end.
    /// With `silent` (frames nobody hears) nothing is read or mixed, and nothing counted as
    /// underrun: only the read index, the ramp's level, the end and the wrap, in closed form;
    /// with `splitAtWraps` as well, the chunk ends before the next wrap, so that each is reported.
    @_noLocks @_noAllocation
    static func addStream(_ stream: UnsafeMutablePointer<StreamRingState>, voice v: UnsafeMutablePointer<Voice>,
                          into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                          count: Int, panLeft: Float, panRight: Float, silent: Bool = false,
                          splitAtWraps: Bool = false) -> StreamChunk {
        let read = stream.pointee.readIndex.load(ordering: .relaxed)
        let written = stream.pointee.writeIndex.load(ordering: .acquiring)
        // After `written`: it covers every sample below it.
        let peak = Float(bitPattern: stream.pointee.peakBits.load(ordering: .relaxed))
        // Where it ends and wraps: from its published timeline when there is one (known ahead of
        // the data), else from the writer's marks.
        let sourceFrames = stream.pointee.timelineSourceFrames.load(ordering: .acquiring)
        let sourceStart = stream.pointee.timelineSourceStart.load(ordering: .relaxed)
        let ratio = Double(bitPattern: stream.pointee.timelineRatioBits.load(ordering: .relaxed))
        let passes = stream.pointee.timelinePasses.load(ordering: .acquiring)
        var end = stream.pointee.endIndex.load(ordering: .acquiring)
        if sourceFrames > 0 {
            end = passes < 0 ? .max
                : StreamRingState.wrapFrame(passes, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio)
        }
        var frames = count
        var ended = false
        if end != .max && read + Int64(count) >= end {
            frames = Int(max(0, end - read))
            ended = true
        }
        if silent, splitAtWraps, sourceFrames > 0, frames > 1 {
            let k = StreamRingState.wraps(before: read, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio)
            if passes < 0 || k + 1 < passes {
                let next = StreamRingState.wrapFrame(k + 1, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio)
                if next > read, next - read < Int64(frames) {
                    frames = Int(next - read)
                    ended = false
                }
            }
        }
        let available = silent ? 0 : Int(max(0, min(Int64(frames), written - read)))
        let capacity = stream.pointee.capacity
        let ramping = v.pointee.rampFramesLeft > 0
        var done = 0
        while done < available {
            let at = Int((read + Int64(done)) % Int64(capacity))
            let k = min(available - done, capacity - at)
            if ramping {
                _ = addRamped(left: stream.pointee.left + at, right: stream.pointee.right + at,
                              into: outLeft + done, right: outRight + done, count: k,
                              origin: v.pointee.rampOrigin, step: v.pointee.levelStep,
                              firstIndex: Int(v.pointee.rampElapsed) + done, panLeft: panLeft, panRight: panRight)
            } else {
                let level = v.pointee.level
                add(left: stream.pointee.left + at, right: stream.pointee.right + at, into: outLeft + done, right: outRight + done,
                    count: k, gainLeft: level * panLeft, gainRight: level * panRight)
            }
            done += k
        }
        if ramping { v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(Int(v.pointee.rampElapsed) + frames) }
        if available < frames, !silent { stream.pointee.underrunFrames.add(frames - available, ordering: .relaxed) }
        var wrapOffset = -1
        if sourceFrames > 0 {
            if frames > 0 {
                let k = StreamRingState.wraps(before: read + Int64(frames) - 1, sourceFrames: sourceFrames,
                                              sourceStart: sourceStart, ratio: ratio)
                if k >= 1 && (passes < 0 || k < passes) {
                    let wrap = StreamRingState.wrapFrame(k, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio)
                    if wrap >= read { wrapOffset = Int(wrap - read) }
                }
            }
        } else {
            let wrap = stream.pointee.wrapIndex.load(ordering: .acquiring)
            if wrap >= read && wrap < read + Int64(frames) { wrapOffset = Int(wrap - read) }
        }
        stream.pointee.readIndex.store(read + Int64(frames), ordering: .releasing)
        return StreamChunk(frames: frames, ended: ended, wrapOffset: wrapOffset, peak: peak)
    }
}
