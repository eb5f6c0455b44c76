extension Mixing {
    /// Adds up to `maxCount` output frames of voice `v` played at `v.rate` (≠ 1), with linear
    /// interpolation between neighbouring frames (the frame after the last is the first again when
    /// the voice loops, silence otherwise), and the voice's gain or gain ramp. Stops early when the
    /// position reaches the end of the sound. Updates `v.fraction` (not `v.position`); returns the
    /// output frames written and the whole source frames consumed (the position may step past
    /// the end by the overshoot of the last step).
    @_noLocks @_noAllocation
    static func addVarispeed(_ v: UnsafeMutablePointer<Voice>, slot: SoundSlot,
                             into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                             maxCount: Int, panLeft: Float, panRight: Float) -> (output: Int, consumed: Int) {
        let frames = slot.frames
        let rate = v.pointee.rate
        let loops = v.pointee.loopsRemaining != 0
        let ramping = v.pointee.rampFramesLeft > 0
        let level = v.pointee.level
        let origin = v.pointee.rampOrigin, step = v.pointee.levelStep
        let elapsed = Int(v.pointee.rampElapsed)
        let start = v.pointee.position
        var pos = start
        var fraction = v.pointee.fraction
        var i = 0
        while i < maxCount && pos < frames {
            let next = pos + 1 < frames ? pos + 1 : (loops ? 0 : -1)
            let f = Float(fraction)
            let l0 = slot.left[Int(pos)], r0 = slot.right[Int(pos)]
            let l1 = next >= 0 ? slot.left[Int(next)] : 0
            let r1 = next >= 0 ? slot.right[Int(next)] : 0
            let g = ramping ? origin + step * Float(elapsed + i) : level
            outLeft[i] += (l0 + (l1 - l0) * f) * g * panLeft
            outRight[i] += (r0 + (r1 - r0) * f) * g * panRight
            fraction += rate
            let whole = Int64(fraction)  // fraction ≥ 0: truncation is floor
            fraction -= Double(whole)
            pos += whole
            i += 1
        }
        v.pointee.fraction = fraction
        if ramping { v.pointee.level = origin + step * Float(elapsed + i) }
        return (i, Int(pos - start))
    }
}

/// Per-voice meters, accumulated on the render thread. Real-time safe.
enum Metering {
    /// Adds the peak and sum of squares of one voice's contribution (`count` frames) to its meters.
    @_noLocks @_noAllocation
    static func accumulate(_ v: UnsafeMutablePointer<Voice>, left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) {
        var peakL = v.pointee.meterPeakLeft, peakR = v.pointee.meterPeakRight
        var sumL: Float = 0, sumR: Float = 0
        for i in 0..<count {
            let l = left[i], r = right[i]
            peakL = max(peakL, abs(l))
            peakR = max(peakR, abs(r))
            sumL += l * l
            sumR += r * r
        }
        v.pointee.meterPeakLeft = peakL
        v.pointee.meterPeakRight = peakR
        v.pointee.meterSumLeft += Double(sumL)
        v.pointee.meterSumRight += Double(sumR)
    }
}
