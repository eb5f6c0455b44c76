extension Engine {
    /// Renders `frameCount` frames of stereo output into `left` and `right` (overwritten, not
    /// added to). `periodStart` is the device frame of the first sample of this block; commands
    /// whose frame falls inside `periodStart ..< periodStart + frameCount` take effect on exactly
    /// that sample.
    ///
    /// Real-time safe: no allocation, no locks, no I/O. Call from one render thread only.
    @_noLocks @_noAllocation
    public func render(frameCount: Int, periodStart: Frame,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
        drainCommands()

        let periodEnd = periodStart + Int64(frameCount)
        var cursor = 0
        while schedule.count > 0 {
            if schedule.firstFrame >= periodEnd { break }
            let command = schedule.removeFirst()
            let offset = command.frame == Command.immediately
                ? cursor : max(cursor, Int(max(command.frame - periodStart, 0)))
            if offset > cursor {
                mixVoices(from: cursor, to: offset, periodStart: periodStart, left: left, right: right)
                cursor = offset
            }
            apply(command, at: periodStart + Int64(offset))
        }
        if cursor < frameCount {
            mixVoices(from: cursor, to: frameCount, periodStart: periodStart, left: left, right: right)
        }

        var active = 0
        for p in 0..<configuration.maxPlayers where voices[p].isActive { active += 1 }
        activeVoiceCounter.store(active, ordering: .relaxed)
        periodStartCounter.store(periodStart, ordering: .releasing)
        renderedFrameCounter.store(periodEnd, ordering: .releasing)
        periodCounter.add(1, ordering: .releasing)
    }

    @_noLocks @_noAllocation
    private func drainCommands() {
        while let command = commands.pop() {
            if !schedule.insert(command) {
                droppedCommandCounter.add(1, ordering: .relaxed)
                emit(Event(kind: .commandDropped, player: command.player, frame: renderedFrameCounter.load(ordering: .relaxed), value: command.frame))
            }
        }
    }

    @_noLocks @_noAllocation
    func emit(_ event: Event) {
        if !events.push(event) { lostEventCounter.add(1, ordering: .relaxed) }
    }

    /// Applies `command` at device frame `frame` (its own frame, or later if it arrived late).
    @_noLocks @_noAllocation
    private func apply(_ command: Command, at frame: Frame) {
        if case .stopAll = command.kind {
            for p in 0..<configuration.maxPlayers where voices[p].isActive {
                voices[p].isActive = false
                emit(Event(kind: .stopped, player: Int32(p), frame: frame))
            }
            return
        }
        let p = Int(command.player)
        switch command.kind {
        case .start:
            let slot = sounds[Int(command.sound)]
            voices[p].sound = command.sound
            voices[p].isActive = true
            voices[p].isPaused = false
            voices[p].position = min(max(command.position, 0), slot.frames - 1)
            voices[p].loopsRemaining = command.loops
            voices[p].level = command.level
            voices[p].levelTarget = command.level
            voices[p].rampFramesLeft = 0
            voices[p].stopsAfterRamp = false
            voices[p].pan = command.pan
            emit(Event(kind: .started, player: command.player, frame: frame, value: Int64(command.tag)))
            if command.frame != Command.immediately && frame > command.frame {
                lateStartCounter.add(1, ordering: .relaxed)
                emit(Event(kind: .lateStart, player: command.player, frame: frame, value: frame - command.frame))
            }
        case .stop:
            guard voices[p].isActive else { return }
            if command.fadeFrames > 0 {
                startRamp(player: p, to: 0, frames: command.fadeFrames)
                voices[p].stopsAfterRamp = true
            } else {
                voices[p].isActive = false
                emit(Event(kind: .stopped, player: command.player, frame: frame))
            }
        case .setGain:
            startRamp(player: p, to: command.level, frames: command.fadeFrames)
        case .setPan:
            voices[p].pan = command.pan
        case .setLoops:
            voices[p].loopsRemaining = command.loops
        case .pause:
            voices[p].isPaused = true
        case .resume:
            voices[p].isPaused = false
        case .seek:
            if voices[p].sound >= 0 {
                let frames = sounds[Int(voices[p].sound)].frames
                voices[p].position = min(max(command.position, 0), frames - 1)
            }
        case .stopAll:
            break
        }
    }

    @_noLocks @_noAllocation
    private func startRamp(player p: Int, to target: Float, frames: Int32) {
        voices[p].levelTarget = target
        if frames <= 0 {
            voices[p].level = target
            voices[p].rampFramesLeft = 0
            voices[p].levelStep = 0
        } else {
            voices[p].levelStep = (target - voices[p].level) / Float(frames)
            voices[p].rampOrigin = voices[p].level
            voices[p].rampElapsed = 0
            voices[p].rampFramesLeft = frames
        }
    }

    /// Adds every sounding voice into `left`/`right` for block offsets `start ..< end`.
    @_noLocks @_noAllocation
    private func mixVoices(from start: Int, to end: Int, periodStart: Frame,
                           left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        for p in 0..<configuration.maxPlayers {
            // Nested rather than `&&`: the autoclosure of `&&` would capture (and retain) self.
            if voices[p].isActive {
                if !voices[p].isPaused {
                    mixVoice(p, from: start, to: end, periodStart: periodStart, left: left, right: right)
                }
            }
        }
    }

    @_noLocks @_noAllocation
    private func mixVoice(_ p: Int, from start: Int, to end: Int, periodStart: Frame,
                          left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let slot = sounds[Int(voices[p].sound)]
        var out = start
        while out < end {
            var n = min(end - out, Int(slot.frames - voices[p].position))
            if voices[p].rampFramesLeft > 0 { n = min(n, Int(voices[p].rampFramesLeft)) }
            let pos = Int(voices[p].position)
            let gl = slot.isStereo ? voices[p].pan.stereoLeft : voices[p].pan.monoLeft
            let gr = slot.isStereo ? voices[p].pan.stereoRight : voices[p].pan.monoRight
            if voices[p].rampFramesLeft > 0 {
                voices[p].level = Mixing.addRamped(left: slot.left + pos, right: slot.right + pos,
                                                   into: left + out, right: right + out, count: n,
                                                   origin: voices[p].rampOrigin, step: voices[p].levelStep,
                                                   firstIndex: Int(voices[p].rampElapsed),
                                                   panLeft: gl, panRight: gr)
                voices[p].rampElapsed += Int32(n)
                voices[p].rampFramesLeft -= Int32(n)
                if voices[p].rampFramesLeft == 0 {
                    voices[p].level = voices[p].levelTarget
                    if voices[p].stopsAfterRamp {
                        voices[p].stopsAfterRamp = false
                        voices[p].isActive = false
                        voices[p].position += Int64(n)
                        emit(Event(kind: .stopped, player: Int32(p), frame: periodStart + Int64(out + n)))
                        return
                    }
                }
            } else {
                let level = voices[p].level
                Mixing.add(left: slot.left + pos, right: slot.right + pos, into: left + out, right: right + out,
                           count: n, gainLeft: level * gl, gainRight: level * gr)
            }
            voices[p].position += Int64(n)
            out += n
            if voices[p].position == slot.frames {
                let wrapFrame = periodStart + Int64(out)
                if voices[p].loopsRemaining != 0 {
                    if voices[p].loopsRemaining > 0 { voices[p].loopsRemaining -= 1 }
                    voices[p].position = 0
                    emit(Event(kind: .looped, player: Int32(p), frame: wrapFrame, value: Int64(voices[p].loopsRemaining)))
                } else {
                    voices[p].isActive = false
                    emit(Event(kind: .finished, player: Int32(p), frame: wrapFrame))
                    return
                }
            }
        }
    }
}
