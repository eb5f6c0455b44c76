import CPrefetch

extension Engine {
    /// Renders `frameCount` frames of stereo output into `left` and `right` (overwritten, not
    /// added to). `periodStart` is the device frame of the first sample of this block, as the
    /// device reports it for this period; commands whose frame falls inside
    /// `periodStart ..< periodStart + frameCount` take effect on exactly that sample.
    ///
    /// The device-timeline invariant: whatever the periods' stamps, the samples written for
    /// device frame t are the samples an uninterrupted render has at t. So when `periodStart` is
    /// later than the first frame not yet rendered (the device skipped cycles), every voice and
    /// every command is first advanced over the lost frames as if they had been rendered (their
    /// output discarded; the gap is counted in `lostPeriodCount` / `lostFrameCount`), and when it
    /// is earlier (frames already rendered are asked for again), those frames are written as
    /// silence and counted in `repeatedFrameCount`. A jump of more than
    /// `EngineConfiguration.maxCatchUpFrames` either way is a new clock (`clockRestartCount`):
    /// every voice stops and every pending command is dropped.
    ///
    /// Real-time safe: no allocation, no locks, no I/O. Call from one render thread only.
    @_noLocks @_noAllocation
    public func render(frameCount: Int, periodStart: Frame,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        blockBuses[0] = left
        blockBuses[1] = right
        renderOutputs(frameCount: frameCount, periodStart: periodStart, count: 1)
    }

    /// Renders `frameCount` frames into `outputCount` stereo outputs: `outputs` holds
    /// `2 × outputCount` buffers, left then right of output 0 (the main mix), of output 1, and
    /// so on (each overwritten). A voice routed to output k (`InstrumentDefinition.output`,
    /// `Command.setOutput`) is mixed into output k only; to an output beyond `outputCount`, into
    /// the main mix. Otherwise as `render(frameCount:periodStart:left:right:)`: the same
    /// device timeline, the same samples summed over the outputs. At most
    /// `Engine.maxOutputCount` outputs (more are ignored). Real-time safe; one render thread only.
    @_noLocks @_noAllocation
    public func render(frameCount: Int, periodStart: Frame,
                       outputs: UnsafePointer<UnsafeMutablePointer<Float>>, outputCount: Int) {
        let count = max(1, min(outputCount, outputCapacity))
        for i in 0..<(2 * count) { blockBuses[i] = outputs[i] }
        // Buffers beyond the engine's outputs are written as silence, never left as they were.
        if outputCount > count {
            for i in (2 * count)..<(2 * outputCount) { outputs[i].update(repeating: 0, count: frameCount) }
        }
        renderOutputs(frameCount: frameCount, periodStart: periodStart, count: count)
    }

    /// The render into `blockBuses[0 ..< 2 × count]`.
    @_noLocks @_noAllocation
    private func renderOutputs(frameCount: Int, periodStart: Frame, count: Int) {
        for i in 0..<(2 * count) { Mixing.clear(blockBuses[i], count: frameCount) }
        midiOutputCountStorage.pointee = 0
        drainCommands()

        var start = periodStart
        var skip = 0
        if timeline.pointee.isRunning {
            let next = timeline.pointee.nextFrame
            let limit = Int64(configuration.maxCatchUpFrames)
            if start > next + limit || start + Int64(frameCount) < next - limit {
                restartClock()
            } else if start > next {
                catchUp(from: next, to: start)
            } else if start < next {
                skip = Int(min(next - start, Int64(frameCount)))
                repeatedFrameCounter.add(skip, ordering: .relaxed)
                start = next
            }
        }
        timeline.pointee.isRunning = true
        var bound: Float = 0
        if skip < frameCount {
            flushDeferredMIDI(at: start)
            for i in 0..<(2 * count) { blockBuses[i] += skip }
            bound = renderBlock(frameCount: frameCount - skip, periodStart: start, buses: blockBuses, busCount: count, silent: false)
            for i in 0..<(2 * count) { blockBuses[i] -= skip }
            timeline.pointee.nextFrame = start + Int64(frameCount - skip)
        }
        // Nothing non-finite ever reaches a port (sounds are sanitized at load; this is the
        // last line of defence, counted). The samples are looked at only when the period's
        // bound (the sum over the voices mixed of sound peak × gain) does not rule out an
        // overflow: a sound or stream ring with a NaN, gains near 1e37, a tail of a stream (its ring is
        // not known to it); a NaN bound fails the test.
        if !(bound < 1e37) {
            var repaired = 0
            for i in 0..<count { repaired += Mixing.replaceNonFinite(blockBuses[2 * i], blockBuses[2 * i + 1], count: frameCount) }
            if repaired > 0 { nonFiniteOutputCounter.add(repaired, ordering: .relaxed) }
        }
        confirmUnreferencedSounds()
        periodStartCounter.store(start, ordering: .releasing)
        renderedFrameCounter.store(timeline.pointee.nextFrame, ordering: .releasing)
        // One writer (this thread): a store, not a locked read-modify-write.
        periodCounter.store(periodCounter.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }

    /// Applies the scheduled commands that fall in `periodStart ..< periodStart + frameCount` on
    /// their frames and mixes every voice into its output of `buses` (left, right of each of
    /// `busCount` outputs); with `silent`, plain voices only advance (their output would be
    /// discarded). Returns a bound on the magnitude of any sample it added (see `mixVoices`).
    @_noLocks @_noAllocation @discardableResult
    func renderBlock(frameCount: Int, periodStart: Frame,
                     buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, busCount: Int, silent: Bool) -> Float {
        let periodEnd = periodStart + Int64(frameCount)
        var cursor = 0
        var bound: Float = 0
        while schedule.count > 0 {
            if schedule.firstFrame >= periodEnd { break }
            let command = schedule.removeFirst()
            let offset = command.frame == Command.immediately
                ? cursor : max(cursor, Int(max(command.frame - periodStart, 0)))
            if case .midi = command.kind {
                // Sent on its own frame or not at all (MIDI does not touch the voices).
                queueMIDI(command, at: periodStart + Int64(offset), silent: silent)
                continue
            }
            if offset > cursor {
                bound += mixVoices(from: cursor, to: offset, periodStart: periodStart, buses: buses, busCount: busCount,
                                   publishing: false, silent: silent)
                cursor = offset
            }
            apply(command, at: periodStart + Int64(offset))
        }
        // The block's last stretch (every command in it is applied): mixed and published in one
        // pass over the voices, while each voice's record is in cache.
        bound += mixVoices(from: cursor, to: frameCount, periodStart: periodStart, buses: buses, busCount: busCount,
                           publishing: true, silent: silent)
        return bound
    }

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
        if !v.pointee.isVarispeed {
            guard v.pointee.position - frames >= 0 else { return false }
            v.pointee.position -= frames
            return true
        }
        // Fixed point (`Voice.rateStep`): n steps back are exactly the n steps played forward.
        let back = UInt128(UInt64(frames)) * UInt128(v.pointee.rateStep)
        let at = UInt128(UInt64(v.pointee.position)) << 32 | UInt128(v.pointee.phase)
        guard at >= back else { return false }
        let earlier = at - back
        v.pointee.position = Int64(earlier >> 32)
        v.pointee.phase = UInt32(truncatingIfNeeded: earlier)
        return true
    }

    /// Adds a `.midi` command's message to the period's MIDI output when it is due exactly at
    /// `frame` in audible frames. A channel message (a note) due in skipped frames or arriving
    /// late is not sent: a gap, never a shift. A system message (clock tick, start, stop,
    /// continue, song position) is never lost, since a follower counts them: late, it goes at
    /// once; due in skipped frames, on the first frame after them (`flushDeferredMIDI`).
    @_noLocks @_noAllocation
    private func queueMIDI(_ command: Command, at frame: Frame, silent: Bool) {
        let status = command.tag & 0xFF
        let isSystem = status == 0xF2 || (status >= 0xF8 && status <= 0xFC)
        // Locals: `&&`'s autoclosure would capture (and retain) self.
        let capacity = midiOutputCapacity
        if silent {
            let deferred = deferredMIDICountStorage.pointee
            if isSystem && deferred < capacity {
                deferredMIDI[deferred] = MIDIMessage(frame: 0, bytes: command.tag, length: command.loops)
                deferredMIDICountStorage.pointee = deferred + 1
            } else {
                lateMIDICounter.add(1, ordering: .relaxed)
            }
            return
        }
        let onTime = command.frame == Command.immediately || command.frame == frame
        let count = midiOutputCountStorage.pointee
        guard onTime || isSystem, count < capacity else {
            lateMIDICounter.add(1, ordering: .relaxed)
            return
        }
        if !onTime { deferredMIDICounter.add(1, ordering: .relaxed) }
        midiOutput[count] = MIDIMessage(frame: frame, bytes: command.tag, length: command.loops)
        midiOutputCountStorage.pointee = count + 1
        sentMIDICounter.add(1, ordering: .relaxed)
    }

    /// Sends the system messages held over skipped frames on `frame`, the first audible frame
    /// after them, in the order they were due.
    @_noLocks @_noAllocation
    func flushDeferredMIDI(at frame: Frame) {
        let deferred = deferredMIDICountStorage.pointee
        guard deferred > 0 else { return }
        for i in 0..<deferred {
            let count = midiOutputCountStorage.pointee
            guard count < midiOutputCapacity else {
                lateMIDICounter.add(deferred - i, ordering: .relaxed)
                break
            }
            var m = deferredMIDI[i]
            m.frame = frame
            midiOutput[count] = m
            midiOutputCountStorage.pointee = count + 1
            sentMIDICounter.add(1, ordering: .relaxed)
            deferredMIDICounter.add(1, ordering: .relaxed)
        }
        deferredMIDICountStorage.pointee = 0
    }

    @_noLocks @_noAllocation
    private func drainCommands() {
        while let command = commands.pop() {
            // Cancels act when they arrive, on what was sent before them, not on their frame.
            if case .cancelPending = command.kind {
                schedule.removeAll(forPlayer: command.player, from: command.position, triggers: command.loops == 1)
                continue
            }
            // A request about a sound acts when it arrives: every command sent before it is in
            // the schedule already (see `confirmUnreferencedSounds`).
            if case .confirmUnreferenced = command.kind {
                ownership.note(slot: command.sound, sequence: command.position)
                continue
            }
            if case .reset = command.kind {
                // A new device clock (a reconnected server): its frames are not comparable with
                // the old one's, so the next period's stamp is taken as it is.
                silenceEverything()
                timeline.pointee.isRunning = false
                timeline.pointee.epoch = command.epoch
                continue
            }
            if command.epoch != timeline.pointee.epoch && command.frame != Command.immediately {
                // Its frame is of a clock that is gone.
                staleCommandCounter.add(1, ordering: .relaxed)
                emit(Event(kind: .staleCommand, player: command.player, frame: renderedFrameCounter.load(ordering: .relaxed),
                           value: command.frame, tag: command.tag))
                continue
            }
            if !schedule.insert(command) {
                // A replacement is never lost: the control thread may already count on it.
                if case .replaceInstruments = command.kind { swapInInstruments() }
                droppedCommandCounter.add(1, ordering: .relaxed)
                emit(Event(kind: .commandDropped, player: command.player, frame: renderedFrameCounter.load(ordering: .relaxed), value: command.frame))
            }
        }
    }

    /// The tables the control thread published (`Engine.replaceInstruments`) trade places with
    /// the ones in use, which it frees once it sees them handed back. Nothing when none is
    /// published.
    @_noLocks @_noAllocation
    func swapInInstruments() {
        guard instrumentSwap.load(ordering: .acquiring) == InstrumentSwap.published else { return }
        let inUse = instrumentTables.pointee
        instrumentTables.pointee = pendingInstruments.pointee
        pendingInstruments.pointee = inUse
        instrumentSwap.store(InstrumentSwap.handedBack, ordering: .releasing)
    }

    @_noLocks @_noAllocation
    func emit(_ event: Event) {
        if !events.push(event) { lostEventCounter.add(1, ordering: .relaxed) }
    }

    /// Publishes the position, state and meters of player `p` for the control side at the end
    /// of a period of `frameCount` frames. Returns whether the voice stays listed: while it
    /// sounds or is metered (an unlisted player keeps the status it last published: nothing
    /// changes it until a command lists it again).
    @_noLocks @_noAllocation @inline(__always)
    private func publish(_ v: UnsafeMutablePointer<Voice>, player p: Int, frameCount: Int) -> Bool {
        let flags: Int64 = (v.pointee.isActive ? 1 : 0) | (v.pointee.isPaused ? 2 : 0)
        playerStates[p].store(v.pointee.position << 2 | flags, ordering: .relaxed)
        if v.pointee.isMetered {
            publishMeters(v, base: p * PlayerMeterField.stride, frameCount: frameCount)
            return true
        }
        return v.pointee.isActive
    }

    @_noLocks @_noAllocation
    private func publishMeters(_ v: UnsafeMutablePointer<Voice>, base: Int, frameCount: Int) {
        let generation = meters[base + PlayerMeterField.meterReset].load(ordering: .acquiring)
        if generation != v.pointee.meterGeneration {
            v.pointee.meterGeneration = generation
            v.pointee.meterPeakLeft = 0
            v.pointee.meterPeakRight = 0
            v.pointee.meterSumLeft = 0
            v.pointee.meterSumRight = 0
            v.pointee.meterFrames = 0
        }
        // Every period counts, sounding or not: a stopped player's average falls.
        v.pointee.meterFrames += Int64(frameCount)
        meters[base + PlayerMeterField.peakLeft].store(Int64(v.pointee.meterPeakLeft.bitPattern), ordering: .relaxed)
        meters[base + PlayerMeterField.peakRight].store(Int64(v.pointee.meterPeakRight.bitPattern), ordering: .relaxed)
        meters[base + PlayerMeterField.sumLeft].store(Int64(bitPattern: v.pointee.meterSumLeft.bitPattern), ordering: .relaxed)
        meters[base + PlayerMeterField.sumRight].store(Int64(bitPattern: v.pointee.meterSumRight.bitPattern), ordering: .relaxed)
        meters[base + PlayerMeterField.meterFrames].store(v.pointee.meterFrames, ordering: .releasing)
    }

    /// Applies `command` at device frame `frame` (its own frame, or later if it arrived late).
    @_noLocks @_noAllocation
    private func apply(_ command: Command, at frame: Frame) {
        if case .stopAll = command.kind {
            // Every sounding voice is listed (in player order); tails fade out on their own.
            for i in 0..<voiceList.count {
                let key = Int(voiceList.key(at: i))
                if key & 1 == 0 {
                    let p = key >> 1
                    if voices[p].isActive {
                        voices[p].isActive = false
                        voices[p].endedAt = max(command.frame == Command.immediately ? frame : command.frame, voices[p].startedAt)
                        emit(Event(kind: .stopped, player: Int32(p), frame: frame, tag: voices[p].tag))
                    }
                }
            }
            return
        }
        if case .trigger = command.kind {
            let due = command.frame == Command.immediately ? frame : command.frame
            trigger(instrument: Int(command.player), velocity: Int(command.level), due: due, at: frame)
            return
        }
        if case .replaceInstruments = command.kind {
            swapInInstruments()
            return
        }
        if case .release = command.kind {
            let due = command.frame == Command.immediately ? frame : command.frame
            release(instrument: Int(command.player), due: due, at: frame)
            return
        }
        if case .setInstrumentMix = command.kind {
            // The render thread owns the instrument tables once rendering has begun.
            let tables = instrumentTables.pointee
            let i = Int(command.player)
            guard i >= 0, i < tables.instrumentCount else { return }
            if command.loops & 1 != 0 { tables.instruments[i].level = command.level }
            if command.loops & 2 != 0 { tables.instruments[i].pan = command.pan }
            return
        }
        let p = Int(command.player)
        let v = voices + p
        // Listed at least until this period's end, so that what the command changed is published.
        voiceList.insert(player: p, tail: false)
        if command.frame != Command.immediately && command.frame < v.pointee.startedAt && frame > command.frame {
            if case .setOutput = command.kind {
                // A routing outlives the sound it was sent for: it applies to what follows (its
                // frames before the start played on the old output: counted).
                lateCommandCounter.add(1, ordering: .relaxed)
                v.pointee.output = UInt8(clamping: command.loops)
                return
            }
            if case .start = command.kind {} else {
                // It arrived after a start that is later than its frame: on time it would have
                // acted on the sound before that start, which is gone. Refused, counted.
                lateCommandCounter.add(1, ordering: .relaxed)
                return
            }
        }
        switch command.kind {
        case .start:
            let slot = sounds[Int(command.sound)]
            let lateStart = lateness(command, at: frame)
            if command.fadeFrames > 0 && !v.pointee.isActive && lateStart > 0 {
                // On time the old voice, sounding then, would have left a declick tail.
                if v.pointee.endedAt > command.frame { lateCommandCounter.add(1, ordering: .relaxed) }
            }
            if command.fadeFrames > 0 && v.pointee.isActive && !v.pointee.isPaused {
                // Declick: the old voice fades out on the player's tail while the new one starts.
                tails[p] = v.pointee
                tails[p].isMetered = false  // a tail's meters are never published
                let played = restoreLevel(tails + p, due: command.frame, late: lateness(command, at: frame))
                startRamp(tails + p, to: 0, frames: command.fadeFrames)
                tails[p].stopsAfterRamp = true
                voiceList.insert(player: p, tail: true)
                // Late: the old sound played on (heard) at its level; its fade is where it would
                // be had it begun on the start's frame.
                advanceRamp(tails + p, player: -1, by: played, rampStart: command.frame)
            }
            v.pointee.setSound(command.sound, slot)
            v.pointee.envStage = 0
            v.pointee.envFollowsNoteOff = false
            v.pointee.isActive = true
            v.pointee.isPaused = false
            v.pointee.position = min(max(command.position, 0), slot.frames - 1)
            v.pointee.phase = 0
            v.pointee.setRate(command.rate)
            v.pointee.loopsRemaining = command.loops
            v.pointee.level = command.level
            v.pointee.levelTarget = command.level
            v.pointee.rampFramesLeft = 0
            v.pointee.rampEndedAt = .min
            v.pointee.pausedAt = .min
            v.pointee.stopsAfterRamp = false
            v.pointee.setPan(command.pan)
            v.pointee.tag = command.tag
            // A start that arrived after its frame takes up its sound where it would be had it
            // started on time (the device timeline), and is reported late by the frames of it
            // that were not heard; so is a start on frames the device skipped.
            let timed = command.frame != Command.immediately
            let late = timed ? frame - command.frame : 0
            v.pointee.startedAt = late > 0 ? command.frame : frame
            emit(Event(kind: .started, player: command.player, frame: v.pointee.startedAt, value: Int64(command.tag), tag: command.tag))
            if late > 0 { advanceVoice(v, player: p, from: command.frame, frames: late) }
            let lostUntil = timeline.pointee.lostUntil
            let unheard = timed && lostUntil > command.frame ? max(late, lostUntil - command.frame) : late
            if unheard > 0 {
                lateStartCounter.add(1, ordering: .relaxed)
                emit(Event(kind: .lateStart, player: command.player, frame: frame, value: unheard, tag: command.tag))
            }
        case .stop:
            guard v.pointee.isActive else { return }
            if command.fadeFrames > 0 && !v.pointee.isPaused {
                if v.pointee.stopsAfterRamp { return }  // already fading out: the first fade goes on
                let played = restoreLevel(v, due: command.frame, late: lateness(command, at: frame))
                startRamp(v, to: 0, frames: command.fadeFrames)
                v.pointee.stopsAfterRamp = true
                advanceRamp(v, player: p, by: played, rampStart: command.frame)
            } else {
                v.pointee.isActive = false
                v.pointee.endedAt = max(command.frame == Command.immediately ? frame : command.frame, v.pointee.startedAt)
                emit(Event(kind: .stopped, player: command.player, frame: frame, tag: v.pointee.tag))
            }
        case .setGain:
            // A voice fading out to stop keeps fading: a gain change does not revive it.
            if v.pointee.stopsAfterRamp { return }
            // Nor does it revive a released envelope: the release goes on.
            if v.pointee.envStage >= 5 { return }
            // A paused voice's ramp waits for it: advanced only over what it played before its pause.
            let played = restoreLevel(v, due: command.frame, late: lateness(command, at: frame))
            startRamp(v, to: command.level, frames: command.fadeFrames)
            advanceRamp(v, player: p, by: played, rampStart: command.frame)
        case .setPan:
            v.pointee.setPan(command.pan)
        case .setLoops:
            countIfEndedSince(v, command, at: frame)
            v.pointee.loopsRemaining = command.loops
            let late = lateness(command, at: frame)
            if late > 0 && v.pointee.isActive && !v.pointee.isPaused && v.pointee.frames > 0 {
                // On time, the wraps since its frame would have counted against the new value:
                // the passes begun since then, ⌈(played − position) / length⌉, in the voice's
                // own fixed point (exact).
                let played = playedSince(v, late: late)
                if played.wrapped && command.loops >= 0 {
                    let wraps = played.passes
                    if command.loops >= wraps {
                        v.pointee.loopsRemaining = command.loops - wraps
                    } else {
                        // On time it would have ended already: it ends now.
                        v.pointee.loopsRemaining = 0
                        v.pointee.isActive = false
                        v.pointee.endedAt = frame
                        emit(Event(kind: .finished, player: command.player, frame: frame, tag: v.pointee.tag))
                    }
                }
            }
        // A pause, resume, seek or rate change that arrives after its frame leaves the voice
        // where it would be had it come on time (the device timeline): what was heard between
        // cannot be taken back, what follows is as if it had (issue 34).
        case .pause:
            guard !v.pointee.isPaused else { return }
            countIfEndedSince(v, command, at: frame)
            let late = lateness(command, at: frame)
            if late > 0 && v.pointee.isActive {
                if !rewind(v, by: late, since: command.frame) { lateCommandCounter.add(1, ordering: .relaxed) }
            }
            v.pointee.isPaused = true
            v.pointee.pausedAt = command.frame == Command.immediately ? frame : max(command.frame, v.pointee.startedAt)
        case .resume:
            guard v.pointee.isPaused else { return }
            v.pointee.isPaused = false
            let late = lateness(command, at: frame)
            if late > 0 && v.pointee.isActive && v.pointee.startedAt <= command.frame {
                advanceVoice(v, player: p, from: command.frame, frames: late)
            }
        case .seek:
            countIfEndedSince(v, command, at: frame)
            if v.pointee.sound >= 0 {
                let frames = sounds[Int(v.pointee.sound)].frames
                var late = v.pointee.isPaused || !v.pointee.isActive ? 0 : lateness(command, at: frame)
                if late > 0 {
                    // What it played since the seek's frame must be undoable: no ramp advanced,
                    // no wrap counted, no restart in between.
                    let wrapped = playedSince(v, late: late).wrapped
                    if v.pointee.rampFramesLeft != 0 || wrapped || v.pointee.startedAt > command.frame || v.pointee.isStreamed {
                        lateCommandCounter.add(1, ordering: .relaxed)
                        late = 0
                    }
                }
                v.pointee.position = min(max(command.position, 0), frames - 1)
                v.pointee.phase = 0
                // Played on from the seek's frame to this one, wrapping where it loops.
                if late > 0 { advanceVoice(v, player: p, from: command.frame, frames: late) }
            }
        case .setRate:
            countIfEndedSince(v, command, at: frame)
            let late = lateness(command, at: frame)
            // Streams play at rate 1: nothing to move.
            if late > 0 && v.pointee.isActive && !v.pointee.isPaused && !v.pointee.isStreamed {
                // On time, the voice would have covered these frames at the new rate.
                let old = v.pointee.rate
                if rewind(v, by: late, since: command.frame) {
                    v.pointee.setRate(command.rate)
                    advanceVoice(v, player: p, from: command.frame, frames: late)
                    return
                }
                lateCommandCounter.add(1, ordering: .relaxed)
                v.pointee.setRate(old)
            }
            v.pointee.setRate(command.rate)
        case .setMetering:
            v.pointee.isMetered = command.loops != 0
        case .setOutput:
            // Late on a sounding voice: its frames since the command's frame went to the old
            // output (the sum of the outputs is as on time, each output is not): counted.
            if lateness(command, at: frame) > 0, v.pointee.isActive, !v.pointee.isPaused, v.pointee.output != UInt8(clamping: command.loops) {
                lateCommandCounter.add(1, ordering: .relaxed)
            }
            v.pointee.output = UInt8(clamping: command.loops)
        case .stopAll, .reset, .cancelPending, .trigger, .midi, .setInstrumentMix, .replaceInstruments, .confirmUnreferenced, .release:
            break
        }
    }

    /// Whether voice `v`, playing on over the last `late` frames, wrapped in them, and how many
    /// passes it began since (at most `Int32.max`): in its own fixed point (`Voice.rateStep`,
    /// 2^32 per frame at rate 1), so exactly what playing them did.
    @_noLocks @_noAllocation
    func playedSince(_ v: UnsafeMutablePointer<Voice>, late: Int64) -> (wrapped: Bool, passes: Int32) {
        let step = UInt128(v.pointee.isVarispeed ? v.pointee.rateStep : 1 << 32)
        let at = UInt128(UInt64(max(0, v.pointee.position))) << 32 | UInt128(v.pointee.isVarispeed ? v.pointee.phase : 0)
        let moved = UInt128(UInt64(max(0, late))) * step
        guard at < moved, v.pointee.frames > 0 else { return (false, 0) }
        let length = UInt128(UInt64(v.pointee.frames)) << 32
        let passes = (moved - at + length - 1) / length
        return (true, passes > UInt128(Int32.max) ? Int32.max : Int32(passes))
    }

    /// Counts a late `command` (`lateCommandCount`) that finds voice `v` ended where on time it
    /// would have found it sounding: it cannot be revived (its sound may be released already),
    /// so the command cannot have its on-time effect.
    @_noLocks @_noAllocation @inline(__always)
    private func countIfEndedSince(_ v: UnsafeMutablePointer<Voice>, _ command: Command, at frame: Frame) {
        if v.pointee.isActive { return }
        if lateness(command, at: frame) == 0 { return }
        if v.pointee.endedAt > command.frame {
            if v.pointee.startedAt <= command.frame { lateCommandCounter.add(1, ordering: .relaxed) }
        }
    }

    @_noLocks @_noAllocation
    private func startRamp(_ v: UnsafeMutablePointer<Voice>, to target: Float, frames: Int32) {
        // A command's ramp (a fade, a gain change, a choke) ends the voice's envelope.
        v.pointee.envStage = 0
        v.pointee.levelTarget = target
        if frames <= 0 {
            v.pointee.level = target
            v.pointee.rampFramesLeft = 0
            v.pointee.levelStep = 0
        } else {
            v.pointee.levelStep = (target - v.pointee.level) / Float(frames)
            v.pointee.rampOrigin = v.pointee.level
            v.pointee.rampElapsed = 0
            v.pointee.rampFramesLeft = frames
        }
    }

    /// Adds every sounding voice (and every fading tail) into `left`/`right` for block offsets
    /// `start ..< end`, walking the voice list: voice p, then tail p, in player order. With
    /// `publishing` (the period's last stretch, `end` = its length), also publishes each player's
    /// status and drops from the list what no longer needs the render thread. Returns the sum
    /// over the voices mixed of their sound's peak × their largest gain in the stretch: no
    /// sample it added to is larger in magnitude (to rounding).
    @_noLocks @_noAllocation
    private func mixVoices(from start: Int, to end: Int, periodStart: Frame,
                           buses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, busCount: Int,
                           publishing: Bool, silent: Bool) -> Float {
        var bound: Float = 0
        var active = 0
        var kept = 0
        let count = voiceList.count
        // A few voices' records and samples stay close from one period to the next: hints would
        // cost more than they save (measured with `sampler-bench --fixed`). Up to a hundred or
        // so voices at rate 1 without a ramp (from sounds or rings), the hardware's prefetcher
        // follows their samples (each read on from where the last period left it) and hints for
        // them only cost: measured with `make bench` at 32 to 512 voices, they lost up to 20% at
        // 64 (streams: 1.14–1.20× the C loop without, 0.97–1.34× with) and gained 15–25% from
        // 256; 64 voices each with a tail (128 listed) lost 20–40% without them.
        let readAhead = count > 16
        let plainSamplesAhead = count > 96
        // Most voices play into the main mix: its buffers without a load per voice.
        let mainLeft = buses[0], mainRight = buses[1]
        let frames = end - start
        // The next tail in the list was mixed with its voice.
        var tailMixed = false
        var i = 0
        while i < count {
            let key = Int(voiceList.key(at: i))
            let p = key >> 1
            var stays: Bool
            // A plain or streamed voice about to be mixed in a group: up to `plainSamplesAhead`,
            // no hints (the voices ahead of it are most likely of its kind too, and the hardware
            // follows them).
            var plainHere = false, streamHere = false
            if !silent, i + 1 < count, key & 1 == 0 {
                plainHere = isPlainInMainMix(voices + p, count: frames, busCount: busCount)
                if !plainHere { streamHere = voices[p].isStreamed }
            }
            if readAhead {
                if plainSamplesAhead || !(plainHere || streamHere) {
                    prefetchAhead(near: i + 4 < count ? Int(voiceList.key(at: i + 4)) : -1,
                                  far: i + 8 < count ? Int(voiceList.key(at: i + 8)) : -1, frames: frames, plain: plainSamplesAhead)
                }
            }
            // Plain voices listed one after the other, into the main mix (the common case with
            // many voices): mixed four or two at a time (`mixPlainGroup`).
            if plainHere {
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
            }
            // Not grouped after all: the hints skipped above for a voice about to be.
            if readAhead, !plainSamplesAhead, plainHere || streamHere {
                prefetchAhead(near: i + 4 < count ? Int(voiceList.key(at: i + 4)) : -1,
                              far: i + 8 < count ? Int(voiceList.key(at: i + 8)) : -1, frames: frames, plain: false)
            }
            defer { i += 1 }
            if key & 1 == 0 {
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
                            if i + 1 < count, Int(voiceList.key(at: i + 1)) == key + 1 {
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
                        } else if mixPlainVoice(v, from: start, to: end, left: left, right: right, silent: silent) {
                            bound += v.pointee.peakGain * abs(v.pointee.level)
                        } else if mixPlainStream(v, from: start, to: end, left: left, right: right, silent: silent) {
                            bound += v.pointee.readPeakGain * abs(v.pointee.level)
                        } else {
                            let gain = largestGain(v)
                            if !mixRampedVoice(v, from: start, to: end, left: left, right: right, silent: silent) {
                                mixVoice(v, player: p, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                         silent: silent)
                            }
                            // After mixing: a stream's samples are bounded by its ring's peak when it read them.
                            bound += v.pointee.readPeakGain * gain
                        }
                    }
                }
                if !publishing { continue }
                if v.pointee.isActive { active += 1 }
                stays = publish(v, player: p, frameCount: end)
            } else {
                let t = tails + p
                if tailMixed {
                    // Mixed with its voice (`mixPlainWithTail`).
                    tailMixed = false
                } else if t.pointee.isActive {
                    let o = Int(t.pointee.output)
                    let bus = o < busCount ? 2 * o : 0
                    let left = buses[bus], right = buses[bus + 1]
                    bound += t.pointee.peakGain * largestGain(t)
                    if !mixRampedVoice(t, from: start, to: end, left: left, right: right, silent: silent) {
                        mixVoice(t, player: -1, from: start, to: end, periodStart: periodStart, left: left, right: right,
                                 silent: silent)
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
        }
        if publishing {
            voiceList.truncate(kept)
            activeVoiceCounter.store(active, ordering: .relaxed)
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
    private func mixPlainGroups(at first: Int, count: Int, from start: Int, to end: Int,
                                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                                publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        var i = first
        while i &+ 1 < count {
            if i != first {
                let key = Int(voiceList.key(at: i))
                if key & 1 != 0 { break }
                if !isPlainInMainMix(voices + (key >> 1), count: end &- start, busCount: busCount) { break }
                if readAhead {
                    prefetchAhead(near: i &+ 4 < count ? Int(voiceList.key(at: i &+ 4)) : -1,
                                  far: i &+ 8 < count ? Int(voiceList.key(at: i &+ 8)) : -1, frames: end &- start, plain: true)
                }
            }
            let n = mixPlainGroup(at: i, count: count, from: start, to: end, left: left, right: right, busCount: busCount,
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
    private func mixPlainGroup(at i: Int, count: Int, from start: Int, to end: Int,
                               left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                               publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end - start
        let p = Int(voiceList.key(at: i)) >> 1
        let keyB = Int(voiceList.key(at: i + 1))
        let q = keyB >> 1
        var n = 0
        if keyB & 1 != 0 { return 0 }
        if !isPlainInMainMix(voices + q, count: frames, busCount: busCount) { return 0 }
        if i + 3 < count, let quad = plainQuad(from: i, count: frames, busCount: busCount) {
            n = 4
            if readAhead {
                for k in 1...3 {
                    prefetchAhead(near: i + 4 + k < count ? Int(voiceList.key(at: i + 4 + k)) : -1,
                                  far: i + 8 + k < count ? Int(voiceList.key(at: i + 8 + k)) : -1, frames: frames, plain: true)
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
                prefetchAhead(near: i + 5 < count ? Int(voiceList.key(at: i + 5)) : -1,
                              far: i + 9 < count ? Int(voiceList.key(at: i + 9)) : -1, frames: frames, plain: true)
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
    private func groupedShare(_ v: UnsafeMutablePointer<Voice>, streamed: Bool, publishing: Bool) -> Float {
        if publishing { playerStates[v - voices].store(v.pointee.position << 2 | 1, ordering: .relaxed) }
        let peakGain = streamed ? Voice.peakGain(v.pointee.streamPeak, v.pointee.panLeft, v.pointee.panRight) : v.pointee.peakGain
        return peakGain * abs(v.pointee.level)
    }

    /// After the `n` voices listed from index `i` were mixed as one group and published: with
    /// `publishing`, counted active and kept, as `mixVoices` does.
    @_noLocks @_noAllocation @inline(__always)
    private func keepGroup(at i: Int, count n: Int, publishing: Bool, active: inout Int, kept: inout Int) {
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
    private func largestGain(_ v: UnsafeMutablePointer<Voice>) -> Float {
        max(max(abs(v.pointee.level), abs(v.pointee.levelTarget)), max(abs(v.pointee.rampOrigin), abs(v.pointee.envBase)))
    }

    /// Prefetch hints, so that what the next voices need is on its way while this one mixes
    /// (with thousands of voices none of it is in cache at the start of a period, and waiting
    /// for it one voice at a time cost 10–20%): the record of the voice `far` places ahead, and
    /// the first samples of the voice `near` places ahead, whose record the previous hints
    /// brought in. Hints only: nothing waits for them, and a hint at memory that is no longer
    /// there does nothing (a listed voice may be inactive, its sound freed).
    @_noLocks @_noAllocation @inline(__always)
    private func prefetchAhead(near: Int, far: Int, frames: Int, plain: Bool) {
        if far >= 0 { prefetch(UnsafeRawPointer((far & 1 == 0 ? voices : tails) + (far >> 1))) }
        guard near >= 0 else { return }
        let v = (near & 1 == 0 ? voices : tails) + (near >> 1)
        if !v.pointee.isActive { return }
        // Without `plain`, only for what the hardware does not follow as well: varispeed, ramps
        // and tails (not for voices at rate 1 without a ramp, from a sound or a stream's ring).
        if !plain, v.pointee.rampFramesLeft == 0, !v.pointee.isVarispeed { return }
        guard let left = v.pointee.left, let right = v.pointee.right else { return }
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
    private func prefetch(_ address: UnsafeRawPointer) {
        _unsafePerformance { sampler_prefetch(address) }
    }

    /// Whether voice `v` is the common case for the next `count` frames: at rate 1, without a
    /// ramp, meters or a stream, not reaching its sound's end. Everything read here is on the
    /// voice's first cache line.
    @_noLocks @_noAllocation @inline(__always)
    private func isPlain(_ v: UnsafeMutablePointer<Voice>, count: Int) -> Bool {
        if v.pointee.isStreamed { return false }
        if v.pointee.rampFramesLeft != 0 { return false }
        if v.pointee.isVarispeed { return false }
        if v.pointee.isMetered { return false }
        return v.pointee.position + Int64(count) < v.pointee.frames
    }

    /// Whether voice `v` sounds (active, not paused), is plain for the next `count` frames
    /// (`isPlain`) and plays into output 0 (`Voice.isSoundingAtRateOneIntoMainMix`).
    @_noLocks @_noAllocation @inline(__always)
    private func isPlainInMainMix(_ v: UnsafeMutablePointer<Voice>, count: Int, busCount: Int) -> Bool {
        if !Voice.isSoundingAtRateOneIntoMainMix(v) { return false }
        if v.pointee.rampFramesLeft != 0 { return false }
        return v.pointee.position &+ Int64(count) < v.pointee.frames
    }

    /// The players of the voices listed at `i + 2` and `i + 3` when they are plain voices into
    /// the main mix (`isPlainInMainMix`; the caller knows those at `i` and `i + 1` are); otherwise nil.
    @_noLocks @_noAllocation @inline(__always)
    private func plainQuad(from i: Int, count: Int, busCount: Int) -> (c: Int, d: Int)? {
        let keyC = Int(voiceList.key(at: i + 2)), keyD = Int(voiceList.key(at: i + 3))
        if (keyC | keyD) & 1 != 0 { return nil }
        if !isPlainInMainMix(voices + (keyC >> 1), count: count, busCount: busCount) { return nil }
        if !isPlainInMainMix(voices + (keyD >> 1), count: count, busCount: busCount) { return nil }
        return (keyC >> 1, keyD >> 1)
    }

    /// A plain voice's samples from its position and its gains, for `Mixing.addPair` and `addQuad`.
    @_noLocks @_noAllocation @inline(__always)
    private func plainSource(_ v: UnsafeMutablePointer<Voice>) -> Mixing.Source {
        let position = Int(v.pointee.position), level = v.pointee.level
        return Mixing.Source(left: v.pointee.left.unsafelyUnwrapped + position, right: v.pointee.right.unsafelyUnwrapped + position,
                                 gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
    }

    /// The common case, kept small so that it stays in registers: a plain voice (`isPlain`).
    /// Mixes it exactly as `mixVoice` would and returns `true`, or does nothing and returns `false`.
    @_noLocks @_noAllocation @inline(__always)
    private func mixPlainVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
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

    /// The common case of a ramp (a fade, or a tail's declick): a voice at rate 1, not streamed
    /// or metered, whose ramp goes on past the block and whose sound does not end in it. Mixes
    /// it exactly as `mixVoice` would (nothing to report, no segment to end) and returns `true`,
    /// or changes nothing and returns `false`.
    @_noLocks @_noAllocation @inline(__always)
    private func mixRampedVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool) -> Bool {
        if silent { return false }
        let count = end &- start
        if v.pointee.isStreamed { return false }
        if v.pointee.isVarispeed { return false }
        if v.pointee.isMetered { return false }
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

    /// Plain voice `v` (sounding into the main mix, not silent) and its own declick tail `t`,
    /// listed right after it, when the tail sounds into the main mix and takes the ramped short
    /// path (`mixRampedVoice`): mixed in one pass over the outputs (`Mixing.addWithRamped`), to
    /// the bit as `addPlainVoice` for the voice and then `mixRampedVoice` for its tail. Returns
    /// the tail's share of the period's bound (taken before it moves on), or nil (nothing done).
    @_noLocks @_noAllocation @inline(__always)
    private func mixPlainWithTail(_ v: UnsafeMutablePointer<Voice>, _ t: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
                                  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int) -> Float? {
        if !t.pointee.isActive { return nil }
        let o = Int(t.pointee.output)
        if o != 0, o < busCount { return nil }
        let count = end &- start
        if t.pointee.isStreamed { return nil }
        if t.pointee.isVarispeed { return nil }
        if t.pointee.isMetered { return nil }
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
    private func addPlainVoice(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
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
    private func mixPlainStream(_ v: UnsafeMutablePointer<Voice>, from start: Int, to end: Int,
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
    private func plainStreamBlock(_ v: UnsafeMutablePointer<Voice>, count: Int) -> PlainStreamBlock? {
        if !v.pointee.isStreamed { return nil }
        if v.pointee.isMetered { return nil }
        return ringBlock(v, count: count)
    }

    /// `plainStreamBlock` for a streamed voice without meters.
    @_noLocks @_noAllocation @inline(__always)
    private func ringBlock(_ v: UnsafeMutablePointer<Voice>, count: Int) -> PlainStreamBlock? {
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
    private func streamLimit(_ v: UnsafeMutablePointer<Voice>, _ stream: UnsafeMutablePointer<StreamRingState>, read: Int64) -> Int64 {
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
    private func advancePlainStream(_ v: UnsafeMutablePointer<Voice>, _ block: PlainStreamBlock, count: Int) {
        v.pointee.streamRead = block.last
        v.pointee.streamAt = Int32(truncatingIfNeeded: block.at &+ count)
        v.pointee.position &+= Int64(count)
    }

    /// After a short-path block's samples were mixed: the ring's read index moves on, and the
    /// writer may write over them.
    @_noLocks @_noAllocation @inline(__always)
    private func releasePlainStream(_ block: PlainStreamBlock) {
        block.stream.pointee.readIndex.store(block.last, ordering: .releasing)
    }

    /// A streamed voice that sounds into output 0 (`Voice.isSoundingStreamIntoMainMix`) and
    /// whose next `count` frames take the short path (`plainStreamBlock`): its block, or nil.
    @_noLocks @_noAllocation @inline(__always)
    private func groupableStream(key: Int, count: Int, busCount: Int) -> PlainStreamBlock? {
        if key & 1 != 0 { return nil }
        let v = voices + (key >> 1)
        if !Voice.isSoundingStreamIntoMainMix(v) { return nil }
        return ringBlock(v, count: count)
    }

    /// Groups of streamed voices (`mixStreamGroup`) one after the other from index `first`, as
    /// many as follow, as `mixPlainGroups` does plain ones: returns how many voices they hold.
    @_noLocks @_noAllocation @inline(never)
    private func mixStreamGroups(at first: Int, count: Int, from start: Int, to end: Int,
                                 left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                                 publishing: Bool, readAhead: Bool, bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        var i = first
        while i &+ 1 < count {
            if i != first, readAhead {
                prefetchAhead(near: i &+ 4 < count ? Int(voiceList.key(at: i &+ 4)) : -1,
                              far: i &+ 8 < count ? Int(voiceList.key(at: i &+ 8)) : -1, frames: end &- start, plain: true)
            }
            let n = mixStreamGroup(at: i, count: count, from: start, to: end, left: left, right: right, busCount: busCount,
                                   publishing: publishing, readAhead: readAhead, bound: &bound, active: &active, kept: &kept)
            if n == 0 { break }
            i &+= n
        }
        return i &- first
    }

    /// Streamed voices listed one after the other that each take the short path into the main
    /// mix in one run of their ring (`groupableStream`), each with a ring of its own: mixed four
    /// or two in one pass over the outputs, to the bit as `mixPlainStream` one at a time, and
    /// published and kept as `mixVoices` would. Returns how many (0: the voices at `i` and
    /// `i + 1` are not such a pair).
    @_noLocks @_noAllocation @inline(__always)
    private func mixStreamGroup(at i: Int, count: Int, from start: Int, to end: Int,
                                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, busCount: Int,
                                publishing: Bool, readAhead: Bool,
                                bound: inout Float, active: inout Int, kept: inout Int) -> Int {
        let frames = end &- start
        let keyA = Int(voiceList.key(at: i)), keyB = Int(voiceList.key(at: i &+ 1))
        guard let a = groupableStream(key: keyA, count: frames, busCount: busCount) else { return 0 }
        guard let b = groupableStream(key: keyB, count: frames, busCount: busCount) else { return 0 }
        // Two voices reading one ring read it one after the other: never together.
        if a.stream == b.stream { return 0 }
        let va = voices + (keyA >> 1), vb = voices + (keyB >> 1)
        var n = 2
        if i &+ 3 < count {
            let keyC = Int(voiceList.key(at: i &+ 2)), keyD = Int(voiceList.key(at: i &+ 3))
            if let c = groupableStream(key: keyC, count: frames, busCount: busCount),
               let d = groupableStream(key: keyD, count: frames, busCount: busCount),
               c.stream != a.stream, c.stream != b.stream, d.stream != a.stream, d.stream != b.stream, d.stream != c.stream {
                n = 4
                let vc = voices + (keyC >> 1), vd = voices + (keyD >> 1)
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
                prefetchAhead(near: i + 4 + k < count ? Int(voiceList.key(at: i + 4 + k)) : -1,
                              far: i + 8 + k < count ? Int(voiceList.key(at: i + 8 + k)) : -1, frames: frames, plain: true)
            }
        }
        var sum = groupedShare(va, streamed: true, publishing: publishing) + groupedShare(vb, streamed: true, publishing: publishing)
        if n == 4 {
            sum += groupedShare(voices + (Int(voiceList.key(at: i &+ 2)) >> 1), streamed: true, publishing: publishing)
            sum += groupedShare(voices + (Int(voiceList.key(at: i &+ 3)) >> 1), streamed: true, publishing: publishing)
        }
        bound += sum
        keepGroup(at: i, count: n, publishing: publishing, active: &active, kept: &kept)
        return n
    }

    /// A short-path stream block's samples and its voice's gains, for `Mixing.addPair` and `addQuad`.
    @_noLocks @_noAllocation @inline(__always)
    private func streamSource(_ v: UnsafeMutablePointer<Voice>, _ block: PlainStreamBlock) -> Mixing.Source {
        let level = v.pointee.level
        return Mixing.Source(left: v.pointee.left.unsafelyUnwrapped + block.at, right: v.pointee.right.unsafelyUnwrapped + block.at,
                                 gainLeft: level * v.pointee.panLeft, gainRight: level * v.pointee.panRight)
    }

    /// Mixes one voice. `player` is -1 for a tail, which reports no events. With `silent` (frames
    /// the device skipped, or played before a late command arrived) nothing is mixed and the
    /// voice is moved on in closed form: its position, phase, ramp, envelope, loop count and
    /// stream read position end where mixing would leave them, in a number of steps that does
    /// not grow with `end - start`: one per ramp or envelope segment ending, and two for the
    /// wraps: the first is reported on its frame, the whole passes after it are skipped at once
    /// and reported as one `.looped` event on the last wrap, whose value is the loops left.
    /// Meters measure what is heard: they do not count silent frames.
    @_noLocks @_noAllocation
    func mixVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, from start: Int, to end: Int, periodStart: Frame,
                  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, silent: Bool = false) {
        let slot = sounds[Int(v.pointee.sound)]
        let metered = v.pointee.isMetered && !silent
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
            // A metered voice is mixed into scratch memory first, so its own contribution can be
            // measured, then added to the output.
            if metered { n = min(n, scratchCapacity) }
            let gl = v.pointee.panLeft
            let gr = v.pointee.panRight
            let dl = metered ? scratchLeft : left + out
            let dr = metered ? scratchRight : right + out
            var advance: Int
            var streamChunk: Mixing.StreamChunk?
            if let stream = slot.stream {
                if metered {
                    dl.update(repeating: 0, count: n)
                    dr.update(repeating: 0, count: n)
                }
                let chunk = Mixing.addStream(stream, voice: v, into: dl, right: dr, count: n, panLeft: gl, panRight: gr,
                                             silent: silent, splitAtWraps: wrapReports > 0)
                if chunk.wrapOffset >= 0 { wrapReports -= 1 }
                v.pointee.streamPeak = max(v.pointee.streamPeak, chunk.peak)
                n = chunk.frames
                advance = n
                streamChunk = chunk
            } else if v.pointee.rate != 1 {
                // Varispeed: up to `n` output frames, consuming source frames up to the end of the
                // sound at most (then the loop logic below runs as usual).
                if silent {
                    let skipped = Mixing.skipVarispeed(v, frames: slot.frames, maxCount: n)
                    n = skipped.output
                    advance = skipped.consumed
                } else {
                    if metered {
                        dl.update(repeating: 0, count: n)
                        dr.update(repeating: 0, count: n)
                    }
                    let produced = Mixing.addVarispeed(v, slot: slot, into: dl, right: dr, maxCount: n, panLeft: gl, panRight: gr)
                    n = produced.output
                    advance = produced.consumed
                }
            } else {
                n = min(n, Int(slot.frames - v.pointee.position))
                advance = n
                if silent {
                    if v.pointee.rampFramesLeft > 0 {
                        v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(Int(v.pointee.rampElapsed) + n)
                    }
                } else {
                    if metered {
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
            if metered {
                Metering.accumulate(v, left: dl, right: dr, count: n)
                Mixing.add(left: dl, right: dr, into: left + out, right: right + out, count: n, gainLeft: 1, gainRight: 1)
            }
            if v.pointee.rampFramesLeft > 0 {
                v.pointee.rampElapsed += Int32(n)
                v.pointee.rampFramesLeft -= Int32(n)
                if v.pointee.rampFramesLeft == 0 {
                    v.pointee.level = v.pointee.levelTarget
                    v.pointee.rampEndedAt = periodStart + Int64(out + n)
                    if v.pointee.stopsAfterRamp {
                        v.pointee.stopsAfterRamp = false
                        v.pointee.isActive = false
                        v.pointee.envStage = 0
                        v.pointee.endedAt = periodStart + Int64(out + n)
                        v.pointee.position += Int64(advance)
                        // A wrap held back (silent) is reported before the stop.
                        if unreportedWrap != .min, p >= 0 {
                            emit(Event(kind: .looped, player: Int32(p), frame: unreportedWrap, value: Int64(v.pointee.loopsRemaining), tag: v.pointee.tag))
                            unreportedWrap = .min
                        }
                        if p >= 0 { emit(Event(kind: .stopped, player: Int32(p), frame: periodStart + Int64(out + n), tag: v.pointee.tag)) }
                        return
                    }
                    // An envelope goes on with its next segment on the next frame.
                    if v.pointee.envStage != 0 { nextEnvelopeSegment(v) }
                }
            }
            v.pointee.position += Int64(advance)
            if let chunk = streamChunk {
                if chunk.wrapOffset >= 0, p >= 0 {
                    emit(Event(kind: .looped, player: Int32(p), frame: periodStart + Int64(out + chunk.wrapOffset), tag: v.pointee.tag))
                }
                out += n
                if chunk.ended {
                    v.pointee.isActive = false
                    v.pointee.endedAt = periodStart + Int64(out)
                    if p >= 0 { emit(Event(kind: .finished, player: Int32(p), frame: periodStart + Int64(out), tag: v.pointee.tag)) }
                    return
                }
                continue
            }
            out += n
            if v.pointee.position >= slot.frames {
                var wrapFrame = periodStart + Int64(out)
                if v.pointee.loopsRemaining != 0 {
                    if v.pointee.loopsRemaining > 0 { v.pointee.loopsRemaining -= 1 }
                    // Varispeed may step past the last frame: the overshoot carries into the loop.
                    v.pointee.position -= slot.frames
                    if v.pointee.position >= slot.frames { v.pointee.position = 0 }
                    wrapReports -= 1
                    if silent, wrapReports < 0 {
                        // The whole passes that follow, at once: each ends in a wrap that takes
                        // one loop; the pass that would end the voice is left to the steps above,
                        // and so is a ramp's last frame (its end may stop the voice or begin an
                        // envelope's next segment): under a ramp, passes up to the frame before.
                        let loops = v.pointee.loopsRemaining
                        let ramp = Int(v.pointee.rampFramesLeft)
                        let passes = Mixing.skipPasses(v, frames: slot.frames, maxCount: ramp > 0 ? min(end - out, ramp - 1) : end - out,
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
                    v.pointee.isActive = false
                    v.pointee.endedAt = wrapFrame
                    if p >= 0 { emit(Event(kind: .finished, player: Int32(p), frame: wrapFrame, tag: v.pointee.tag)) }
                    return
                }
            }
        }
    }

    /// Takes one MIDI message of `count` bytes as it came from any client: a note-on (status
    /// 0x9n, velocity > 0) or a note-off (0x8n, or 0x9n with velocity 0) is queued for `frame`;
    /// everything else (controllers, running status, SysEx, truncated or malformed messages) is
    /// ignored. Render thread only;
    /// real-time safe.
    @_noLocks @_noAllocation
    public func receiveMIDI(_ data: UnsafePointer<UInt8>, count: Int, at frame: Frame) {
        guard count >= 3, data[1] < 0x80, data[2] < 0x80 else { return }
        let kind = data[0] & 0xF0
        if kind == 0x90 {
            if data[2] > 0 {
                receiveNoteOn(note: Int(data[1]), velocity: Int(data[2]), at: frame)
            } else {
                receiveNoteOff(note: Int(data[1]), at: frame)
            }
        } else if kind == 0x80 {
            receiveNoteOff(note: Int(data[1]), at: frame)
        }
    }

    /// Queues a MIDI note-off for `frame`: a `Command.release` of every instrument with that note
    /// that has an envelope, and a trigger of those played by note-offs (at the velocity of the
    /// note's last note-on). Render thread only; real-time safe.
    @_noLocks @_noAllocation
    public func receiveNoteOff(note: Int, at frame: Frame) {
        guard note >= 0, note < 128 else { return }
        let tables = instrumentTables.pointee
        var instrument = tables.noteMap[note]
        var remaining = tables.instrumentCount
        while instrument >= 0, remaining > 0 {
            let inst = tables.instruments[Int(instrument)]
            if inst.triggersOnNoteOff {
                // A release trigger plays now, at its note-on's velocity.
                var command = Command(kind: .trigger, player: instrument, frame: frame)
                command.level = Float(noteOnVelocities[note])
                if !schedule.insert(command) { droppedCommandCounter.add(1, ordering: .relaxed) }
            } else if inst.hasEnvelope {
                if !schedule.insert(Command(kind: .release, player: instrument, frame: frame)) {
                    droppedCommandCounter.add(1, ordering: .relaxed)
                }
            }
            instrument = tables.noteNext[Int(instrument)]
            remaining -= 1
        }
    }

    /// Queues a MIDI note-on for `frame` (one period after the frame the note arrived on keeps the
    /// latency constant): a trigger of every instrument with that note, in their order. Notes
    /// mapped to no instrument and note-offs are ignored. Render thread
    /// only; real-time safe.
    @_noLocks @_noAllocation
    public func receiveNoteOn(note: Int, velocity: Int, at frame: Frame) {
        guard velocity > 0, note >= 0, note < 128 else { return }
        let tables = instrumentTables.pointee
        noteOnVelocities[note] = UInt8(min(127, velocity))
        var instrument = tables.noteMap[note]
        // Every instrument the note plays, in their order (the chain is built acyclic; the count
        // bounds it all the same); release triggers wait for the note-off.
        var remaining = tables.instrumentCount
        var queued = false
        while instrument >= 0, remaining > 0 {
            if !tables.instruments[Int(instrument)].triggersOnNoteOff {
                var command = Command(kind: .trigger, player: instrument, frame: frame)
                command.level = Float(velocity)
                if schedule.insert(command) {
                    queued = true
                } else {
                    droppedCommandCounter.add(1, ordering: .relaxed)
                }
            }
            instrument = tables.noteNext[Int(instrument)]
            remaining -= 1
        }
        if queued { midiNoteCounter.add(1, ordering: .relaxed) }
    }

    /// Resolves a trigger due on `due` and applied on `frame` (later when it arrived late): the
    /// velocity layer, the sample in it, the voice; chokes the group. A late trigger has the
    /// effect it would have had on time from `frame` on: its start takes up its sound where it
    /// would be, the choke fades and the declick tail are where they would be.
    @_noLocks @_noAllocation
    private func trigger(instrument index: Int, velocity: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        guard index >= 0, index < tables.instrumentCount, velocity > 0 else { return }
        let inst = tables.instruments[index]
        // The first layer whose range holds the velocity.
        var layerIndex = -1
        for l in inst.layerStart..<(inst.layerStart + inst.layerCount) {
            if velocity >= tables.layers[l].minVelocity {
                if velocity <= tables.layers[l].maxVelocity { layerIndex = l; break }
            }
        }
        guard layerIndex >= 0 else { return }
        let layer = tables.layers + layerIndex
        guard layer.pointee.soundCount > 0 else { return }
        // The choice is a function of the trigger: its frame for a random layer, its place in
        // the frame order of the layer's triggers for a round robin. A trigger that reaches the
        // render thread after a later one of its layer was applied (sent out of order, late)
        // cannot have the place it would have had: counted.
        // The slot that keeps the order: the layer's own, or the instrument's first layer's when
        // the round robin counts across layers.
        let order = inst.roundRobinAcrossLayers ? tables.layers + inst.layerStart : layer
        if due < order.pointee.lastDue {
            lateCommandCounter.add(1, ordering: .relaxed)
        } else if due == order.pointee.lastDue {
            order.pointee.sameFrameIndex &+= 1
        } else {
            order.pointee.lastDue = due
            order.pointee.sameFrameIndex = 0
        }
        var pick: Int
        if layer.pointee.isRandom {
            // SplitMix64's finalizer over the seed, the frame and the place on that frame.
            var z = layer.pointee.seed ^ (UInt64(bitPattern: due) &* 0x9E37_79B9_7F4A_7C15) ^ (order.pointee.sameFrameIndex &* 0xD6E8_FEB8_6659_FD93)
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            pick = Int(z % UInt64(layer.pointee.soundCount))
        } else {
            pick = Int(order.pointee.counter % UInt64(layer.pointee.soundCount))
            order.pointee.counter &+= 1
        }
        let sound = tables.sounds[layer.pointee.soundStart + pick]
        // Choke: silence the other instruments of the group, with a short fade (or their choke
        // release). As in sfizz, not the instruments the same note plays with it (a multi-mic
        // drum in its own group), and not the voices of release triggers.
        if inst.chokeGroup != 0 {
            for other in 0..<tables.instrumentCount where other != index {
                let o = tables.instruments[other]
                if o.chokeGroup != inst.chokeGroup { continue }
                if o.stack == inst.stack { continue }
                if o.triggersOnNoteOff { continue }
                for p in o.firstPlayer..<(o.firstPlayer + o.voiceCount) {
                    if !voices[p].isActive {
                        // Ended since the trigger's frame (a late trigger): on time the choke
                        // would have ended it sooner, where a straight fade (or none) says; where
                        // a release would have ended it cannot be known here: counted.
                        if voices[p].endedAt > due, voices[p].startedAt <= due {
                            if o.chokeReleases {
                                lateCommandCounter.add(1, ordering: .relaxed)
                            } else {
                                voices[p].endedAt = min(voices[p].endedAt, due + Int64(max(0, o.chokeFadeFrames)))
                            }
                        }
                    } else if voices[p].startedAt > due {
                        // Started after the trigger's frame (it came out of order): on time the
                        // choke could not have touched it.
                        lateCommandCounter.add(1, ordering: .relaxed)
                    } else if o.chokeReleases, voices[p].envStage != 0, voices[p].envStage < 5 {
                        // An envelope choked with a release of its own (SFZ's off_mode).
                        let played = restoreLevel(voices + p, due: due, late: frame - due)
                        let base = voices[p].envBase
                        voices[p].envValue = base > 0 ? voices[p].level / base : 0
                        voices[p].envStage = 5
                        voices[p].envReleaseSegment = o.chokeReleaseSegment
                        voices[p].envReleaseFactor = o.chokeReleaseFactor
                        continueRelease(voices + p)
                        if played > 0 { advanceEnvelope(voices + p, player: p, by: played, from: due) }
                    } else if o.chokeReleases, voices[p].envStage >= 5 {
                        // Released already: the release goes on.
                    } else if o.chokeFadeFrames <= 0 {
                        // No fade: silenced on the trigger's frame.
                        voices[p].isActive = false
                        voices[p].endedAt = max(due, voices[p].startedAt)
                        emit(Event(kind: .stopped, player: Int32(p), frame: frame, tag: voices[p].tag))
                    } else if !voices[p].stopsAfterRamp {
                        let played = restoreLevel(voices + p, due: due, late: frame - due)
                        startRamp(voices + p, to: 0, frames: Int32(clamping: o.chokeFadeFrames))
                        voices[p].stopsAfterRamp = true
                        advanceRamp(voices + p, player: p, by: played, rampStart: due)
                    }
                }
            }
        }
        // The voice: the only one, a free one of the pool, or the oldest (stolen), as the pool
        // was on the trigger's frame: a voice that ended since then (a late trigger) was not free.
        var player = inst.firstPlayer
        if inst.voiceCount > 1 {
            var oldest = -1
            var found = false
            for p in inst.firstPlayer..<(inst.firstPlayer + inst.voiceCount) {
                let v = voices + p
                let sounding = v.pointee.isActive ? v.pointee.startedAt <= due
                    : v.pointee.endedAt > due && v.pointee.startedAt <= due
                if !sounding {
                    player = p
                    found = true
                    break
                }
                if oldest < 0 {
                    oldest = p
                } else if v.pointee.startedAt < voices[oldest].startedAt {
                    oldest = p
                }
            }
            if !found { player = oldest }
        }
        // A voice started after the trigger's frame (it reached the render thread out of order)
        // is taken as it is now: counted.
        if voices[player].isActive {
            if voices[player].startedAt > due { lateCommandCounter.add(1, ordering: .relaxed) }
        }
        var start = Command(kind: .start, player: Int32(player), frame: due)
        start.sound = sound
        start.loops = inst.loops
        if let curve = layer.pointee.curve {
            start.level = inst.level * layer.pointee.level * curve[min(velocity, 127)]
        } else {
            start.level = inst.level * layer.pointee.level * Float(velocity) / 127
        }
        start.pan = inst.pan
        start.fadeFrames = inst.declickFrames
        start.tag = UInt32(index)
        apply(start, at: frame)
        voices[player].output = inst.output
        if inst.hasEnvelope {
            beginEnvelope(voices + player, inst)
            // A late trigger's envelope is where it would be had it begun on its frame.
            if frame > due { advanceEnvelope(voices + player, player: player, by: frame - due, from: due) }
            // A note-off later than this trigger's frame has been applied already (the trigger
            // came late or out of order): on time it would have released this voice. Released
            // now, counted.
            if inst.followsNoteOff, inst.lastReleaseDue > due {
                lateCommandCounter.add(1, ordering: .relaxed)
                releaseVoice(voices + player, player: player, due: frame, at: frame)
            }
        }
    }

    /// Releases instrument `index`'s sounding voices that follow note-offs (see `Kind.release`).
    @_noLocks @_noAllocation
    private func release(instrument index: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        guard index >= 0, index < tables.instrumentCount else { return }
        let inst = tables.instruments[index]
        guard inst.hasEnvelope else { return }
        if due > inst.lastReleaseDue { tables.instruments[index].lastReleaseDue = due }
        for p in inst.firstPlayer..<(inst.firstPlayer + inst.voiceCount) {
            let v = voices + p
            if !v.pointee.envFollowsNoteOff { continue }
            // Started after the note-off's frame: on time the note-off came before it.
            if v.pointee.startedAt > due { continue }
            if !v.pointee.isActive {
                // Ended since the note-off's frame (a late note-off): on time it would have been
                // released then, and sounded otherwise. Counted.
                if v.pointee.endedAt > due { lateCommandCounter.add(1, ordering: .relaxed) }
                continue
            }
            releaseVoice(v, player: p, due: due, at: frame)
        }
    }

    /// Starts voice `v`'s release as of frame `due`, applied on `frame`: from the level it had
    /// then (when that can be known; otherwise counted), advanced over the frames since. A voice
    /// released already, or fading out to stop, goes on as it is; a voice whose envelope a gain
    /// change ended is released from the level it holds.
    @_noLocks @_noAllocation
    private func releaseVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, due: Frame, at frame: Frame) {
        if v.pointee.envStage >= 5 { return }
        if v.pointee.stopsAfterRamp { return }
        let played = restoreLevel(v, due: due, late: frame > due ? frame - due : 0)
        if v.pointee.envStage == 0 {
            v.pointee.envBase = v.pointee.level
            v.pointee.envValue = v.pointee.level > 0 ? 1 : 0
        } else {
            let base = v.pointee.envBase
            v.pointee.envValue = base > 0 ? v.pointee.level / base : 0
        }
        v.pointee.envStage = 5
        continueRelease(v)
        if played > 0 { advanceEnvelope(v, player: p, by: played, from: due) }
    }

    /// Moves voice `v`'s envelope on by `frames` from frame `start`, segment by segment, as
    /// mixing them would (the level at a ramp's frame k is its origin + step × k; at a segment's
    /// end, its target). A release that ends in them stops the voice there.
    @_noLocks @_noAllocation
    private func advanceEnvelope(_ v: UnsafeMutablePointer<Voice>, player p: Int, by frames: Int64, from start: Frame) {
        // Beyond the catch-up limit nothing else is moved on either (see `advanceVoice`).
        guard frames <= Int64(configuration.maxCatchUpFrames) else { return }
        var left = frames
        var at = start
        while left > 0 {
            if v.pointee.rampFramesLeft <= 0 { return }
            if !v.pointee.isActive { return }
            let step = min(left, Int64(v.pointee.rampFramesLeft))
            v.pointee.rampElapsed += Int32(step)
            v.pointee.rampFramesLeft -= Int32(step)
            left -= step
            at += step
            if v.pointee.rampFramesLeft == 0 {
                v.pointee.level = v.pointee.levelTarget
                v.pointee.rampEndedAt = at
                if v.pointee.stopsAfterRamp {
                    v.pointee.stopsAfterRamp = false
                    v.pointee.isActive = false
                    v.pointee.envStage = 0
                    v.pointee.endedAt = at
                    emit(Event(kind: .stopped, player: Int32(p), frame: at, tag: v.pointee.tag))
                    return
                }
                if v.pointee.envStage != 0 { nextEnvelopeSegment(v) }
            } else {
                v.pointee.level = v.pointee.rampOrigin + v.pointee.levelStep * Float(v.pointee.rampElapsed)
            }
        }
    }

    /// Starts voice `v`'s envelope (it has just been started at its level, the envelope's 1).
    @_noLocks @_noAllocation
    private func beginEnvelope(_ v: UnsafeMutablePointer<Voice>, _ inst: InstrumentSlot) {
        v.pointee.envFollowsNoteOff = inst.followsNoteOff
        v.pointee.envBase = v.pointee.level
        v.pointee.envHoldFrames = inst.holdFrames
        v.pointee.envDecaySegment = inst.decaySegment
        v.pointee.envDecayFactor = inst.decayFactor
        v.pointee.envSustain = inst.sustain
        v.pointee.envReleaseSegment = inst.releaseSegment
        v.pointee.envReleaseFactor = inst.releaseFactor
        v.pointee.envStage = 1
        if inst.attackFrames > 0 {
            v.pointee.level = 0
            envelopeSegment(v, to: 1, frames: inst.attackFrames)
        } else {
            // As if the attack had just ended.
            v.pointee.envValue = 1
            nextEnvelopeSegment(v)
        }
    }

    /// A straight segment of voice `v`'s envelope to `value` (× its base level) over `frames`.
    @_noLocks @_noAllocation @inline(__always)
    private func envelopeSegment(_ v: UnsafeMutablePointer<Voice>, to value: Float, frames: Int32) {
        let target = v.pointee.envBase * value
        v.pointee.envValue = value
        v.pointee.levelTarget = target
        v.pointee.levelStep = (target - v.pointee.level) / Float(frames)
        v.pointee.rampOrigin = v.pointee.level
        v.pointee.rampElapsed = 0
        v.pointee.rampFramesLeft = frames
    }

    /// The segment after the one voice `v` has just finished.
    @_noLocks @_noAllocation
    private func nextEnvelopeSegment(_ v: UnsafeMutablePointer<Voice>) {
        let stage = v.pointee.envStage
        if stage == 1 {
            if v.pointee.envHoldFrames > 0 {
                v.pointee.envStage = 2
                envelopeSegment(v, to: 1, frames: v.pointee.envHoldFrames)
                return
            }
            v.pointee.envStage = 3
        } else if stage == 2 {
            v.pointee.envStage = 3
        } else if stage == 5 {
            continueRelease(v)
            return
        } else if stage != 3 {
            return
        }
        // The decay: down by a factor per segment, to the sustain level.
        let sustain = v.pointee.envSustain
        // Within 1e-4 (−80 dB) of the sustain level the decay is over: a fall towards 0 would
        // otherwise go on for ever in ever smaller (subnormal) steps.
        if v.pointee.envDecaySegment == 0 || v.pointee.envValue <= sustain + 1e-4 {
            v.pointee.envStage = 4
            v.pointee.envValue = sustain
            v.pointee.level = v.pointee.envBase * sustain
            v.pointee.levelTarget = v.pointee.level
            v.pointee.rampFramesLeft = 0
            return
        }
        envelopeSegment(v, to: max(sustain, v.pointee.envValue * v.pointee.envDecayFactor), frames: v.pointee.envDecaySegment)
    }

    /// The release's next segment; below −80 dB, a last one to silence, after which the voice stops.
    @_noLocks @_noAllocation
    private func continueRelease(_ v: UnsafeMutablePointer<Voice>) {
        if v.pointee.envValue <= 1e-4 {
            v.pointee.envStage = 6
            envelopeSegment(v, to: 0, frames: v.pointee.envReleaseSegment)
            v.pointee.stopsAfterRamp = true
            return
        }
        envelopeSegment(v, to: v.pointee.envValue * v.pointee.envReleaseFactor, frames: v.pointee.envReleaseSegment)
    }
}
