extension Mixing {
    /// What mixing a stretch of a streamed voice did.
    struct StreamChunk {
        /// Output frames covered (sounding, or silent for missing data).
        var frames: Int
        /// The stream ended at the end of these frames.
        var ended: Bool
        /// Offset inside these frames where the stream wrapped to its file's start, or -1.
        var wrapOffset: Int
    }

    /// Adds up to `count` frames of a streamed voice from its ring, with its gain or gain ramp.
    /// Frames the disk thread has not written yet play as silence and are counted as underrun;
    /// the read index moves on regardless, so the stream stays in time. Stops at the stream's end.
    @_noLocks @_noAllocation
    static func addStream(_ stream: UnsafeMutablePointer<StreamRingState>, voice v: UnsafeMutablePointer<Voice>,
                          into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                          count: Int, panLeft: Float, panRight: Float) -> StreamChunk {
        let read = stream.pointee.readIndex.load(ordering: .relaxed)
        let written = stream.pointee.writeIndex.load(ordering: .acquiring)
        let end = stream.pointee.endIndex.load(ordering: .acquiring)
        var frames = count
        var ended = false
        if end != .max && read + Int64(count) >= end {
            frames = Int(max(0, end - read))
            ended = true
        }
        let available = Int(max(0, min(Int64(frames), written - read)))
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
        if available < frames { stream.pointee.underrunFrames.add(frames - available, ordering: .relaxed) }
        let wrap = stream.pointee.wrapIndex.load(ordering: .acquiring)
        var wrapOffset = -1
        if wrap >= read && wrap < read + Int64(frames) { wrapOffset = Int(wrap - read) }
        stream.pointee.readIndex.store(read + Int64(frames), ordering: .releasing)
        return StreamChunk(frames: frames, ended: ended, wrapOffset: wrapOffset)
    }
}
