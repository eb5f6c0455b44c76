import CMixKernels

// Ramped voices in groups: voices under a gain ramp (a fade, a choke, an envelope's segment)
// listed one after the other, into the main mix, mixed four or two in one pass over the outputs
// (`Mixing.addRampedQuad`, `Mixing.addRampedPair`), to the bit as one at a time in list order.
// A build for a CPU with 32 vector registers groups them (`Engine.groupsRampedVoices`).

extension Engine {
    /// Whether voices under a gain ramp listed one after the other are mixed four or two in one
    /// pass over the outputs (`Mixing.addRampedQuad`): the same output to the bit, faster where
    /// the CPU has the vector registers to hold four ramps (AVX-512's 32). On by default in a
    /// build for such a CPU (`isWideVectorBuild`). Any thread; a change takes effect from the
    /// next stretch the render thread mixes.
    public var groupsRampedVoices: Bool {
        get { rampGrouping.load(ordering: .relaxed) }
        set { rampGrouping.store(newValue, ordering: .relaxed) }
    }

    /// Whether varispeed voices are mixed sixteen frames at a time by the AVX-512 kernel
    /// (`sampler_varispeed_span_avx512`; otherwise frame by frame): the same output to the bit.
    /// On by default where the CPU has AVX-512 (`cpuHasAVX512`), whatever the build targets; it
    /// cannot be turned on elsewhere. Any thread; a change takes effect from the next stretch
    /// the render thread mixes.
    public var usesWideVarispeed: Bool {
        get { wideVarispeed.load(ordering: .relaxed) }
        set { wideVarispeed.store(newValue && Engine.cpuHasAVX512, ordering: .relaxed) }
    }

    /// Whether the CPU this runs on has AVX-512 (F, DQ and VL), read from the CPU.
    public static var cpuHasAVX512: Bool { sampler_has_avx512() != 0 }

    /// Whether this build targets a CPU with AVX-512's 32 vector registers: `scripts/release-flags.sh`
    /// defines `SAMPLER_WIDE_VECTORS` for such a CPU.
    public static var isWideVectorBuild: Bool {
        #if SAMPLER_WIDE_VECTORS
        true
        #else
        false
        #endif
    }

    /// Whether voice `v` sounds into the main mix at rate 1 (`Voice.isSoundingAtRateOneIntoMainMix`)
    /// under a ramp that goes on past the next `count` frames, its sound not ending in them, and
    /// its ramp's indices counted in floats (`Mixing.isCountedInFloats`): what `mixRampedVoice`
    /// mixes, and what a ramped group takes.
    @_noLocks @_noAllocation @inline(__always)
    func isRampedInMainMix(_ v: UnsafeMutablePointer<Voice>, count: Int) -> Bool {
        if !Voice.isSoundingAtRateOneIntoMainMix(v) { return false }
        if Int(v.pointee.rampFramesLeft) <= count { return false }
        if v.pointee.position &+ Int64(count) >= v.pointee.frames { return false }
        return Mixing.isCountedInFloats(Int(v.pointee.rampElapsed), count)
    }

    /// Groups of ramped voices (`mixRampedGroup`) one after the other from index `first` (the
    /// voice there is ramped into the main mix), as many as follow: returns how many voices they
    /// hold (0: the voice at `first` starts no group). With `readAhead` (beyond 96 listed voices,
    /// as for plain ones: below, the hardware follows voices read on at rate 1), each voice after
    /// the first gets the hints `mixVoices` gives a voice it steps over.
    @_noLocks @_noAllocation @inline(never)
    func mixRampedGroups(at first: Int, count: Int, from start: Int, to end: Int,
                         left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                         publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        mixRampedOrGlidingGroups(gliding: false, at: first, count: count, from: start, to: end, periodStart: 0, left: left, right: right,
                                 publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
    }

    /// The loop of `mixRampedGroups` and `mixGlidingGroups` (inlined into each, `gliding` a
    /// constant there).
    @_noLocks @_noAllocation @inline(__always)
    private func mixRampedOrGlidingGroups(gliding: Bool, at first: Int, count: Int, from start: Int, to end: Int, periodStart: Frame,
                                          left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                          publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end &- start
        var i = first
        while i &+ 1 < count {
            if i != first {
                let key = voiceList.key(at: i)
                if key.isTail { break }
                let v = voices + key.player
                if !(gliding ? isGlidingInMainMix(v, count: frames) : isRampedInMainMix(v, count: frames)) { break }
                if readAhead { prefetchAhead(from: i, count: count, frames: frames, plain: true) }
            }
            let n = gliding
                ? mixGlidingGroup(at: i, count: count, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                  publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
                : mixRampedGroup(at: i, count: count, from: start, to: end, left: left, right: right, publishing: publishing,
                                 readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
            if n == 0 { break }
            i &+= n
        }
        return i &- first
    }

    /// The voices of a ramped group (`gliding`: of a gliding group, all gliding for as many
    /// frames) listed from index `i` on: four or two, their first three hinted with `readAhead`;
    /// nil when the next voice is not one (c and d are a when only two).
    @_noLocks @_noAllocation @inline(__always)
    private func rampedGroupMembers(gliding: Bool, at i: Int, count: Int, frames: Int, readAhead: Bool)
        -> (n: Int, a: UnsafeMutablePointer<Voice>, b: UnsafeMutablePointer<Voice>, c: UnsafeMutablePointer<Voice>, d: UnsafeMutablePointer<Voice>)? {
        let keyB = voiceList.key(at: i &+ 1)
        if keyB.isTail { return nil }
        let a = voices + voiceList.key(at: i).player, b = voices + keyB.player
        let ramp = a.pointee.rampFramesLeft
        // Nested rather than `&&` (see `Engine+VoiceWalk.swift`).
        func joins(_ v: UnsafeMutablePointer<Voice>) -> Bool {
            if !gliding { return isRampedInMainMix(v, count: frames) }
            if !isGlidingInMainMix(v, count: frames) { return false }
            return v.pointee.rampFramesLeft == ramp
        }
        if !joins(b) { return nil }
        var n = 2
        var c = a, d = a
        if i &+ 3 < count {
            let keyC = voiceList.key(at: i &+ 2), keyD = voiceList.key(at: i &+ 3)
            if !VoiceKey.eitherIsTail(keyC, keyD) {
                c = voices + keyC.player
                d = voices + keyD.player
                if joins(c), joins(d) { n = 4 }
            }
        }
        if readAhead {
            for k in 1..<n { prefetchAhead(from: i &+ k, count: count, frames: frames, plain: true) }
        }
        return (n, a, b, c, d)
    }

    /// Mixes the ramped voices (`isRampedInMainMix`) listed from index `i` on (the one at `i` is
    /// one), four or two in one pass over the outputs, moves them on as `mixRampedVoice` would,
    /// and publishes and keeps them as `mixVoices` would; returns how many (0: the next voice is
    /// not one).
    @_noLocks @_noAllocation @inline(__always)
    private func mixRampedGroup(at i: Int, count: Int, from start: Int, to end: Int,
                                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end &- start
        guard let (n, a, b, c, d) = rampedGroupMembers(gliding: false, at: i, count: count, frames: frames, readAhead: readAhead) else { return 0 }
        // Each voice's share of the period's bound, from its levels before the block (as
        // `mixVoices` takes `largestGain` before `mixRampedVoice`).
        var sum = rampedShare(a) + rampedShare(b)
        if n == 4 {
            sum += rampedShare(c) + rampedShare(d)
            Mixing.addRampedQuad(rampedSource(a), rampedSource(b), rampedSource(c), rampedSource(d),
                                 into: left + start, right: right + start, count: frames)
            advanceRamped(a, count: frames, publishing: publishing)
            advanceRamped(b, count: frames, publishing: publishing)
            advanceRamped(c, count: frames, publishing: publishing)
            advanceRamped(d, count: frames, publishing: publishing)
        } else {
            Mixing.addRampedPair(rampedSource(a), rampedSource(b), into: left + start, right: right + start, count: frames)
            advanceRamped(a, count: frames, publishing: publishing)
            advanceRamped(b, count: frames, publishing: publishing)
        }
        bound += sum
        keepGroup(at: i, count: n, publishing: publishing, active: &active, kept: &kept)
        return n
    }

    /// Whether voice `v` glides in the next `count` frames, as `mixSegmentedVoice` mixes it: into
    /// the main mix at rate 1, not fading out, steady (no envelope, or at its sustain), its ramp
    /// ending within them (a controller's change of level), its sound not ending in them, its
    /// ramp's indices counted in floats.
    @_noLocks @_noAllocation @inline(__always)
    func isGlidingInMainMix(_ v: UnsafeMutablePointer<Voice>, count: Int) -> Bool {
        // isActive, isPaused, generalPath, stopsAfterRamp, (isStereo), isStreamed, isVarispeed, output.
        if Voice.flags(v) & 0xFFFF_FF00_FFFF_FFFF != 0x0000_0000_0000_0001 { return false }
        let ramp = Int(v.pointee.rampFramesLeft)
        if ramp <= 0 || ramp > count { return false }
        if v.pointee.position &+ Int64(count) >= v.pointee.frames { return false }
        if !v.pointee.envStage.isSteady { return false }
        return Mixing.isCountedInFloats(Int(v.pointee.rampElapsed), ramp)
    }

    /// Groups of gliding voices (`isGlidingInMainMix`) one after the other from index `first`,
    /// as `mixRampedGroups` groups ramped ones: returns how many voices they hold. The voices of
    /// a group glide for as many frames (a controller moved them on one frame): their glides in
    /// one pass (`Mixing.addRampedQuad`), then the rest of the block at their new levels in
    /// another (`Mixing.addQuad`), to the bit as `mixSegmentedVoice` one at a time in list order.
    @_noLocks @_noAllocation @inline(never)
    func mixGlidingGroups(at first: Int, count: Int, from start: Int, to end: Int, periodStart: Frame,
                          left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                          publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        mixRampedOrGlidingGroups(gliding: true, at: first, count: count, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                 publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
    }

    @_noLocks @_noAllocation @inline(__always)
    private func mixGlidingGroup(at i: Int, count: Int, from start: Int, to end: Int, periodStart: Frame,
                                 left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                 publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end &- start
        guard let (n, a, b, c, d) = rampedGroupMembers(gliding: true, at: i, count: count, frames: frames, readAhead: readAhead) else { return 0 }
        let glide = Int(a.pointee.rampFramesLeft), rest = frames &- glide
        let ended = periodStart + Int64(start &+ glide)
        var sum = rampedShare(a) + rampedShare(b)
        if n == 4 {
            sum += rampedShare(c) + rampedShare(d)
            Mixing.addRampedQuad(rampedSource(a), rampedSource(b), rampedSource(c), rampedSource(d),
                                 into: left + start, right: right + start, count: glide)
            endGlide(a, after: glide, at: ended)
            endGlide(b, after: glide, at: ended)
            endGlide(c, after: glide, at: ended)
            endGlide(d, after: glide, at: ended)
            if rest > 0 {
                Mixing.addQuad(plainSource(a, from: glide), plainSource(b, from: glide), plainSource(c, from: glide), plainSource(d, from: glide),
                               into: left + start + glide, right: right + start + glide, count: rest)
            }
            advanceGlided(a, count: frames, publishing: publishing)
            advanceGlided(b, count: frames, publishing: publishing)
            advanceGlided(c, count: frames, publishing: publishing)
            advanceGlided(d, count: frames, publishing: publishing)
        } else {
            Mixing.addRampedPair(rampedSource(a), rampedSource(b), into: left + start, right: right + start, count: glide)
            endGlide(a, after: glide, at: ended)
            endGlide(b, after: glide, at: ended)
            if rest > 0 {
                Mixing.addPair(plainSource(a, from: glide), plainSource(b, from: glide),
                               into: left + start + glide, right: right + start + glide, count: rest)
            }
            advanceGlided(a, count: frames, publishing: publishing)
            advanceGlided(b, count: frames, publishing: publishing)
        }
        bound += sum
        keepGroup(at: i, count: n, publishing: publishing, active: &active, kept: &kept)
        return n
    }

    /// A gliding voice at its glide's end, `glide` frames into the block: at its target level,
    /// its ramp over (`finishRamp` of a steady voice that does not stop).
    @_noLocks @_noAllocation @inline(__always)
    private func endGlide(_ v: UnsafeMutablePointer<Voice>, after glide: Int, at frame: Frame) {
        v.pointee.rampElapsed &+= Int32(truncatingIfNeeded: glide)
        v.pointee.rampFramesLeft = 0
        v.pointee.level = v.pointee.levelTarget
        v.pointee.rampEndedAt = frame
    }

    /// A voice's samples from `offset` frames past its position, at its level and pan.
    @_noLocks @_noAllocation @inline(__always)
    private func plainSource(_ v: UnsafeMutablePointer<Voice>, from offset: Int) -> Mixing.Source {
        let position = Int(v.pointee.position) &+ offset, level = v.pointee.level
        return Mixing.Source(left: v.pointee.left.unsafelyUnwrapped + position, right: v.pointee.right.unsafelyUnwrapped + position,
                             gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
    }

    @_noLocks @_noAllocation @inline(__always)
    private func advanceGlided(_ v: UnsafeMutablePointer<Voice>, count: Int, publishing: Bool) {
        v.pointee.position &+= Int64(count)
        if publishing { playerStates[v - voices].store(v.pointee.position << 2 | 1, ordering: .relaxed) }
    }

    /// A ramped voice's share of the period's bound before its block: its peak × its largest gain.
    @_noLocks @_noAllocation @inline(__always)
    private func rampedShare(_ v: UnsafeMutablePointer<Voice>) -> Float {
        v.pointee.peakGain * largestGain(v)
    }

    /// A ramped voice's samples from its position, its ramp and its pan factors.
    @_noLocks @_noAllocation @inline(__always)
    private func rampedSource(_ v: UnsafeMutablePointer<Voice>) -> Mixing.RampedSource {
        let position = Int(v.pointee.position)
        return Mixing.RampedSource(left: v.pointee.left.unsafelyUnwrapped + position, right: v.pointee.right.unsafelyUnwrapped + position,
                                   origin: v.pointee.rampOrigin, step: v.pointee.levelStep, firstIndex: Int(v.pointee.rampElapsed),
                                   panLeft: v.pointee.panLeft, panRight: v.pointee.panRight)
    }

    /// After a ramped voice's block of `count` frames: its level, ramp and position move on as
    /// `mixRampedVoice` leaves them; with `publishing`, its player's status is published as
    /// `mixVoices` publishes a sounding voice that is not paused or metered.
    @_noLocks @_noAllocation @inline(__always)
    private func advanceRamped(_ v: UnsafeMutablePointer<Voice>, count: Int, publishing: Bool) {
        let elapsed = Int(v.pointee.rampElapsed)
        v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(elapsed + count)
        v.pointee.rampElapsed &+= Int32(truncatingIfNeeded: count)
        v.pointee.rampFramesLeft &-= Int32(truncatingIfNeeded: count)
        v.pointee.position &+= Int64(count)
        if publishing { playerStates[v - voices].store(v.pointee.position << 2 | 1, ordering: .relaxed) }
    }
}
