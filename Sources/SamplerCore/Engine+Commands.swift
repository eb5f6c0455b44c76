// Commands: taken from the control thread's queue, and applied on their frame, one named step
// per kind of command.

extension Engine {
    /// Takes the commands the control thread sent since the last period: the ones that act on
    /// arrival (cancels, ownership requests, a new clock) act; the others wait in the schedule
    /// for their frame.
    @_noLocks @_noAllocation
    func drainCommands() {
        while let command = commands.pop() {
            // Cancels act when they arrive, on what was sent before them, not on their frame.
            if case .cancelPending = command.kind {
                schedule.removeAll(forPlayer: command.player, from: command.cancelFrom, triggers: command.cancelsTriggers)
                continue
            }
            // A request about a sound acts when it arrives: every command sent before it is in
            // the schedule already (see `confirmUnreferencedSounds`).
            if case .confirmUnreferenced = command.kind {
                ownership.note(slot: command.sound, sequence: command.request)
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

    /// Applies `command` at device frame `frame` (its own frame, or later if it arrived late).
    @_noLocks @_noAllocation
    func apply(_ command: Command, at frame: Frame) {
        switch command.kind {
        case .stopAll:
            stopAll(command, at: frame)
            return
        case .trigger:
            trigger(instrument: Int(command.instrument), velocity: Int(command.velocity), channel: Int(command.channel),
                    due: command.due(at: frame), at: frame)
            return
        case .controller:
            applyController(command, due: command.due(at: frame), at: frame)
            return
        case .replaceInstruments:
            swapInInstruments()
            return
        case .release:
            release(instrument: Int(command.instrument), channel: Int(command.channel), due: command.due(at: frame), at: frame)
            return
        case .setInstrumentMix:
            setInstrumentMix(command)
            return
        default:
            break
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
                v.pointee.output = UInt8(clamping: command.outputIndex)
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
        case .start: start(v, player: p, command, at: frame)
        case .stop: stop(v, player: p, command, at: frame)
        case .setGain: setGain(v, player: p, command, at: frame)
        case .setPan:
            // A stereo sound's pan is a gain before its filter: a late one leaves the filter's
            // memory as the old pan made it (counted).
            if v.pointee.isFiltered, v.pointee.isStereo, v.pointee.isActive, lateness(command, at: frame) > 0 {
                lateCommandCounter.add(1, ordering: .relaxed)
            }
            v.pointee.setPan(command.pan)
        case .setLoops: setLoops(v, command, at: frame)
        case .pause: pause(v, command, at: frame)
        case .resume: resume(v, player: p, command, at: frame)
        case .seek: seek(v, player: p, command, at: frame)
        case .setRate: setRate(v, player: p, command, at: frame)
        case .setMetering: v.pointee.isMetered = command.meteringOn
        case .setOutput: setOutput(v, command, at: frame)
        case .stopAll, .reset, .cancelPending, .trigger, .midi, .setInstrumentMix, .replaceInstruments, .confirmUnreferenced, .release, .controller:
            break
        }
    }

    /// `.stopAll`: every sounding voice stops; tails fade out on their own.
    @_noLocks @_noAllocation
    private func stopAll(_ command: Command, at frame: Frame) {
        // Every sounding voice is listed (in player order).
        for i in 0..<voiceList.count {
            let key = voiceList.key(at: i)
            if key.isTail { continue }
            let p = key.player
            if voices[p].isActive {
                endVoice(voices + p, player: p, endedAt: max(command.due(at: frame), voices[p].startedAt), report: .stopped, at: frame)
            }
        }
    }

    /// `.setInstrumentMix`: the instrument's level and pan for its triggers from now on.
    @_noLocks @_noAllocation
    private func setInstrumentMix(_ command: Command) {
        // The render thread owns the instrument tables once rendering has begun.
        let tables = instrumentTables.pointee
        let i = Int(command.instrument)
        guard i >= 0, i < tables.instrumentCount else { return }
        if command.setsInstrumentLevel { tables.instruments[i].level = command.level }
        if command.setsInstrumentPan { tables.instruments[i].pan = command.pan }
    }

    /// `.start`: voice `v` of player `p` plays the command's sound; a voice still sounding
    /// fades out on the player's tail (a declick). A start that arrived after its frame takes up
    /// its sound where it would be had it started on time (the device timeline), and is reported
    /// late by the frames of it that were not heard; so is a start on frames the device skipped.
    @_noLocks @_noAllocation
    private func start(_ v: UnsafeMutablePointer<Voice>, player p: Int, _ command: Command, at frame: Frame) {
        let slot = sounds[Int(command.sound)]
        // A sound whose tail streams: a buffer for it, or the start is refused (counted).
        var tailBuffer: Int32 = -1
        if slot.tail >= 0 {
            tailBuffer = takeTailBuffer(player: p, slot: slot)
            if tailBuffer < 0 {
                refusedTailCounter.add(1, ordering: .relaxed)
                return
            }
        }
        let lateStart = lateness(command, at: frame)
        if command.fadeFrames > 0 && !v.pointee.isActive && lateStart > 0 {
            // On time the old voice, sounding then, would have left a declick tail.
            if v.pointee.endedAt > command.frame { lateCommandCounter.add(1, ordering: .relaxed) }
        }
        if command.fadeFrames > 0 && v.pointee.isActive && !v.pointee.isPaused {
            // Declick: the old voice fades out on the player's tail while the new one starts.
            tails[p] = v.pointee
            tailTailBuffers[p] = voiceTailBuffers[p]
            tails[p].isMetered = false  // a tail's meters are never published
            tailFilters[p] = voiceFilters[p]
            tailAttacks[p] = voiceAttacks[p]
            tailLoopsUntilRelease[p] = voiceLoopsUntilRelease[p]
            let played = restoreLevel(tails + p, due: command.frame, late: lateness(command, at: frame))
            startRamp(tails + p, to: 0, frames: command.fadeFrames)
            tails[p].stopsAfterRamp = true
            voiceList.insert(player: p, tail: true)
            // Late: the old sound played on (heard) at its level; its fade is where it would
            // be had it begun on the start's frame.
            advanceRamp(tails + p, player: -1, by: played, rampStart: command.frame)
        }
        v.pointee.setSound(command.sound, slot)
        voiceTailBuffers[p] = tailBuffer
        // Its filter: the one its instrument's trigger prepared, or none.
        voiceFilters[p] = nextFilter.pointee
        v.pointee.isFiltered = !nextFilter.pointee.kind.isNone
        nextFilter.pointee.disable()
        v.pointee.envStage = .none
        v.pointee.envFollowsNoteOff = false
        v.pointee.isActive = true
        v.pointee.isPaused = false
        v.pointee.position = min(max(command.position, 0), slot.frames - 1)
        v.pointee.phase = 0
        v.pointee.setRate(command.rate)
        // A tail that repeats its loop is written unrolled: the voice plays straight through it.
        v.pointee.loopsRemaining = slot.tailRepeats ? 0 : command.loops
        v.pointee.level = command.level
        v.pointee.levelTarget = command.level
        v.pointee.rampFramesLeft = 0
        v.pointee.rampEndedAt = .min
        v.pointee.pausedAt = .min
        v.pointee.stopsAfterRamp = false
        v.pointee.setPan(command.pan)
        v.pointee.tag = command.tag
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
    }

    /// `.stop`: at once, or with a fade (a voice fading out already goes on with its fade).
    @_noLocks @_noAllocation
    private func stop(_ v: UnsafeMutablePointer<Voice>, player p: Int, _ command: Command, at frame: Frame) {
        guard v.pointee.isActive else {
            // Ended since a late stop's frame (a release ran out): on time its fade could have
            // outlasted that end, which cannot be placed now: counted.
            if command.fadeFrames > 0 { countIfEndedSince(v, command, at: frame) }
            return
        }
        if command.fadeFrames > 0 && !v.pointee.isPaused {
            if v.pointee.stopsAfterRamp { return }
            let played = restoreLevel(v, due: command.frame, late: lateness(command, at: frame))
            startRamp(v, to: 0, frames: command.fadeFrames)
            v.pointee.stopsAfterRamp = true
            advanceRamp(v, player: p, by: played, rampStart: command.frame)
        } else {
            endVoice(v, player: p, endedAt: max(command.due(at: frame), v.pointee.startedAt), report: .stopped, at: frame)
        }
    }

    /// `.setGain`: a ramp to the new level.
    @_noLocks @_noAllocation
    private func setGain(_ v: UnsafeMutablePointer<Voice>, player p: Int, _ command: Command, at frame: Frame) {
        // A voice fading out to stop keeps fading: a gain change does not revive it.
        if v.pointee.stopsAfterRamp { return }
        // Nor does it revive a released envelope: the release goes on.
        if v.pointee.envStage.isReleased { return }
        // A paused voice's ramp waits for it: advanced only over what it played before its pause.
        let played = restoreLevel(v, due: command.frame, late: lateness(command, at: frame))
        startRamp(v, to: command.level, frames: command.fadeFrames)
        advanceRamp(v, player: p, by: played, rampStart: command.frame)
    }

    /// `.setLoops`: the repeats left after the current pass.
    @_noLocks @_noAllocation
    private func setLoops(_ v: UnsafeMutablePointer<Voice>, _ command: Command, at frame: Frame) {
        countIfEndedSince(v, command, at: frame)
        // A voice in a streamed tail plays it once: its buffer holds nothing before the tail
        // (nor, in a tail that repeats its loop, is there an end to wrap at).
        // (Nested rather than `||`: see `Engine+VoiceWalk.swift`.)
        if v.pointee.sound >= 0 {
            let slot = sounds[Int(v.pointee.sound)]
            if slot.tailStart > 0 { return }
            if slot.tailRepeats { return }
        }
        v.pointee.loopsRemaining = command.loops
        let late = lateness(command, at: frame)
        guard late > 0 && v.pointee.isActive && !v.pointee.isPaused && v.pointee.frames > 0 else { return }
        // On time, the wraps since its frame would have counted against the new value: the
        // passes begun since then, ⌈(played − position) / length⌉, in the voice's own fixed
        // point (exact).
        let played = playedSince(v, late: late)
        guard played.wrapped && command.loops >= 0 else { return }
        let wraps = played.passes
        if command.loops >= wraps {
            v.pointee.loopsRemaining = command.loops - wraps
        } else {
            // On time it would have ended already: it ends now.
            v.pointee.loopsRemaining = 0
            endVoice(v, player: Int(command.player), endedAt: frame, report: .finished, at: frame)
        }
    }

    // A pause, resume, seek or rate change that arrives after its frame leaves the voice where
    // it would be had it come on time (the device timeline): what was heard between cannot be
    // taken back, what follows is as if it had.

    /// `.pause`: the voice holds where it is.
    @_noLocks @_noAllocation
    private func pause(_ v: UnsafeMutablePointer<Voice>, _ command: Command, at frame: Frame) {
        guard !v.pointee.isPaused else { return }
        countIfEndedSince(v, command, at: frame)
        let late = lateness(command, at: frame)
        if late > 0 && v.pointee.isActive {
            if !rewind(v, by: late, since: command.frame) { lateCommandCounter.add(1, ordering: .relaxed) }
        }
        v.pointee.isPaused = true
        v.pointee.pausedAt = command.frame == Command.immediately ? frame : max(command.frame, v.pointee.startedAt)
    }

    /// `.resume`: the voice plays on from where it held.
    @_noLocks @_noAllocation
    private func resume(_ v: UnsafeMutablePointer<Voice>, player p: Int, _ command: Command, at frame: Frame) {
        guard v.pointee.isPaused else { return }
        v.pointee.isPaused = false
        let late = lateness(command, at: frame)
        if late > 0 && v.pointee.isActive && v.pointee.startedAt <= command.frame {
            advanceVoice(v, player: p, from: command.frame, frames: late)
        }
    }

    /// `.seek`: the voice moves to the command's position in its sound.
    @_noLocks @_noAllocation
    private func seek(_ v: UnsafeMutablePointer<Voice>, player p: Int, _ command: Command, at frame: Frame) {
        countIfEndedSince(v, command, at: frame)
        guard v.pointee.sound >= 0 else { return }
        // In a tail partly read: its whole length (what is not read yet ends the voice, counted,
        // where it plays).
        let frames = tailFrames(of: sounds[Int(v.pointee.sound)])
        var late = v.pointee.isPaused || !v.pointee.isActive ? 0 : lateness(command, at: frame)
        if late > 0 {
            // What it played since the seek's frame must be undoable: no ramp advanced, no wrap
            // counted, no restart in between.
            let wrapped = playedSince(v, late: late).wrapped
            if v.pointee.rampFramesLeft != 0 || wrapped || v.pointee.startedAt > command.frame || v.pointee.isStreamed {
                lateCommandCounter.add(1, ordering: .relaxed)
                late = 0
            }
        }
        let slot = sounds[Int(v.pointee.sound)]
        v.pointee.position = min(max(command.position, 0), frames - 1)
        v.pointee.phase = 0
        if slot.tailStart > 0 || slot.tailBuffer >= 0, v.pointee.isActive {
            // A voice in a streamed tail: before the tail's start (the head, not in its buffer)
            // or past what was read, it ends there (counted as a tail not read in time).
            // (Nested rather than `||`: see `Engine+VoiceWalk.swift`.)
            var outside = false
            if v.pointee.position < slot.tailStart {
                tailUnderrunCounter.add(1, ordering: .relaxed)
                outside = true
            } else if v.pointee.position >= slot.frames {
                if !extendTail(v, buffer: Int(slot.tailBuffer)) { outside = true }
            }
            if outside {
                endVoice(v, player: p, endedAt: frame, report: .finished, at: frame)
                return
            }
        }
        // Played on from the seek's frame to this one, wrapping where it loops.
        if late > 0 { advanceVoice(v, player: p, from: command.frame, frames: late) }
    }

    /// `.setRate`: the playback speed.
    @_noLocks @_noAllocation
    private func setRate(_ v: UnsafeMutablePointer<Voice>, player p: Int, _ command: Command, at frame: Frame) {
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
    }

    /// `.setOutput`: the output the voice plays into.
    @_noLocks @_noAllocation
    private func setOutput(_ v: UnsafeMutablePointer<Voice>, _ command: Command, at frame: Frame) {
        let output = UInt8(clamping: command.outputIndex)
        // Late on a sounding voice: its frames since the command's frame went to the old output
        // (the sum of the outputs is as on time, each output is not): counted.
        if lateness(command, at: frame) > 0, v.pointee.isActive, !v.pointee.isPaused, v.pointee.output != output {
            lateCommandCounter.add(1, ordering: .relaxed)
        }
        v.pointee.output = output
    }

    /// A command's ramp of voice `v`'s level to `target` over `frames` (a fade, a gain change, a
    /// choke); it ends the voice's envelope.
    @_noLocks @_noAllocation
    func startRamp(_ v: UnsafeMutablePointer<Voice>, to target: Float, frames: Int32) {
        v.pointee.envStage = .none
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
}
