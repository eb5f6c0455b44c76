// The general path for one voice (`mixVoice`), and the silent one that moves a voice over frames
// the device skipped in closed form. A voice's stages in order: its samples (a sound, varispeed,
// or a stream's ring), its amplitude (level, ramp, envelope), its pan, into its output (or into
// scratch memory first when metered); then its position, loops and end.

extension Engine {
    /// Mixes one voice. `player` is -1 for a tail, which reports no events. With `silent` (frames
    /// the device skipped, or played before a late command arrived) nothing is mixed and the
    /// voice is moved on in closed form: its position, phase, ramp, envelope, loop count and
    /// stream read position end where mixing would leave them, in a number of steps that does
    /// not grow with `end - start`: one per ramp or envelope segment ending, and two for the
    /// wraps: the first is reported on its frame, the whole passes after it are skipped at once
    /// and reported as one `.looped` event on the last wrap, whose value is the loops left.
    /// Meters measure what is heard: they do not count silent frames.
    ///
    /// A filtered voice (`Voice.isFiltered`) goes through its filter after its amplitude (a mono
    /// sound before its pan, as sfizz): with its samples from memory at rate 1 and a steady
    /// level, in one pass (`Filtering.addMono`, `addStereo`); otherwise in scratch memory. The
    /// filter's memory depends on the frames before: of frames the device skipped, the last
    /// ones are filtered all the same (nothing is added), from rest, as many as the filter
    /// needs to forget what came before them below double precision
    /// (`BiquadCoefficients.settle`, at most 65,536); a streamed voice's filter starts from
    /// rest after a skip.
    @_noLocks @_noAllocation
    func mixVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, from start: Int, to end: Int, periodStart: Frame,
                  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool = false) {
        var slot = sounds[Int(v.pointee.sound)]
        let metered = v.pointee.isMetered && !silent
        let filtered = v.pointee.isFiltered
        let filter = filterState(of: v)
        // Silent frames from `settleFrom` on are rendered for the filter's memory.
        var settleFrom = end
        if filtered, silent {
            if slot.stream == nil { settleFrom = max(start, end - Int(filter.pointee.coefficients.settle)) }
            if settleFrom > start {
                // From rest where its rendering begins (a stream's: at the end).
                filter.pointee.left = BiquadMemory()
                filter.pointee.right = BiquadMemory()
            }
        }
        // Silent: the wraps still to be reported one by one (see above).
        var wrapReports = silent ? 1 : 0
        var unreportedWrap: Frame = .min
        defer {
            if unreportedWrap != .min, p >= 0, v.pointee.isActive {
                emit(Event(kind: .looped, player: Int32(p), frame: unreportedWrap, value: Int64(v.pointee.loopsRemaining), tag: v.pointee.tag))
            }
        }
        var out = start
        while out < end {
            var n = end - out
            if v.pointee.rampFramesLeft > 0 { n = min(n, Int(v.pointee.rampFramesLeft)) }
            // Moved in closed form (`quiet`), or rendered: heard, or (`discard`) only for the
            // filter's memory.
            var quiet = silent
            if silent, filtered {
                if out < settleFrom {
                    n = min(n, settleFrom - out)
                } else {
                    quiet = false
                }
            }
            let discard = silent && !quiet
            // A filtered voice in one pass: samples from memory at rate 1 and a steady level.
            let fused = filtered && !quiet && !metered && !discard && slot.stream == nil && v.pointee.rate == 1
                && v.pointee.rampFramesLeft == 0
            // A metered voice is mixed into scratch memory first, so its own contribution can be
            // measured, then added to the output; so is a filtered one that is not fused.
            let toScratch = metered || (filtered && !quiet && !fused)
            if toScratch { n = min(n, scratchCapacity) }
            // A filtered mono sound is filtered before its pan: into scratch unpanned.
            let prePan = filtered && !v.pointee.isStereo
            let gl = prePan ? 1 : v.pointee.panLeft
            let gr = prePan ? 0 : v.pointee.panRight
            let dl = toScratch ? scratchLeft : left + out
            let dr = toScratch ? scratchRight : right + out
            var advance: Int
            var streamChunk: Mixing.StreamChunk?
            if let stream = slot.stream {
                if toScratch {
                    dl.update(repeating: 0, count: n)
                    dr.update(repeating: 0, count: n)
                }
                let chunk = Mixing.addStream(stream, voice: v, into: dl, right: dr, count: n, panLeft: gl, panRight: gr,
                                             silent: quiet, splitAtWraps: wrapReports > 0)
                if chunk.wrapOffset >= 0 { wrapReports -= 1 }
                v.pointee.streamPeak = max(v.pointee.streamPeak, chunk.peak)
                n = chunk.frames
                advance = n
                streamChunk = chunk
            } else if v.pointee.rate != 1 {
                // Varispeed: up to `n` output frames, consuming source frames up to the end of the
                // sound at most (then the loop logic below runs as usual).
                if quiet {
                    let skipped = Mixing.skipVarispeed(v, frames: slot.frames, maxCount: n)
                    n = skipped.output
                    advance = skipped.consumed
                } else {
                    if toScratch {
                        dl.update(repeating: 0, count: n)
                        dr.update(repeating: 0, count: n)
                    }
                    let produced = Mixing.addVarispeed(v, slot: slot, into: dl, right: dr, maxCount: n, panLeft: gl, panRight: gr,
                                                       wide: wideVarispeed.load(ordering: .relaxed))
                    n = produced.output
                    advance = produced.consumed
                }
            } else {
                n = max(0, min(n, Int(slot.frames - v.pointee.position)))
                advance = n
                if quiet {
                    if v.pointee.rampFramesLeft > 0 {
                        v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(Int(v.pointee.rampElapsed) + n)
                    }
                } else if fused {
                    addFiltered(v, filter, count: n, position: Int(v.pointee.position), into: dl, dr)
                } else {
                    if toScratch {
                        dl.update(repeating: 0, count: n)
                        dr.update(repeating: 0, count: n)
                    }
                    let pos = Int(v.pointee.position)
                    if v.pointee.rampFramesLeft > 0 {
                        v.pointee.level = Mixing.addRamped(left: slot.left + pos, right: slot.right + pos,
                                                           into: dl, right: dr, count: n,
                                                           origin: v.pointee.rampOrigin, step: v.pointee.levelStep,
                                                           firstIndex: Int(v.pointee.rampElapsed),
                                                           panLeft: gl, panRight: gr)
                    } else {
                        let level = v.pointee.level
                        Mixing.add(left: slot.left + pos, right: slot.right + pos, into: dl, right: dr,
                                   count: n, gainLeft: level * gl, gainRight: level * gr)
                    }
                }
            }
            if filtered, toScratch {
                let c = filter.pointee.coefficients
                if v.pointee.isStereo {
                    Filtering.apply(dl, dr, count: n, c, &filter.pointee.left, &filter.pointee.right)
                } else {
                    Filtering.apply(dl, count: n, c, &filter.pointee.left)
                    Filtering.pan(dl, dr, count: n, panLeft: v.pointee.panLeft, panRight: v.pointee.panRight)
                }
            }
            if metered { Metering.accumulate(v, left: dl, right: dr, count: n) }
            if toScratch, !discard {
                Mixing.add(left: dl, right: dr, into: left + out, right: right + out, count: n, gainLeft: 1, gainRight: 1)
            }
            if v.pointee.rampFramesLeft > 0 {
                v.pointee.rampElapsed += Int32(n)
                v.pointee.rampFramesLeft -= Int32(n)
                if v.pointee.rampFramesLeft == 0 {
                    if v.pointee.stopsAfterRamp {
                        v.pointee.position += Int64(advance)
                        // A wrap held back (silent) is reported before the stop.
                        if unreportedWrap != .min, p >= 0 {
                            emit(Event(kind: .looped, player: Int32(p), frame: unreportedWrap, value: Int64(v.pointee.loopsRemaining), tag: v.pointee.tag))
                            unreportedWrap = .min
                        }
                    }
                    // A stop's fade ends the voice; an envelope goes on with its next segment on
                    // the next frame.
                    if !finishRamp(v, player: p, at: periodStart + Int64(out + n)) { return }
                }
            }
            v.pointee.position += Int64(advance)
            if let chunk = streamChunk {
                if chunk.wrapOffset >= 0, p >= 0 {
                    emit(Event(kind: .looped, player: Int32(p), frame: periodStart + Int64(out + chunk.wrapOffset), tag: v.pointee.tag))
                }
                out += n
                if chunk.ended {
                    endVoice(v, player: p, endedAt: periodStart + Int64(out), report: .finished, at: periodStart + Int64(out))
                    return
                }
                continue
            }
            out += n
            if v.pointee.position >= slot.frames {
                // A head's end: the voice goes on in its tail's buffer, if it was read in time.
                if slot.tail >= 0, switchToTail(v) {
                    slot = sounds[Int(v.pointee.sound)]
                    continue
                }
                // The end of what was read of a tail: on, if more was read by now.
                if slot.tailBuffer >= 0, extendTail(v, buffer: Int(slot.tailBuffer)) {
                    slot = sounds[Int(v.pointee.sound)]
                    continue
                }
                var wrapFrame = periodStart + Int64(out)
                if v.pointee.loopsRemaining != 0 {
                    if v.pointee.loopsRemaining > 0 { v.pointee.loopsRemaining -= 1 }
                    // Varispeed may step past the last frame: the overshoot carries into the loop,
                    // which begins at the sound's loop start.
                    v.pointee.position -= slot.frames - slot.loopStart
                    if v.pointee.position >= slot.frames { v.pointee.position = slot.loopStart }
                    wrapReports -= 1
                    if silent, wrapReports < 0 {
                        // The whole passes that follow, at once: each ends in a wrap that takes
                        // one loop; the pass that would end the voice is left to the steps above,
                        // and so is a ramp's last frame (its end may stop the voice or begin an
                        // envelope's next segment): under a ramp, passes up to the frame before.
                        let loops = v.pointee.loopsRemaining
                        let ramp = Int(v.pointee.rampFramesLeft)
                        // A filtered voice's passes up to where its rendering begins.
                        let limit = filtered ? max(0, settleFrom - out) : end - out
                        let passes = Mixing.skipLoopPasses(v, slot: slot, maxCount: ramp > 0 ? min(limit, ramp - 1) : limit,
                                                           maxPasses: loops < 0 ? Int.max : Int(loops))
                        if passes.passes > 0 {
                            if loops > 0 { v.pointee.loopsRemaining -= Int32(passes.passes) }
                            if ramp > 0 {
                                // Where the ramp's frames would leave it (as the steps above).
                                v.pointee.rampElapsed += Int32(passes.output)
                                v.pointee.rampFramesLeft -= Int32(passes.output)
                                v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(Int(v.pointee.rampElapsed))
                            }
                            out += passes.output
                            wrapFrame = periodStart + Int64(out)
                        }
                    }
                    if p >= 0 {
                        if !silent || wrapReports >= 0 {
                            emit(Event(kind: .looped, player: Int32(p), frame: wrapFrame, value: Int64(v.pointee.loopsRemaining), tag: v.pointee.tag))
                        } else {
                            // Reported once, after the steps (the last wrap stands for those before it).
                            unreportedWrap = wrapFrame
                        }
                    }
                } else {
                    if unreportedWrap != .min, p >= 0 {
                        emit(Event(kind: .looped, player: Int32(p), frame: unreportedWrap, value: 0, tag: v.pointee.tag))
                        unreportedWrap = .min
                    }
                    endVoice(v, player: p, endedAt: wrapFrame, report: .finished, at: wrapFrame)
                    return
                }
            }
        }
    }

    /// The filter of voice or tail `v` (an element of `voices` or `tails`).
    @_noLocks @_noAllocation @inline(__always)
    func filterState(of v: UnsafeMutablePointer<Voice>) -> UnsafeMutablePointer<FilterState> {
        if v >= tails, v < tails + configuration.maxPlayers { return tailFilters + (v - tails) }
        return voiceFilters + (v - voices)
    }

}
