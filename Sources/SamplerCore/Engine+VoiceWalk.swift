import CPrefetch

// The voice-list walk: every listed voice and tail mixed in player order, plain and streamed
// voices four or two at a time, prefetch hints ahead of the walk.

extension Engine {
    /// Adds every sounding voice (and every fading tail) into `left`/`right` for block offsets
    /// `start ..< end`, walking the voice list: voice p, then tail p, in player order. With
    /// `publishing` (the period's last stretch, `end` = its length), also publishes each player's
    /// status and drops from the list what no longer needs the render thread. Returns the sum
    /// over the voices mixed of their sound's peak × their largest gain in the stretch: no
    /// sample it added to is larger in magnitude (to rounding).
    @_noLocks @_noAllocation
    func mixVoices(from start: Int, to end: Int, periodStart: Frame,
                   buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, busCount: Int,
                   publishing: Bool, silent: Bool) -> Float {
        var bound: Float = 0
        var active = 0
        var kept = 0
        let count = voiceList.count
        // A few voices' records and samples stay close from one period to the next: hints would
        // cost more than they save. Up to a hundred or so voices at rate 1 without a ramp (from
        // sounds or rings), the hardware's prefetcher follows their samples (each read on from
        // where the last period left it) and hints for them only cost; beyond that, and for
        // ramps, tails and varispeed, they pay (docs/performance.md has the measurements).
        let readAhead = count > 16
        let plainSamplesAhead = count > 96
        // Most voices play into the main mix: its buffers without a load per voice.
        let mainLeft = buses[0], mainRight = buses[1]
        let groupsRamps = rampGrouping.load(ordering: .relaxed)
        let frames = end - start
        // The next tail in the list was mixed with its voice; the next voice with this one.
        var tailMixed = false
        var pairMixed = false
        var i = 0
        while i < count {
            let key = voiceList.key(at: i)
            let p = key.player
            var stays: Bool
            // A plain or streamed voice about to be mixed in a group: up to `plainSamplesAhead`,
            // no hints (the voices ahead of it are most likely of its kind too, and the hardware
            // follows them).
            var plainHere = false, streamHere = false, rampHere = false, glideHere = false
            if !silent, i + 1 < count, !key.isTail {
                plainHere = isPlainInMainMix(voices + p, count: frames, busCount: busCount)
                if !plainHere {
                    streamHere = voices[p].isStreamed
                    if !streamHere, groupsRamps {
                        rampHere = isRampedInMainMix(voices + p, count: frames)
                        if !rampHere { glideHere = isGlidingInMainMix(voices + p, count: frames) }
                    }
                }
            }
            if readAhead {
                if plainSamplesAhead || !(plainHere || streamHere || rampHere || glideHere) {
                    prefetchAhead(from: i, count: count, frames: frames, plain: plainSamplesAhead)
                }
            }
            // Plain voices listed one after the other, into the main mix (the common case with
            // many voices): mixed four or two at a time (`mixPlainGroup`).
            // (A voice followed by a tail starts no group: `mixPlainGroup` would find out in a call.)
            if plainHere, !voiceList.key(at: i + 1).isTail {
                let n = mixPlainGroups(at: i, count: count, from: start, to: end, left: mainLeft, right: mainRight,
                                       busCount: busCount, publishing: publishing, readAhead: plainSamplesAhead,
                                       bound: &bound, active: &active, kept: &kept)
                if n > 0 {
                    i += n
                    continue
                }
            } else if streamHere {
                let n = mixStreamGroups(at: i, count: count, from: start, to: end, left: mainLeft, right: mainRight,
                                        busCount: busCount, publishing: publishing, readAhead: plainSamplesAhead,
                                        bound: &bound, active: &active, kept: &kept)
                if n > 0 {
                    i += n
                    continue
                }
            } else if rampHere {
                let n = mixRampedGroups(at: i, count: count, from: start, to: end, left: mainLeft, right: mainRight,
                                        publishing: publishing, readAhead: plainSamplesAhead,
                                        bound: &bound, active: &active, kept: &kept)
                if n > 0 {
                    i += n
                    continue
                }
            } else if glideHere {
                let n = mixGlidingGroups(at: i, count: count, from: start, to: end, periodStart: periodStart, left: mainLeft, right: mainRight,
                                         publishing: publishing, readAhead: plainSamplesAhead,
                                         bound: &bound, active: &active, kept: &kept)
                if n > 0 {
                    i += n
                    continue
                }
            }
            // Not grouped after all: the hints skipped above for a voice about to be.
            if readAhead, !plainSamplesAhead, plainHere || streamHere || rampHere || glideHere {
                prefetchAhead(from: i, count: count, frames: frames, plain: false)
            }
            defer { i += 1 }
            if !key.isTail {
                let v = voices + p
                // Nested rather than `&&`: the autoclosure of `&&` would capture (and retain) self.
                if v.pointee.isActive {
                    if !v.pointee.isPaused {
                        let o = Int(v.pointee.output)
                        let routed = o != 0 && o < busCount
                        let left = routed ? buses[2 * o] : mainLeft, right = routed ? buses[2 * o + 1] : mainRight
                        if plainHere {
                            // Known plain, sounding, into the main mix and not silent (above); its
                            // own tail listed next (a declick) mixed in the same pass when it can be.
                            bound += v.pointee.peakGain * abs(v.pointee.level)
                            var paired = false
                            if i + 1 < count, voiceList.key(at: i + 1).rawValue == key.tail.rawValue {
                                if let share = mixPlainWithTail(v, tails + p, from: start, to: end, left: left, right: right,
                                                                busCount: busCount) {
                                    bound += share
                                    paired = true
                                }
                            }
                            if paired {
                                tailMixed = true
                            } else {
                                addPlainVoice(v, from: start, to: end, left: left, right: right)
                            }
                        } else if pairMixed {
                            // Mixed with the filtered voice before it (`mixFilteredPair`).
                            pairMixed = false
                        } else if !silent, isFilteredPlainInMainMix(v, count: frames) {
                            // Two filtered voices at once where the next is one too: their recursions overlap.
                            if i + 1 < count, !voiceList.key(at: i + 1).isTail,
                               isFilteredPlainInMainMix(voices + voiceList.key(at: i + 1).player, count: frames) {
                                mixFilteredPair(v, voices + voiceList.key(at: i + 1).player, from: start, to: end, left: left, right: right)
                                pairMixed = true
                            } else {
                                mixFilteredVoice(v, from: start, to: end, left: left, right: right)
                            }
                            bound = .infinity
                        } else if mixPlainVoice(v, from: start, to: end, left: left, right: right, silent: silent) {
                            bound += v.pointee.peakGain * abs(v.pointee.level)
                        } else if mixPlainStream(v, from: start, to: end, left: left, right: right, silent: silent) {
                            bound += v.pointee.readPeakGain * abs(v.pointee.level)
                        } else {
                            let gain = largestGain(v)
                            if !mixVarispeedVoice(v, from: start, to: end, left: left, right: right, silent: silent),
                               !mixRampedVoice(v, from: start, to: end, left: left, right: right, silent: silent) {
                                if !mixSegmentedVoice(v, player: p, from: start, to: end, periodStart: periodStart, left: left,
                                                      right: right, silent: silent) {
                                    mixVoice(v, player: p, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                             silent: silent)
                                }
                            }
                            // After mixing: a stream's samples are bounded by its ring's peak when it read them;
                            // a filter's output by nothing known here (a resonance amplifies).
                            bound += v.pointee.isFiltered ? .infinity : v.pointee.readPeakGain * gain
                        }
                    }
                }
                if !publishing { continue }
                if v.pointee.isActive { active += 1 }
                stays = publish(v, player: p, frameCount: end)
            } else {
                let t = tails + p
                if tailMixed {
                    // Mixed with its voice (`mixPlainWithTail`) in a stretch that publishes nothing.
                    tailMixed = false
                } else if t.pointee.isActive {
                    let o = Int(t.pointee.output)
                    let bus = o < busCount ? 2 * o : 0
                    let left = buses[bus], right = buses[bus + 1]
                    bound += t.pointee.isFiltered ? .infinity : t.pointee.peakGain * largestGain(t)
                    if !mixRampedVoice(t, from: start, to: end, left: left, right: right, silent: silent) {
                        if !mixSegmentedVoice(t, player: -1, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                              silent: silent) {
                            mixVoice(t, player: -1, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                     silent: silent)
                        }
                    }
                }
                if !publishing { continue }
                stays = t.pointee.isActive
            }
            if stays {
                // Until a voice leaves the list, every key stays where it is.
                if kept != i { voiceList.keep(i, at: kept) }
                kept += 1
            } else {
                voiceList.drop(i)
            }
            if tailMixed {
                // Its tail, listed next, was mixed with it: kept or dropped here, with the hints
                // its own pass would give, and not walked.
                tailMixed = false
                let next = i + 1
                if readAhead { prefetchAhead(from: next, count: count, frames: frames, plain: plainSamplesAhead) }
                if tails[p].isActive {
                    if kept != next { voiceList.keep(next, at: kept) }
                    kept += 1
                } else {
                    voiceList.drop(next)
                }
                i += 1
            }
        }
        if publishing {
            voiceList.truncate(kept)
            activeVoiceCounter.store(active, ordering: .relaxed)
            if active > peakVoiceCounter.load(ordering: .relaxed) { peakVoiceCounter.store(active, ordering: .relaxed) }
        }
        return bound
    }

    /// Groups of plain voices (`mixPlainGroup`) one after the other from index `first` (the
    /// voice there is plain into the main mix), as many as follow: returns how many voices they
    /// hold (0: the voice at `first` starts no group). One call for a run of groups, out of
    /// line, so that the loop in `mixVoices` keeps its registers for the other voices. With
    /// `readAhead`, each group after the first gets the hints `mixVoices` gives a group's first
    /// voice.
    @_noLocks @_noAllocation @inline(never)
    func mixPlainGroups(at first: Int, count: Int, from start: Int, to end: Int,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                        publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        mixGroups(streamed: false, at: first, count: count, from: start, to: end, left: left, right: right, busCount: busCount,
                  publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
    }

    /// Groups of streamed voices (`mixStreamGroup`) one after the other from index `first`, as
    /// many as follow, as `mixPlainGroups` does plain ones: returns how many voices they hold.
    @_noLocks @_noAllocation @inline(never)
    func mixStreamGroups(at first: Int, count: Int, from start: Int, to end: Int,
                         left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                         publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        mixGroups(streamed: true, at: first, count: count, from: start, to: end, left: left, right: right, busCount: busCount,
                  publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
    }

    /// The loop of `mixPlainGroups` and `mixStreamGroups` (inlined into each, `streamed` a
    /// constant there).
    @_noLocks @_noAllocation @inline(__always)
    private func mixGroups(streamed: Bool, at first: Int, count: Int, from start: Int, to end: Int,
                           left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                           publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        var i = first
        while i &+ 1 < count {
            if i != first {
                // A plain group's first voice is checked here; a streamed group's voices are all
                // checked by `mixStreamGroup`.
                if !streamed {
                    let key = voiceList.key(at: i)
                    if key.isTail { break }
                    if !isPlainInMainMix(voices + key.player, count: end &- start, busCount: busCount) { break }
                }
                if readAhead { prefetchAhead(from: i, count: count, frames: end &- start, plain: true) }
            }
            let n = streamed
                ? mixStreamGroup(at: i, count: count, from: start, to: end, left: left, right: right, busCount: busCount,
                                 publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
                : mixPlainGroup(at: i, count: count, from: start, to: end, left: left, right: right, busCount: busCount,
                                publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
            if n == 0 { break }
            i &+= n
        }
        return i &- first
    }

    /// Mixes the plain voices into the main mix (`isPlainInMainMix`) listed from index `i` on
    /// (the one at `i` is one), four or two in one pass over the outputs (`Mixing.addQuad`,
    /// `Mixing.addPair`: to the bit as one at a time, in list order), and publishes and keeps
    /// them as `mixVoices` would; returns how many (0: none, the next voice is not one). With
    /// `readAhead`, hints for the voices as far ahead of the others as `mixVoices` gives for the
    /// first.
    @_noLocks @_noAllocation @inline(__always)
    func mixPlainGroup(at i: Int, count: Int, from start: Int, to end: Int,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                       publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end - start
        let p = voiceList.key(at: i).player
        let keyB = voiceList.key(at: i + 1)
        let q = keyB.player
        var n = 0
        if keyB.isTail { return 0 }
        if !isPlainInMainMix(voices + q, count: frames, busCount: busCount) { return 0 }
        if i + 3 < count, let quad = plainQuad(from: i, count: frames, busCount: busCount) {
            n = 4
            if readAhead {
                for k in 1...3 {
                    prefetchAhead(from: i + k, count: count, frames: frames, plain: true)
                }
            }
            let a = voices + p, b = voices + q, c = voices + quad.c, d = voices + quad.d
            Mixing.addQuad(plainSource(a), plainSource(b), plainSource(c), plainSource(d),
                           into: left + start, right: right + start, count: frames)
            a.pointee.position &+= Int64(frames)
            b.pointee.position &+= Int64(frames)
            c.pointee.position &+= Int64(frames)
            d.pointee.position &+= Int64(frames)
            bound += groupedShare(a, streamed: false, publishing: publishing) + groupedShare(b, streamed: false, publishing: publishing)
                + groupedShare(c, streamed: false, publishing: publishing) + groupedShare(d, streamed: false, publishing: publishing)
        } else {
            n = 2
            if readAhead {
                prefetchAhead(from: i + 1, count: count, frames: frames, plain: true)
            }
            let a = voices + p, b = voices + q
            Mixing.addPair(plainSource(a), plainSource(b), into: left + start, right: right + start, count: frames)
            a.pointee.position &+= Int64(frames)
            b.pointee.position &+= Int64(frames)
            bound += groupedShare(a, streamed: false, publishing: publishing) + groupedShare(b, streamed: false, publishing: publishing)
        }
        keepGroup(at: i, count: n, publishing: publishing, active: &active, kept: &kept)
        return n
    }

    /// A voice mixed in a group (`mixPlainGroup` of plain voices, `mixStreamGroup` of streamed
    /// ones), from the group's voices at hand: with `publishing`, publishes its player as
    /// `mixVoices` does a sounding voice that is not paused or metered (none in a group is);
    /// returns its share of the period's bound (a stream's from its ring's peak). A group sums
    /// its shares in registers and adds them to `bound` (in memory: an `inout` of an
    /// out-of-line call) once; the bound is one to rounding whatever the order of its terms.
    @_noLocks @_noAllocation @inline(__always)
    func groupedShare(_ v: UnsafeMutablePointer<Voice>, streamed: Bool, publishing: Bool) -> Float {
        if publishing { playerStates[v - voices].store(v.pointee.position << 2 | 1, ordering: .relaxed) }
        let peakGain = streamed ? Voice.peakGain(v.pointee.streamPeak, v.pointee.panLeft, v.pointee.panRight) : v.pointee.peakGain
        return peakGain * abs(v.pointee.level)
    }

    /// After the `n` voices listed from index `i` were mixed as one group and published: with
    /// `publishing`, counted active and kept, as `mixVoices` does.
    @_noLocks @_noAllocation @inline(__always)
    func keepGroup(at i: Int, count n: Int, publishing: Bool, active: inout Int, kept: inout Int) {
        if !publishing { return }
        active += n
        if kept != i {
            for k in 0..<n { voiceList.keep(i + k, at: kept + k) }
        }
        kept += n
    }

    /// The largest level voice `v` can have while `mixVoice` plays a stretch of it: its level,
    /// the ends of its ramp, and its envelope's full level (the segments it may chain into).
    @_noLocks @_noAllocation @inline(__always)
    func largestGain(_ v: UnsafeMutablePointer<Voice>) -> Float {
        max(max(abs(v.pointee.level), abs(v.pointee.levelTarget)), max(abs(v.pointee.rampOrigin), abs(v.pointee.envBase)))
    }

    /// Prefetch hints, so that what the next voices need is on its way while the voice listed
    /// at `i` mixes (with thousands of voices none of it is in cache at the start of a period):
    /// the record of the voice listed 8 places ahead, and the first samples of the one 4 places
    /// ahead, whose record the previous hints brought in. Hints only: nothing waits for them,
    /// and a hint at memory that is no longer there does nothing (a listed voice may be
    /// inactive, its sound freed).
    @_noLocks @_noAllocation @inline(__always)
    func prefetchAhead(from i: Int, count: Int, frames: Int, plain: Bool) {
        let near = i &+ 4, far = i &+ 8
        if far < count { prefetch(UnsafeRawPointer(voice(voiceList.key(at: far)))) }
        guard near < count else { return }
        let nearKey = voiceList.key(at: near)
        let v = voice(nearKey)
        if !v.pointee.isActive { return }
        // Without `plain`, only for what the hardware does not follow as well: varispeed, ramps
        // and tails (not for voices at rate 1 without a ramp, from a sound or a stream's ring).
        if !plain, v.pointee.rampFramesLeft == 0, !v.pointee.isVarispeed { return }
        guard let left = v.pointee.left, let right = v.pointee.right else { return }
        // A mono voice mixed with its declick tail (`mixPlainWithTail`), and such a tail: the
        // pass reads two streams, which the hardware follows; hints for them cost time (on Zen
        // 5, 30% at 512 such pairs: docs/performance.md).
        if left == right {
            if nearKey.isTail { return }
            if near &+ 1 < count, voiceList.key(at: near &+ 1).rawValue == nearKey.tail.rawValue { return }
        }
        // The cache lines the stretch will read: at rate 1 up to 8 per channel, for varispeed
        // twice as many (rates up to 2; the hardware's prefetcher follows beyond). A stream
        // reads its ring (`left`, `right`) where its last short-path block left it.
        if v.pointee.isStreamed, let stream = v.pointee.stream {
            prefetch(UnsafeRawPointer(stream))
        }
        let at = v.pointee.isStreamed ? Int(v.pointee.streamAt) : Int(truncatingIfNeeded: v.pointee.position)
        let lines = v.pointee.isVarispeed ? min(16, (2 * frames + 15) >> 4) : min(8, (frames + 15) >> 4)
        var k = 0
        while k < lines {
            prefetch(UnsafeRawPointer(left + at + 16 * k))
            if left != right { prefetch(UnsafeRawPointer(right + at + 16 * k)) }
            k += 1
        }
    }

    /// One prefetch instruction (`sampler_prefetch`, a static inline C function around
    /// `__builtin_prefetch`). The performance checker cannot see into C, so the call is exempted
    /// from it: the contract is that the function compiles to the single instruction, which
    /// neither locks nor allocates, and cannot fault.
    @_noLocks @_noAllocation @inline(__always)
    func prefetch(_ address: UnsafeRawPointer) {
        _unsafePerformance { sampler_prefetch(address) }
    }

    /// Whether voice `v` is the common case for the next `count` frames: at rate 1, without a
    /// ramp, meters or a stream, not reaching its sound's end. Everything read here is on the
    /// voice's first cache line.
    @_noLocks @_noAllocation @inline(__always)
    func isPlain(_ v: UnsafeMutablePointer<Voice>, count: Int) -> Bool {
        if v.pointee.isStreamed { return false }
        if v.pointee.rampFramesLeft != 0 { return false }
        if v.pointee.isVarispeed { return false }
        if v.pointee.generalPath != 0 { return false }
        return v.pointee.position + Int64(count) < v.pointee.frames
    }

    /// Whether voice `v` sounds (active, not paused), is plain for the next `count` frames
    /// (`isPlain`) and plays into output 0 (`Voice.isSoundingAtRateOneIntoMainMix`).
    @_noLocks @_noAllocation @inline(__always)
    func isPlainInMainMix(_ v: UnsafeMutablePointer<Voice>, count: Int, busCount: Int) -> Bool {
        if !Voice.isSoundingAtRateOneIntoMainMix(v) { return false }
        if v.pointee.rampFramesLeft != 0 { return false }
        return v.pointee.position &+ Int64(count) < v.pointee.frames
    }

    /// The players of the voices listed at `i + 2` and `i + 3` when they are plain voices into
    /// the main mix (`isPlainInMainMix`; the caller knows those at `i` and `i + 1` are); otherwise nil.
    @_noLocks @_noAllocation @inline(__always)
    func plainQuad(from i: Int, count: Int, busCount: Int) -> (c: Int, d: Int)? {
        let keyC = voiceList.key(at: i + 2), keyD = voiceList.key(at: i + 3)
        if VoiceKey.eitherIsTail(keyC, keyD) { return nil }
        if !isPlainInMainMix(voices + keyC.player, count: count, busCount: busCount) { return nil }
        if !isPlainInMainMix(voices + keyD.player, count: count, busCount: busCount) { return nil }
        return (keyC.player, keyD.player)
    }

    /// A plain voice's samples from its position and its gains, for `Mixing.addPair` and `addQuad`.
    @_noLocks @_noAllocation @inline(__always)
    func plainSource(_ v: UnsafeMutablePointer<Voice>) -> Mixing.Source {
        let position = Int(v.pointee.position), level = v.pointee.level
        return Mixing.Source(left: v.pointee.left.unsafelyUnwrapped + position, right: v.pointee.right.unsafelyUnwrapped + position,
                                 gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
    }

    /// A streamed voice that sounds into output 0 (`Voice.isSoundingStreamIntoMainMix`) and
    /// whose next `count` frames take the short path (`plainStreamBlock`): its block, or nil.
    @_noLocks @_noAllocation @inline(__always)
    func groupableStream(key: VoiceKey, count: Int, busCount: Int) -> PlainStreamBlock? {
        if key.isTail { return nil }
        let v = voices + key.player
        if !Voice.isSoundingStreamIntoMainMix(v) { return nil }
        return ringBlock(v, count: count)
    }

    /// Streamed voices listed one after the other that each take the short path into the main
    /// mix in one run of their ring (`groupableStream`), each with a ring of its own: mixed four
    /// or two in one pass over the outputs, to the bit as `mixPlainStream` one at a time, and
    /// published and kept as `mixVoices` would. Returns how many (0: the voices at `i` and
    /// `i + 1` are not such a pair).
    @_noLocks @_noAllocation @inline(__always)
    func mixStreamGroup(at i: Int, count: Int, from start: Int, to end: Int,
                        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                        publishing: Bool, readAhead: Bool,
                        bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end &- start
        let keyA = voiceList.key(at: i), keyB = voiceList.key(at: i &+ 1)
        guard let a = groupableStream(key: keyA, count: frames, busCount: busCount) else { return 0 }
        guard let b = groupableStream(key: keyB, count: frames, busCount: busCount) else { return 0 }
        // Two voices reading one ring read it one after the other: never together.
        if a.stream == b.stream { return 0 }
        let va = voices + keyA.player, vb = voices + keyB.player
        var n = 2
        if i &+ 3 < count {
            let keyC = voiceList.key(at: i &+ 2), keyD = voiceList.key(at: i &+ 3)
            if let c = groupableStream(key: keyC, count: frames, busCount: busCount),
               let d = groupableStream(key: keyD, count: frames, busCount: busCount),
               c.stream != a.stream, c.stream != b.stream, d.stream != a.stream, d.stream != b.stream, d.stream != c.stream {
                n = 4
                let vc = voices + keyC.player, vd = voices + keyD.player
                let sa = streamSource(va, a), sb = streamSource(vb, b), sc = streamSource(vc, c), sd = streamSource(vd, d)
                // The voices move on first: less to keep in registers across the mixing.
                advancePlainStream(va, a, count: frames)
                advancePlainStream(vb, b, count: frames)
                advancePlainStream(vc, c, count: frames)
                advancePlainStream(vd, d, count: frames)
                Mixing.addQuad(sa, sb, sc, sd, into: left + start, right: right + start, count: frames)
                releasePlainStream(a)
                releasePlainStream(b)
                releasePlainStream(c)
                releasePlainStream(d)
            }
        }
        if n == 2 {
            let sa = streamSource(va, a), sb = streamSource(vb, b)
            advancePlainStream(va, a, count: frames)
            advancePlainStream(vb, b, count: frames)
            Mixing.addPair(sa, sb, into: left + start, right: right + start, count: frames)
            releasePlainStream(a)
            releasePlainStream(b)
        }
        if readAhead {
            // The hints `mixVoices` gives for each voice it steps over, for those after the first.
            for k in 1..<n {
                prefetchAhead(from: i + k, count: count, frames: frames, plain: true)
            }
        }
        var sum = groupedShare(va, streamed: true, publishing: publishing) + groupedShare(vb, streamed: true, publishing: publishing)
        if n == 4 {
            sum += groupedShare(voices + voiceList.key(at: i &+ 2).player, streamed: true, publishing: publishing)
            sum += groupedShare(voices + voiceList.key(at: i &+ 3).player, streamed: true, publishing: publishing)
        }
        bound += sum
        keepGroup(at: i, count: n, publishing: publishing, active: &active, kept: &kept)
        return n
    }

    /// A short-path stream block's samples and its voice's gains, for `Mixing.addPair` and `addQuad`.
    @_noLocks @_noAllocation @inline(__always)
    func streamSource(_ v: UnsafeMutablePointer<Voice>, _ block: PlainStreamBlock) -> Mixing.Source {
        let level = v.pointee.level
        return Mixing.Source(left: v.pointee.left.unsafelyUnwrapped + block.at, right: v.pointee.right.unsafelyUnwrapped + block.at,
                                 gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
    }
}
