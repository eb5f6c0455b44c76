import CMixKernels

extension Mixing {
    /// Adds up to `maxCount` output frames of voice `v` played at `v.rate` (≠ 1), with linear
    /// interpolation between neighbouring frames (the frame after the last is the first again when
    /// the voice loops, silence otherwise), and the voice's gain (× pan, as `Mixing.add`) or gain
    /// ramp (then × pan, as `Mixing.addRamped`). Stops early when the
    /// position reaches the end of the sound. Updates `v.phase` (not `v.position`); returns the
    /// output frames written and the whole source frames consumed (the position may step past
    /// the end by the overshoot of the last step).
    ///
    /// The phase is fixed point (32.32, `Voice.rateStep`): every step adds the same integer, so
    /// `skipVarispeed` reaches the same position and phase in one product. The interpolation
    /// weight is the phase's top 24 bits, exactly.
    @_noLocks @_noAllocation
    static func addVarispeed(_ v: UnsafeMutablePointer<Voice>, slot: SoundSlot,
                             into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                             maxCount: Int, panLeft: Float, panRight: Float, wide: Bool) -> (output: Int, consumed: Int) {
        let frames = slot.frames
        let stepWhole = Int64(v.pointee.rateStep >> 32)
        let stepPhase = UInt64(UInt32(truncatingIfNeeded: v.pointee.rateStep))
        let loops = v.pointee.loopsRemaining != 0
        let ramping = v.pointee.rampFramesLeft > 0
        let level = v.pointee.level
        let origin = v.pointee.rampOrigin, step = v.pointee.levelStep
        let elapsed = Int(v.pointee.rampElapsed)
        // Without a ramp, the gain × pan product once, as plain voices have it (`Mixing.add`).
        let gainLeft = level * panLeft, gainRight = level * panRight
        let start = v.pointee.position
        var pos = start
        var phase = v.pointee.phase
        var i = 0
        // The frames whose next frame is inside the sound, each from its own position
        // (start + k × step, in one product): no dependency from frame to frame, and no test
        // of the sound's end inside the loop. Every frame gets exactly the arithmetic of the
        // loop below.
        if frames < 1 << 31, pos < frames - 1 {
            let rate = v.pointee.rateStep
            let at = UInt64(pos) << 32 | UInt64(phase)
            let count = min(maxCount, Int(((UInt64(frames - 1) << 32) - at + rate - 1) / rate))
            let sl = slot.left, sr = slot.right
            if ramping {
                addRampedVarispeedSpan(left: sl, right: sr, at: at, rate: rate, count: count, into: outLeft, right: outRight,
                                       origin: origin, step: step, elapsed: elapsed, panLeft: panLeft, panRight: panRight, wide: wide)
            } else {
                addVarispeedSpan(left: sl, right: sr, at: at, rate: rate, count: count, into: outLeft, right: outRight,
                                 gainLeft: gainLeft, gainRight: gainRight, wide: wide)
            }
            let moved = at &+ UInt64(count) &* rate
            pos = Int64(moved >> 32)
            phase = UInt32(truncatingIfNeeded: moved)
            i = count
        }
        // The rest, frame by frame: the last frame's neighbour (the first again, the tail's first, or silence).
        while i < maxCount && pos < frames {
            // A head's last frame: the first of its tail follows, held beside the head; so does
            // the next frame read of a tail partly read.
            let next = pos + 1 < frames ? pos + 1 : (loops ? slot.loopStart : (slot.tail >= 0 || slot.tailBuffer >= 0 ? pos + 1 : -1))
            let f = Float(phase >> 8) * 0x1p-24
            let l0 = slot.left[Int(pos)], r0 = slot.right[Int(pos)]
            let l1 = next >= 0 ? slot.left[Int(next)] : 0
            let r1 = next >= 0 ? slot.right[Int(next)] : 0
            if ramping {
                let g = origin + step * Float(elapsed + i)
                outLeft[i] += (l0 + (l1 - l0) * f) * g * panLeft
                outRight[i] += (r0 + (r1 - r0) * f) * g * panRight
            } else {
                outLeft[i] += (l0 + (l1 - l0) * f) * gainLeft
                outRight[i] += (r0 + (r1 - r0) * f) * gainRight
            }
            let sum = UInt64(phase) + stepPhase
            phase = UInt32(truncatingIfNeeded: sum)
            pos += stepWhole + Int64(sum >> 32)
            i += 1
        }
        v.pointee.phase = phase
        if ramping { v.pointee.level = origin + step * Float(elapsed + i) }
        return (i, Int(pos - start))
    }

    /// Adds `count` output frames at a steady gain from fixed-point source position `at` (32.32)
    /// on, stepping by `rate`: frame k interpolates linearly between source frames j and j + 1,
    /// where j is the whole part of `at + k × rate`, by the top 24 bits of its fraction. The
    /// caller knows every j + 1 is inside the sound. A mono source (`left == right`) is read and
    /// interpolated once per frame. `addVarispeed` and `Engine.mixVarispeedVoice` both mix
    /// through it. With `wide` (the CPU has AVX-512: `Engine.usesWideVarispeed`), sixteen frames
    /// at a time by `sampler_varispeed_span_avx512`, the same arithmetic to the bit; otherwise
    /// frame by frame here.
    @_noLocks @_noAllocation @inline(__always)
    static func addVarispeedSpan(left sl: UnsafeMutablePointer<Float>, right sr: UnsafeMutablePointer<Float>, at: UInt64, rate: UInt64,
                                 count: Int, into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                                 gainLeft: Float, gainRight: Float, wide: Bool) {
        if wide {
            // A C function the performance checker cannot see into. Its contract: it reads the
            // sources and writes the outputs only, and neither locks nor allocates.
            _unsafePerformance {
                sampler_varispeed_span_avx512(sl, sr, at, rate, count, outLeft, outRight, gainLeft, gainRight)
            }
            return
        }
        if sl == sr {
            for k in 0..<count {
                let p = at &+ UInt64(k) &* rate
                let j = Int(truncatingIfNeeded: p >> 32)
                let f = Float(UInt32(truncatingIfNeeded: p) >> 8) * 0x1p-24
                let a = sl[j], b = sl[j &+ 1]
                let x = a + (b - a) * f
                outLeft[k] += x * gainLeft
                outRight[k] += x * gainRight
            }
        } else {
            for k in 0..<count {
                let p = at &+ UInt64(k) &* rate
                let j = Int(truncatingIfNeeded: p >> 32)
                let f = Float(UInt32(truncatingIfNeeded: p) >> 8) * 0x1p-24
                let a = sl[j], b = sl[j &+ 1], c = sr[j], d = sr[j &+ 1]
                outLeft[k] += (a + (b - a) * f) * gainLeft
                outRight[k] += (c + (d - c) * f) * gainRight
            }
        }
    }

    /// `addVarispeedSpan` under a gain ramp: frame k's interpolated sample times
    /// `origin + step × (elapsed + k)`, then times the pan's factor. With `wide`, by
    /// `sampler_varispeed_ramped_span_avx512`, the same arithmetic to the bit.
    @_noLocks @_noAllocation @inline(__always)
    static func addRampedVarispeedSpan(left sl: UnsafeMutablePointer<Float>, right sr: UnsafeMutablePointer<Float>, at: UInt64,
                                       rate: UInt64, count: Int, into outLeft: UnsafeMutablePointer<Float>,
                                       right outRight: UnsafeMutablePointer<Float>, origin: Float, step: Float, elapsed: Int,
                                       panLeft: Float, panRight: Float, wide: Bool) {
        if wide {
            // As in `addVarispeedSpan`: the C function reads the sources, writes the outputs,
            // and neither locks nor allocates.
            _unsafePerformance {
                sampler_varispeed_ramped_span_avx512(sl, sr, at, rate, count, outLeft, outRight, origin, step, elapsed, panLeft, panRight)
            }
            return
        }
        if sl == sr {
            // Mono: the source read and interpolated once per frame (the same bits twice).
            for k in 0..<count {
                let p = at &+ UInt64(k) &* rate
                let j = Int(truncatingIfNeeded: p >> 32)
                let f = Float(UInt32(truncatingIfNeeded: p) >> 8) * 0x1p-24
                let a = sl[j], b = sl[j &+ 1]
                let x = (a + (b - a) * f) * (origin + step * Float(elapsed &+ k))
                outLeft[k] += x * panLeft
                outRight[k] += x * panRight
            }
        } else {
            for k in 0..<count {
                let p = at &+ UInt64(k) &* rate
                let j = Int(truncatingIfNeeded: p >> 32)
                let f = Float(UInt32(truncatingIfNeeded: p) >> 8) * 0x1p-24
                let g = origin + step * Float(elapsed &+ k)
                let a = sl[j], b = sl[j &+ 1], c = sr[j], d = sr[j &+ 1]
                outLeft[k] += (a + (b - a) * f) * g * panLeft
                outRight[k] += (c + (d - c) * f) * g * panRight
            }
        }
    }

    /// What `addVarispeed` does to voice `v` without its samples, in closed form (no loop over
    /// the frames): the output frames it would play, up to `maxCount` or the sound's end, and the
    /// whole source frames consumed; updates `v.phase` and, while ramping, `v.level` the same way.
    @_noLocks @_noAllocation
    static func skipVarispeed(_ v: UnsafeMutablePointer<Voice>, frames: Int64, maxCount: Int) -> (output: Int, consumed: Int) {
        let start = v.pointee.position
        guard maxCount > 0, start < frames else { return (0, 0) }
        let n: Int, after: (whole: Int64, phase: UInt32)
        if frames < 1 << 31 {
            // In 64 bits (every product below is under 2^64): no 128-bit division.
            let step = v.pointee.rateStep
            let at = UInt64(start) << 32 | UInt64(v.pointee.phase)
            let toEnd = ((UInt64(frames) << 32) - at + step - 1) / step
            let count = min(UInt64(maxCount), toEnd)
            let moved = at + count * step
            n = Int(count)
            after = (Int64(moved >> 32), UInt32(truncatingIfNeeded: moved))
        } else {
            let step = UInt128(v.pointee.rateStep)
            let at = UInt128(UInt64(start)) << 32 | UInt128(v.pointee.phase)
            // The first step count that reaches the end: ⌈(end − at) / step⌉.
            let toEnd = ((UInt128(UInt64(frames)) << 32) - at + step - 1) / step
            let count = min(UInt128(maxCount), toEnd)
            let moved = at + count * step
            n = Int(count)
            after = (Int64(moved >> 32), UInt32(truncatingIfNeeded: moved))
        }
        v.pointee.phase = after.phase
        if v.pointee.rampFramesLeft > 0 {
            v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(Int(v.pointee.rampElapsed) + n)
        }
        return (n, Int(after.whole - start))
    }

    /// `skipPasses` for a voice of `slot` just after a wrap (at or past its loop start): the
    /// passes run from the loop start to the end.
    @_noLocks @_noAllocation
    static func skipLoopPasses(_ v: UnsafeMutablePointer<Voice>, slot: SoundSlot, maxCount: Int, maxPasses: Int) -> (passes: Int, output: Int) {
        let start = slot.loopStart
        guard start > 0 else { return skipPasses(v, frames: slot.frames, maxCount: maxCount, maxPasses: maxPasses) }
        guard v.pointee.position >= start else { return (0, 0) }
        v.pointee.position -= start
        let skipped = skipPasses(v, frames: slot.frames - start, maxCount: maxCount, maxPasses: maxPasses)
        v.pointee.position += start
        return skipped
    }

    /// For a looping voice `v` at the start of a pass (`position` < `frames`) (a ramp's frames are the caller's to count), the
    /// whole passes that end within `maxCount` output frames, up to `maxPasses`, skipped in closed
    /// form: returns how many and the output frames they took; `v.position` and `v.phase` are
    /// where the last of them wraps to, as that many passes played frame by frame would leave
    /// them. (Not for sounds a single step can cross twice, shorter than the rate: none skipped.)
    @_noLocks @_noAllocation
    static func skipPasses(_ v: UnsafeMutablePointer<Voice>, frames: Int64, maxCount: Int, maxPasses: Int) -> (passes: Int, output: Int) {
        guard maxCount > 0, maxPasses > 0, frames > 0, v.pointee.position < frames else { return (0, 0) }
        let rateStep: UInt64 = v.pointee.isVarispeed ? v.pointee.rateStep : 1 << 32
        if frames < 1 << 32, rateStep > UInt64(frames) << 32 { return (0, 0) }
        if frames < 1 << 31, maxCount < 1 << 22, rateStep <= 1 << 34 {
            // In 64 bits: positions below 2^63, maxCount × step below 2^56.
            let length = UInt64(frames) << 32
            let at = UInt64(v.pointee.position) << 32 | UInt64(v.pointee.phase)
            let k = min((at + UInt64(maxCount) * rateStep) / length, UInt64(maxPasses))
            if k == 0 { return (0, 0) }
            let n = (k * length - at + rateStep - 1) / rateStep
            let after = at + n * rateStep - k * length
            v.pointee.position = Int64(after >> 32)
            v.pointee.phase = UInt32(truncatingIfNeeded: after)
            return (Int(k), Int(n))
        }
        let step = UInt128(rateStep)
        let length = UInt128(UInt64(frames)) << 32
        let at = UInt128(UInt64(v.pointee.position)) << 32 | UInt128(v.pointee.phase)
        // Each pass ends on the first step at or past the sound's end and wraps by its length,
        // so pass k ends on step ⌈(k × length − at) / step⌉.
        let reach = at + UInt128(maxCount) * step
        var k = reach / length
        if k > UInt128(maxPasses) { k = UInt128(maxPasses) }
        if k == 0 { return (0, 0) }
        let n = (k * length - at + step - 1) / step
        let after = at + n * step - k * length
        v.pointee.position = Int64(after >> 32)
        v.pointee.phase = UInt32(truncatingIfNeeded: after)
        return (Int(k), Int(n))
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
