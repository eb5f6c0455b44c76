// Filtered voices two at a time: the common case of a filtered instrument's voices (from memory,
// at rate 1, a steady level, into the main mix) mixed in pairs, so that the two biquads'
// recursions overlap (one voice's filter waits on its last output every frame). Each frame of
// the output gets the first voice's then the second's, as two `mixVoice` calls would add them.

extension Engine {
    /// Whether voice `v` sounds into the main mix, filtered and otherwise plain for the next
    /// `count` frames: active, not paused, not metered, from memory at rate 1, without a ramp,
    /// not reaching its sound's end.
    @_noLocks @_noAllocation @inline(__always)
    func isFilteredPlainInMainMix(_ v: UnsafeMutablePointer<Voice>, count: Int) -> Bool {
        // isActive, isPaused, generalPath (filtered only), isStreamed, isVarispeed, output.
        if Voice.flags(v) & 0xFFFF_FF00_00FF_FFFF != 0x0000_0000_0002_0001 { return false }
        if v.pointee.rampFramesLeft != 0 { return false }
        return v.pointee.position &+ Int64(count) < v.pointee.frames
    }

    /// Mixes filtered voices `a` and `b` (each `isFilteredPlainInMainMix` for the stretch) into
    /// `left`/`right` for block offsets `start ..< end`: the same bits as `mixVoice` for `a`
    /// and then for `b`.
    @_noLocks @_noAllocation @inline(never)
    func mixFilteredPair(_ a: UnsafeMutablePointer<Voice>, _ b: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                         left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let n = end - start
        let fa = voiceFilters + (a - voices), fb = voiceFilters + (b - voices)
        let pa = Int(a.pointee.position), pb = Int(b.pointee.position)
        let l = left + start, r = right + start
        if !a.pointee.isStereo, !b.pointee.isStereo {
            Filtering.addMonoPair(a.pointee.left! + pa, level: a.pointee.level, fa.pointee.coefficients, &fa.pointee.left,
                                  panLeft: a.pointee.panLeft, panRight: a.pointee.panRight,
                                  b.pointee.left! + pb, level: b.pointee.level, fb.pointee.coefficients, &fb.pointee.left,
                                  panLeft: b.pointee.panLeft, panRight: b.pointee.panRight, count: n, into: l, r)
        } else if a.pointee.isStereo, b.pointee.isStereo {
            let la = a.pointee.level, lb = b.pointee.level
            Filtering.addStereoPair(a.pointee.left! + pa, a.pointee.right! + pa,
                                    gainLeft: la * a.pointee.panLeft, gainRight: la * a.pointee.panRight,
                                    fa.pointee.coefficients, &fa.pointee.left, &fa.pointee.right,
                                    b.pointee.left! + pb, b.pointee.right! + pb,
                                    gainLeft: lb * b.pointee.panLeft, gainRight: lb * b.pointee.panRight,
                                    fb.pointee.coefficients, &fb.pointee.left, &fb.pointee.right, count: n, into: l, r)
        } else {
            addFiltered(a, fa, count: n, position: pa, into: l, r)
            addFiltered(b, fb, count: n, position: pb, into: l, r)
        }
        a.pointee.position += Int64(n)
        b.pointee.position += Int64(n)
    }

    /// Mixes filtered voice `v` (`isFilteredPlainInMainMix` for the stretch) into `left`/`right`
    /// for block offsets `start ..< end`, as `mixVoice` would.
    @_noLocks @_noAllocation
    func mixFilteredVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                          left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let n = end - start
        addFiltered(v, voiceFilters + (v - voices), count: n, position: Int(v.pointee.position), into: left + start, right + start)
        v.pointee.position += Int64(n)
    }

    /// One filtered voice's `count` frames from `position`, in one pass (`mixVoice`'s fused step).
    @_noLocks @_noAllocation @inline(__always)
    func addFiltered(_ v: UnsafeMutablePointer<Voice>, _ f: UnsafeMutablePointer<FilterState>, count: Int, position: Int,
                     into l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>) {
        let level = v.pointee.level
        if v.pointee.isStereo {
            Filtering.addStereo(v.pointee.left! + position, v.pointee.right! + position, count: count,
                                gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight,
                                f.pointee.coefficients, &f.pointee.left, &f.pointee.right, into: l, r)
        } else {
            Filtering.addMono(v.pointee.left! + position, count: count, level: level, f.pointee.coefficients, &f.pointee.left,
                              panLeft: v.pointee.panLeft, panRight: v.pointee.panRight, into: l, r)
        }
    }
}
