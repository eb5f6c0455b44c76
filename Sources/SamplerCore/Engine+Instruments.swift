// Instruments: MIDI in (notes into triggers and releases), and a trigger's steps: choose the
// sample, choke the group, take a voice, start it.

extension Engine {
    /// Takes one MIDI message of `count` bytes as it came from any client: a note-on (status
    /// 0x9n, velocity > 0) or a note-off (0x8n, or 0x9n with velocity 0) is queued for `frame`,
    /// and so are controllers, pitch bend, pressure and program changes (see
    /// `Kind.controller`); a MIDI Start (0xFA) is noted (`lastMIDIStartFrame`); running status,
    /// SysEx, other system messages and truncated or malformed messages are ignored. Render
    /// thread only; real-time safe.
    @_noLocks @_noAllocation
    public func receiveMIDI(_ data: UnsafePointer<UInt8>, count: Int, at frame: Frame) {
        // A MIDI Start is noted for the control side (a program that follows it starts there).
        if count == 1, data[0] == 0xFA, frame >= 0 {
            midiStartFrame.store(frame, ordering: .releasing)
            return
        }
        guard count >= 1, data[0] >= 0x80, data[0] < 0xF0 else { return }
        let kind = data[0] & 0xF0
        let channel = Int(data[0] & 0x0F)
        if kind != 0x80 && kind != 0x90 {
            receiveChannelMessage(data, count: count, at: frame)
            return
        }
        guard count >= 3, data[1] < 0x80, data[2] < 0x80 else { return }
        if kind == 0x90 {
            if data[2] > 0 {
                receiveNoteOn(note: Int(data[1]), velocity: Int(data[2]), channel: channel, at: frame)
            } else {
                receiveNoteOff(note: Int(data[1]), channel: channel, at: frame)
            }
        } else if kind == 0x80 {
            receiveNoteOff(note: Int(data[1]), channel: channel, at: frame)
        }
    }

    /// Queues a MIDI note-off for `frame`: a `Command.release` of every instrument with that note
    /// that has an envelope, and a trigger of those played by note-offs (at the velocity of the
    /// note's last note-on). Render thread only; real-time safe.
    @_noLocks @_noAllocation
    public func receiveNoteOff(note: Int, channel: Int = 0, at frame: Frame) {
        guard note >= 0, note < 128, channel >= 0, channel < 16 else { return }
        let tables = instrumentTables.pointee
        // The key's state first: a release trigger's conditions see it up.
        if tables.stateNotes[note] {
            var state = Command(kind: .controller, player: Int32(channel), frame: frame)
            state.position = Command.ChannelMessage.noteOff
            state.sound = Int32(note)
            if !schedule.insert(state) { droppedCommandCounter.add(1, ordering: .relaxed) }
        }
        var instrument = tables.noteMap[note]
        var remaining = tables.instrumentCount
        while instrument >= 0, remaining > 0 {
            let inst = tables.instruments[Int(instrument)]
            if inst.triggersOnNoteOff {
                // A release trigger plays now, at its note-on's velocity.
                var command = Command(kind: .trigger, player: instrument, frame: frame)
                command.level = Float(noteOnVelocities[note])
                command.channel = Int32(channel)
                if !schedule.insert(command) { droppedCommandCounter.add(1, ordering: .relaxed) }
            } else if inst.hasEnvelope {
                var command = Command(kind: .release, player: instrument, frame: frame)
                command.channel = Int32(channel)
                if !schedule.insert(command) { droppedCommandCounter.add(1, ordering: .relaxed) }
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
    public func receiveNoteOn(note: Int, velocity: Int, channel: Int = 0, at frame: Frame) {
        guard velocity > 0, note >= 0, note < 128, channel >= 0, channel < 16 else { return }
        let tables = instrumentTables.pointee
        noteOnVelocities[note] = UInt8(min(127, velocity))
        // A key switch (and the key's state) takes effect before the note's own triggers.
        if tables.stateNotes[note] {
            var state = Command(kind: .controller, player: Int32(channel), frame: frame)
            state.position = Command.ChannelMessage.noteOn
            state.sound = Int32(note)
            if !schedule.insert(state) { droppedCommandCounter.add(1, ordering: .relaxed) }
        }
        var instrument = tables.noteMap[note]
        // Every instrument the note plays, in their order (the chain is built acyclic; the count
        // bounds it all the same); release triggers wait for the note-off.
        var remaining = tables.instrumentCount
        var queued = false
        while instrument >= 0, remaining > 0 {
            if !tables.instruments[Int(instrument)].triggersOnNoteOff {
                var command = Command(kind: .trigger, player: instrument, frame: frame)
                command.level = Float(velocity)
                command.channel = Int32(channel)
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

    /// Resolves a trigger due on `due` and applied on `frame` (later when it arrived late), in
    /// steps: choose the sample (`chooseSample`), choke the group (`choke`), take a voice
    /// (`allocateVoice`), start it (`startVoice`). A late trigger has the effect it would have
    /// had on time from `frame` on: its start takes up its sound where it would be, the choke
    /// fades and the declick tail are where they would be.
    @_noLocks @_noAllocation
    func trigger(instrument index: Int, velocity: Int, channel: Int = 0, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        guard index >= 0, index < tables.instrumentCount, velocity > 0, channel >= 0, channel < 16 else { return }
        let inst = tables.instruments[index]
        // A trigger whose frame is before a controller change already applied (it came late or
        // out of order) sees the controllers as they are now, not as they were on its frame:
        // counted.
        if frame > due, controllersChanged(since: due, inst, tables, channel: channel) {
            lateCommandCounter.add(1, ordering: .relaxed)
        }
        // Its channels, key switch and controller ranges, as they are on the trigger's frame.
        guard conditionsHold(inst, tables, channel: channel) else { return }
        guard let choice = chooseSample(inst, tables, velocity: velocity, due: due) else { return }
        // A sound whose tail streams needs a free buffer: without one, the trigger does nothing
        // (no choke, no voice taken over), counted.
        let chosen = sounds[Int(choice.sound)]
        if chosen.tail >= 0 {
            if freeTailBuffer(for: chosen) < 0 {
                refusedTailCounter.add(1, ordering: .relaxed)
                return
            }
        }
        if due > inst.lastTriggerDue { tables.instruments[index].lastTriggerDue = due }
        if inst.chokes { choke(by: inst, index: index, tables, due: due, at: frame) }
        if inst.isSilent { return }
        let player = allocateVoice(inst, due: due)
        // What the controllers make of its level, pan and pitch: part of its start, so that a
        // late start is placed with them.
        var control = VoiceControl()
        if inst.isModulated {
            let m = modulation(tables.instruments + index, tables, channel: channel)
            control = VoiceControl(instrument: Int32(index), channel: Int32(channel), factor: m.factor, panOffset: m.pan, cents: m.cents)
            control.cutoff = m.cutoff
            control.resonance = m.resonance
            if sounds[Int(choice.sound)].isStreamed { control.cents = 0 }
        }
        // Its random level, pitch and cutoff: drawn from the trigger's frame and place on it.
        var randomFactor: Float = 1
        var randomCutoff: Float = 0
        var randomOffset: Int64 = 0
        if inst.randomGainDb > 0 || inst.randomCents != 0 || inst.filterRandom != 0 || inst.randomOffsetFrames > 0 {
            let order = inst.roundRobinAcrossLayers ? tables.layers + inst.layerStart : choice.layer
            let draw = randomDraw(instrument: index, due: due, place: order.pointee.sameFrameIndex)
            if inst.randomOffsetFrames > 0 {
                // A draw of its own: the first three's bits hashed again.
                let other = randomDraw(instrument: index ^ 0x5A5A, due: due, place: order.pointee.sameFrameIndex &+ 0x9E37)
                randomOffset = Int64(other.0 * Float(inst.randomOffsetFrames))
            }
            if inst.randomGainDb > 0 { randomFactor = decibelFactor(draw.0 * inst.randomGainDb) }
            if inst.randomCents != 0, !sounds[Int(choice.sound)].isStreamed { control.randomCents = draw.1 * inst.randomCents }
            randomCutoff = draw.2 * inst.filterRandom
        }
        // Its tuning, under the bend as the random pitch is.
        if inst.tuneCents != 0, !sounds[Int(choice.sound)].isStreamed { control.randomCents += inst.tuneCents }
        // A note-off instrument whose level falls while its note is held (SFZ's rt_decay): by
        // the frames from the note's note-on to this trigger.
        if inst.heldDecay > 0, inst.note >= 0 {
            let on = controllers.keyDownAt[Int(inst.note)]
            if on != Frame.min, on <= due {
                randomFactor *= decibelFactor(Float(max(-200, -inst.heldDecay * Double(due - on))))
            }
        }
        if !inst.filterKind.isNone {
            prepareFilter(inst, velocity: velocity, randomCents: randomCutoff, control: &control)
        }
        startVoice(player, instrument: inst, index: index, layer: choice.layer, sound: choice.sound, velocity: velocity,
                   control: control, randomFactor: randomFactor, offset: randomOffset, due: due, at: frame)
        voiceControls[player] = control
    }

    /// The filter the next `.start` gives its voice (`nextFilter`): instrument `inst`'s at the
    /// trigger's key and velocity, with its random draw and the controllers as they are.
    @_noLocks @_noAllocation
    private func prepareFilter(_ inst: InstrumentSlot, velocity: Int, randomCents: Float, control: inout VoiceControl) {
        let key = inst.note >= 0 ? inst.note : inst.filterKeycenter
        let cents = inst.filterKeytrack * Float(key - inst.filterKeycenter) + inst.filterVeltrack * Float(velocity) / 127 + randomCents
        var f = FilterState()
        f.kind = inst.filterKind
        f.baseCutoff = min(20_000, max(0, inst.filterCutoff * centsFactor(cents)))
        f.baseResonance = inst.filterResonance
        if inst.isModulated {
            // `control` holds what the controllers give the voice (`trigger`).
            f.cutoffCents = control.cutoff
            f.resonanceDb = control.resonance
        }
        f.reset(sampleRate: inst.filterRate)
        nextFilter.pointee = f
    }

    /// The velocity layer of instrument `inst` that holds `velocity` (the first whose range
    /// does), and the sample in it: at random or round robin. Nil when no layer holds it.
    @_noLocks @_noAllocation
    private func chooseSample(_ inst: InstrumentSlot, _ tables: InstrumentTables, velocity: Int, due: Frame)
        -> (layer: UnsafeMutablePointer<LayerSlot>, sound: Int32)? {
        // The first layer whose range holds the velocity.
        var layerIndex = -1
        for l in inst.layerStart..<(inst.layerStart + inst.layerCount) {
            if velocity >= tables.layers[l].minVelocity {
                if velocity <= tables.layers[l].maxVelocity { layerIndex = l; break }
            }
        }
        guard layerIndex >= 0 else { return nil }
        let layer = tables.layers + layerIndex
        guard layer.pointee.soundCount > 0 else { return nil }
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
        return (layer, tables.sounds[layer.pointee.soundStart + pick])
    }

    /// Silences the other instruments of `inst`'s choke group, with a short fade (or their choke
    /// release). As in sfizz, not the instruments the same note plays with it (a multi-mic drum
    /// in its own group), and not the voices of release triggers.
    @_noLocks @_noAllocation
    private func choke(by inst: InstrumentSlot, index: Int, _ tables: InstrumentTables, due: Frame, at frame: Frame) {
        for other in 0..<tables.instrumentCount where other != index {
            let o = tables.instruments[other]
            if o.offBy != inst.group { continue }
            // As sfizz: not a voice of its own group that the same note played.
            if o.group == inst.group, o.stack == inst.stack { continue }
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
                } else if o.chokeReleases, voices[p].envStage.isOn, !voices[p].envStage.isReleased {
                    // An envelope choked with a release of its own (SFZ's off_mode); released, a
                    // voice that loops until then stops looping.
                    if voiceLoopsUntilRelease[p] { leaveLoop(voices + p, late: frame - due) }
                    let played = restoreLevel(voices + p, due: due, late: frame - due)
                    voices[p].envReleaseSegment = o.chokeReleaseSegment
                    voices[p].envReleaseFactor = o.chokeReleaseFactor
                    voices[p].beginRelease()
                    if played > 0 { advanceEnvelope(voices + p, player: p, by: played, from: due) }
                } else if o.chokeReleases, voices[p].envStage.isReleased {
                    // Released already: the release goes on.
                } else if o.chokeFadeFrames <= 0 {
                    // No fade: silenced on the trigger's frame.
                    endVoice(voices + p, player: p, endedAt: max(due, voices[p].startedAt), report: .stopped, at: frame)
                } else if !voices[p].stopsAfterRamp {
                    let played = restoreLevel(voices + p, due: due, late: frame - due)
                    startRamp(voices + p, to: 0, frames: Int32(clamping: o.chokeFadeFrames))
                    voices[p].stopsAfterRamp = true
                    advanceRamp(voices + p, player: p, by: played, rampStart: due)
                }
            }
        }
    }

    /// The voice a trigger of `inst` plays on: the only one, a free one of the pool, or the
    /// oldest (stolen), as the pool was on the trigger's frame: a voice that ended since then
    /// (a late trigger) was not free.
    @_noLocks @_noAllocation
    private func allocateVoice(_ inst: InstrumentSlot, due: Frame) -> Int {
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
        return player
    }

    /// Starts the chosen `sound` of `layer` on voice `player` at the velocity's level, with the
    /// instrument's envelope, output and declick.
    @_noLocks @_noAllocation
    private func startVoice(_ player: Int, instrument inst: InstrumentSlot, index: Int, layer: UnsafeMutablePointer<LayerSlot>,
                            sound: Int32, velocity: Int, control: VoiceControl, randomFactor: Float, offset: Int64,
                            due: Frame, at frame: Frame) {
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
        if control.factor != 1 { start.level *= control.factor }
        if randomFactor != 1 { start.level *= randomFactor }
        if control.panOffset != 0 { start.pan = PanGains(pan: inst.panPosition + control.panOffset, law: inst.panLaw) }
        let cents = min(9600, max(-9600, control.cents + control.randomCents))
        if cents != 0 { start.rate = centsRate(cents) }
        start.fadeFrames = inst.declickFrames
        // A random start within the sound (`offset_random`; held within it by the start).
        start.position = offset
        start.tag = UInt32(index)
        // A voice it takes over (polyphony) fades on its tail: over the declick, or, where the
        // instrument's chokes release (SFZ's off_mode/off_time), with that release, as sfizz
        // releases a voice it steals.
        var stealing = false
        if voices[player].isActive, !voices[player].isPaused, inst.declickFrames > 0 { stealing = true }
        apply(start, at: frame)
        voiceLoopsUntilRelease[player] = inst.loopsUntilRelease
        if stealing, inst.chokeReleases, frame == due, tails[player].isActive, !tails[player].envStage.isReleased {
            tails[player].stopsAfterRamp = false
            tails[player].envReleaseSegment = inst.chokeReleaseSegment
            tails[player].envReleaseFactor = inst.chokeReleaseFactor
            if tailLoopsUntilRelease[player] { leaveLoop(tails + player, late: 0) }
            tails[player].beginRelease()
        }
        nextFilter.pointee.disable()
        voices[player].output = inst.output
        if inst.hasEnvelope {
            if inst.hasVelocityEnvelope || inst.randomOffsetShortensDelay {
                // Its stages at this velocity (the attack kept for the end of its delay), its
                // delay shortened by a random delay's start into the silence.
                var e = inst
                if inst.hasVelocityEnvelope {
                    e = envelope(of: inst, velocity: velocity)
                    voiceAttacks[player] = e.attackFrames
                }
                if inst.randomOffsetShortensDelay { e.delayFrames = Int32(max(0, Int64(e.delayFrames) - offset)) }
                voices[player].beginEnvelope(e)
            } else {
                voices[player].beginEnvelope(inst)
            }
            // A late trigger's envelope is where it would be had it begun on its frame (its
            // filter's memory is not: counted in `advanceEnvelope`).
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

    /// Voice `v`, released, stops looping: it plays on through the rest of its sample (its
    /// sound's continuation, whose first frames are its sound's) to the end. A release `late`
    /// frames after its frame whose voice may have wrapped since is counted: on time it would
    /// have gone on past the loop's end instead.
    @_noLocks @_noAllocation
    func leaveLoop(_ v: UnsafeMutablePointer<Voice>, late: Int64) {
        guard v.pointee.isActive, v.pointee.loopsRemaining != 0, v.pointee.sound >= 0, !v.pointee.isStreamed else { return }
        if late > 0, playedSince(v, late: late).wrapped { lateCommandCounter.add(1, ordering: .relaxed) }
        v.pointee.loopsRemaining = 0
        let c = sounds[Int(v.pointee.sound)].continuation
        guard c >= 0 else { return }
        let whole = sounds[Int(c)]
        v.pointee.sound = c
        v.pointee.left = whole.left
        v.pointee.right = whole.right
        v.pointee.frames = whole.frames
    }

    /// Instrument `inst` with its envelope's stages at `velocity` (0…127: v / 127 of what
    /// velocity 127 adds to each, as sfizz's `ampeg_vel2*`): times held at 0 or more (the
    /// release at a frame or more), the sustain within 0…1.
    @_noLocks @_noAllocation
    func envelope(of inst: InstrumentSlot, velocity: Int) -> InstrumentSlot {
        var e = inst
        let add = inst.velocityEnvelope
        let v = Double(min(127, max(0, velocity))) / 127
        func frames(_ base: Int32, _ extra: Int, floor: Int) -> Int {
            let x = Double(base) + Double(extra) * v
            return x < Double(floor) ? floor : x > 2_000_000_000 ? 2_000_000_000 : Int(x + 0.5)
        }
        e.delayFrames = Int32(frames(inst.delayFrames, add.delayFrames, floor: 0))
        e.attackFrames = Int32(Double(frames(inst.baseAttackFrames, add.attackFrames, floor: 0)) * Double(1 - inst.attackStart) + 0.5)
        e.holdFrames = Int32(frames(inst.holdFrames, add.holdFrames, floor: 0))
        let decay = frames(inst.baseDecayFrames, add.decayFrames, floor: 0)
        let decaySegments = envelopeSegments(forFall: decay)
        e.decaySegment = decay == 0 ? 0 : decaySegments.frames
        e.decayFactor = decaySegments.factor
        e.sustain = min(1, max(0, inst.sustain + add.sustain * Float(v)))
        let release = envelopeSegments(forFall: frames(inst.baseReleaseFrames, add.releaseFrames, floor: 1))
        e.releaseSegment = release.frames
        e.releaseFactor = release.factor
        return e
    }

    /// Releases instrument `index`'s sounding voices that follow note-offs (see `Kind.release`).
    @_noLocks @_noAllocation
    func release(instrument index: Int, channel: Int = 0, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        guard index >= 0, index < tables.instrumentCount, channel >= 0, channel < 16 else { return }
        let inst = tables.instruments[index]
        guard inst.hasEnvelope else { return }
        // Late, with the pedal moved since its frame: the pedal read now is not the one it met.
        if frame > due {
            var moved = controllers.lastChange(Controller.sostenuto, channel: channel) > due
            if inst.sustainController >= 0, controllers.lastChange(Int(inst.sustainController), channel: channel) > due { moved = true }
            if moved { lateCommandCounter.add(1, ordering: .relaxed) }
        }
        // The pedals hold the note-off until they go up.
        if inst.followsNoteOff, pedalHolds(inst, channel: channel) {
            tables.instruments[index].heldReleaseDue = due
            tables.instruments[index].heldReleaseChannel = Int32(channel)
            return
        }
        if due > inst.lastReleaseDue { tables.instruments[index].lastReleaseDue = due }
        for p in inst.firstPlayer..<(inst.firstPlayer + inst.voiceCount) {
            let v = voices + p
            if !v.pointee.envFollowsNoteOff { continue }
            // A voice another channel's note started (known where controllers steer it).
            if voiceControls[p].instrument == Int32(index), voiceControls[p].channel != Int32(channel) { continue }
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
    func releaseVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, due: Frame, at frame: Frame) {
        if v.pointee.envStage.isReleased { return }
        if v.pointee.stopsAfterRamp { return }
        // A voice that loops until released stops looping (as its instrument said when it began).
        var loopsUntilRelease = false
        if v >= voices, v < voices + configuration.maxPlayers { loopsUntilRelease = voiceLoopsUntilRelease[v - voices] }
        if v >= tails, v < tails + configuration.maxPlayers { loopsUntilRelease = tailLoopsUntilRelease[v - tails] }
        if loopsUntilRelease { leaveLoop(v, late: frame > due ? frame - due : 0) }
        let played = restoreLevel(v, due: due, late: frame > due ? frame - due : 0)
        v.pointee.beginRelease()
        if played > 0 { advanceEnvelope(v, player: p, by: played, from: due) }
    }
}

/// Two numbers in 0…1 for a trigger of instrument `instrument` on frame `due`, the `place`-th
/// of its layer's on that frame: SplitMix64's finalizer over them (a function of the trigger,
/// as the random sample choice is).
@_noLocks @_noAllocation
func randomDraw(instrument: Int, due: Frame, place: UInt64) -> (Float, Float, Float) {
    var z = (UInt64(instrument) &+ 0x5851_F42D_4C95_7F2D) ^ (UInt64(bitPattern: due) &* 0x9E37_79B9_7F4A_7C15) ^ (place &* 0xD6E8_FEB8_6659_FD93)
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return (Float(z >> 40) / Float(1 << 24), Float((z >> 16) & 0xFF_FFFF) / Float(1 << 24), Float(z & 0xFFFF) / Float(1 << 16))
}
