// Controllers: MIDI channel messages on their frame (controllers, pitch bend, pressure, key
// switches, program changes), the pedals and channel-mode messages, and the voices they steer.

/// What controllers did to the voice a player plays: the instrument and channel that started it
/// (−1: no instrument's, or not steered) and the factor, pan offset and cents they apply now.
struct VoiceControl {
    var instrument: Int32
    var channel: Int32
    var factor: Float
    var panOffset: Float
    var cents: Float
    /// The trigger's random pitch and its instrument's tuning (`InstrumentDefinition.randomCents`,
    /// `tuneCents`), kept under the bend.
    var randomCents: Float = 0
    /// Cents the controllers add to its filter's cutoff, dB to its resonance.
    var cutoff: Float = 0
    var resonance: Float = 0

    @_noLocks @_noAllocation
    init(instrument: Int32 = -1, channel: Int32 = 0, factor: Float = 1, panOffset: Float = 0, cents: Float = 0) {
        self.instrument = instrument
        self.channel = channel
        self.factor = factor
        self.panOffset = panOffset
        self.cents = cents
    }
}

extension Engine {
    /// How many program changes reached the engine (they select nothing: a kit is one program).
    public var programChangeCount: Int { programChangeCounter.load(ordering: .relaxed) }

    /// The controllers of every channel back to the kit's defaults, and its default key switch.
    /// Control thread before the first render, or the render thread.
    @_noLocks @_noAllocation
    func resetControllers() {
        let tables = instrumentTables.pointee
        for channel in 0..<ControllerState.channels { controllers.reset(channel: channel, to: tables.controllerDefaults) }
        controllers.keySwitch[0] = tables.keySwitchDefault
        controllers.keySwitch[1] = -1
        controllers.keySwitch[2] = -1
        for k in 0..<128 { controllers.keysDown[k] = false }
        for k in 0..<128 { controllers.keyDownAt[k] = .min }
        for i in 0..<tables.instrumentCount { tables.instruments[i].sostenutoHeld = false }
    }

    /// Queues a MIDI channel message other than a note for `frame`. Render thread only;
    /// real-time safe.
    @_noLocks @_noAllocation
    func receiveChannelMessage(_ data: UnsafePointer<UInt8>, count: Int, at frame: Frame) {
        let status = data[0]
        let kind = status & 0xF0
        let needed = kind == 0xC0 || kind == 0xD0 ? 2 : 3
        guard count >= needed, data[1] < 0x80, needed == 2 || data[2] < 0x80 else { return }
        var command = Command(kind: .controller, player: Int32(status & 0x0F), frame: frame)
        switch kind {
        case 0xB0:
            command.position = Int64(data[1])
            command.level = Float(data[2]) / 127
        case 0xE0:
            command.position = Command.ChannelMessage.pitchBend
            command.level = Command.bendLevel(Int(data[2]) << 7 | Int(data[1]))
        case 0xD0:
            command.position = Command.ChannelMessage.channelPressure
            command.level = Float(data[1]) / 127
        case 0xA0:
            command.position = Command.ChannelMessage.polyPressure
            command.sound = Int32(data[1])
            command.level = Float(data[2]) / 127
        case 0xC0:
            command.position = Command.ChannelMessage.programChange
            command.sound = Int32(data[1])
        default:
            return
        }
        if !schedule.insert(command) { droppedCommandCounter.add(1, ordering: .relaxed) }
    }

    /// `.controller`: the channel message takes effect on its frame `due` (applied on `frame`,
    /// later when it came late: what the old value did in between cannot be taken back).
    @_noLocks @_noAllocation
    func applyController(_ command: Command, due: Frame, at frame: Frame) {
        let channel = Int(command.player)
        guard channel >= 0, channel < ControllerState.channels else { return }
        // Late: the frames since `due` were heard with the old value. What follows is as on
        // time, unless a trigger since then read the old value, a voice's level or pitch moved
        // (not undone exactly), or a pedal or channel-mode message acted: counted.
        let late = frame > due
        if late, readersTriggered(since: due, controller: Int(command.position), channel: channel) {
            lateCommandCounter.add(1, ordering: .relaxed)
        }
        let value = command.level
        switch command.position {
        case Command.ChannelMessage.pitchBend:
            controllers.bend[channel] = value * 2 - 1
            controllers.changed(Controller.count, channel: channel, at: due)
            steerVoices(controller: Controller.count, channel: channel, late: late)
        case Command.ChannelMessage.channelPressure:
            controllers.channelPressure[channel] = value
            controllers.changed(Controller.channelPressure, channel: channel, at: due)
        case Command.ChannelMessage.polyPressure:
            controllers.polyPressure[channel * 128 + Int(command.sound & 127)] = value
            controllers.changed(Controller.polyPressure, channel: channel, at: due)
        case Command.ChannelMessage.noteOn:
            let tables = instrumentTables.pointee
            let note = Int(command.sound & 127)
            if tables.keySwitchNotes[note] { controllers.keySwitch[0] = Int32(note) }
            controllers.keySwitch[2] = controllers.keySwitch[1]
            controllers.keySwitch[1] = Int32(note)
            controllers.keysDown[note] = true
            controllers.keyDownAt[note] = due
            controllers.changed(-1, channel: channel, at: due)
        case Command.ChannelMessage.noteOff:
            controllers.keysDown[Int(command.sound & 127)] = false
            controllers.changed(-1, channel: channel, at: due)
        case Command.ChannelMessage.programChange:
            programChangeCounter.add(1, ordering: .relaxed)
        default:
            let number = Int(command.position)
            guard number >= 0, number < Controller.count else { return }
            let slot = controllers.values + channel * Controller.count + number
            let old = slot.pointee
            slot.pointee = value
            controllers.changed(number, channel: channel, at: due)
            var isPedal = false
            if number < 128 { isPedal = instrumentTables.pointee.sustainPedals[number] }
            if late {
                let hasTriggers = instrumentTables.pointee.hasControllerTriggers
                var acts = hasTriggers || isPedal
                switch number {
                case Controller.sostenuto, Controller.allSoundOff, Controller.resetAll, Controller.allNotesOff: acts = true
                default: break
                }
                if acts { lateCommandCounter.add(1, ordering: .relaxed) }
            }
            if isPedal, old >= 0.5, value < 0.5 { releaseHeldNotes(channel: channel, due: due, at: frame) }
            switch number {
            case Controller.sostenuto:
                if old < 0.5, value >= 0.5 { latchSostenuto(channel: channel) }
                if old >= 0.5, value < 0.5 { unlatchSostenuto(channel: channel, due: due, at: frame) }
            case Controller.allSoundOff:
                silenceInstruments(channel: channel, due: due, at: frame)
            case Controller.resetAll:
                let sostenutoWasDown = controllers.value(Controller.sostenuto, channel: channel) >= 0.5
                controllers.reset(channel: channel, to: instrumentTables.pointee.controllerDefaults)
                for k in 0...Controller.polyPressure { controllers.changed(k, channel: channel, at: due) }
                if sostenutoWasDown, controllers.value(Controller.sostenuto, channel: channel) < 0.5 {
                    unlatchSostenuto(channel: channel, due: due, at: frame)
                }
                // The pedals that went up let their held notes go.
                releaseHeldNotes(channel: channel, due: due, at: frame)
                steerAllVoices(channel: channel, late: late)
                return
            case Controller.allNotesOff:
                releaseAllInstruments(channel: channel, due: due, at: frame)
            default:
                break
            }
            steerVoices(controller: number, channel: channel, late: late)
            if instrumentTables.pointee.hasControllerTriggers, old != value {
                triggerByController(number, value: value, channel: channel, due: due, at: frame)
            }
        }
    }

    /// Whether an instrument that reads `controller` (a number, or a `Command.ChannelMessage`
    /// code) on `channel` was triggered after frame `due`.
    @_noLocks @_noAllocation
    private func readersTriggered(since due: Frame, controller: Int, channel: Int) -> Bool {
        let tables = instrumentTables.pointee
        let isBend = Int64(controller) == Command.ChannelMessage.pitchBend
        let isKeySwitch = Int64(controller) == Command.ChannelMessage.noteOn || Int64(controller) == Command.ChannelMessage.noteOff
        for i in 0..<tables.instrumentCount {
            let inst = tables.instruments[i]
            if inst.lastTriggerDue <= due { continue }
            if isKeySwitch {
                if inst.keySwitch >= 0 || inst.keyDown >= 0 || inst.keyUp >= 0 || inst.previousKey >= 0 { return true }
                if inst.legato >= 0 { return true }
                if inst.heldDecay > 0 { return true }
                continue
            }
            if isBend, inst.bendUp != 0 || inst.bendDown != 0 { return true }
            var k = inst.conditionStart
            while k < inst.conditionStart + inst.conditionCount {
                if Int(tables.conditions[k].controller) == controller { return true }
                k += 1
            }
            k = inst.modulationStart
            while k < inst.modulationStart + inst.modulationCount {
                if Int(tables.modulations[k].controller) == controller { return true }
                k += 1
            }
        }
        return false
    }

    /// Whether a controller that instrument `inst`'s conditions or modulations read on
    /// `channel` (or the key switch, or the bend) changed after frame `due`.
    @_noLocks @_noAllocation
    func controllersChanged(since due: Frame, _ inst: InstrumentSlot, _ tables: InstrumentTables, channel: Int) -> Bool {
        if inst.keySwitch >= 0 || inst.keyDown >= 0 || inst.keyUp >= 0 || inst.previousKey >= 0 || inst.legato >= 0 || inst.heldDecay > 0,
           controllers.lastChange(-1, channel: channel) > due { return true }
        var k = inst.conditionStart
        while k < inst.conditionStart + inst.conditionCount {
            if controllers.lastChange(Int(tables.conditions[k].controller), channel: channel) > due { return true }
            k += 1
        }
        k = inst.modulationStart
        while k < inst.modulationStart + inst.modulationCount {
            if controllers.lastChange(Int(tables.modulations[k].controller), channel: channel) > due { return true }
            k += 1
        }
        if inst.bendUp != 0 || inst.bendDown != 0, controllers.lastChange(Controller.count, channel: channel) > due { return true }
        return false
    }

    /// Whether instrument `inst`'s conditions hold for a trigger on `channel` now: its channels,
    /// key switch and keys, controller, bend and pressure ranges.
    @_noLocks @_noAllocation
    func conditionsHold(_ inst: InstrumentSlot, _ tables: InstrumentTables, channel: Int) -> Bool {
        if channel < Int(inst.channelLow) || channel > Int(inst.channelHigh) { return false }
        if inst.keySwitch >= 0, controllers.keySwitch[0] != inst.keySwitch { return false }
        if inst.keyDown >= 0, !controllers.keysDown[Int(inst.keyDown)] { return false }
        if inst.keyUp >= 0, controllers.keysDown[Int(inst.keyUp)] { return false }
        if inst.previousKey >= 0, controllers.keySwitch[2] != inst.previousKey { return false }
        if inst.legato >= 0 {
            // Another key than the instrument's own (whose note-on came just before its trigger).
            var others = false
            for k in 0..<128 where k != Int(inst.note) {
                if controllers.keysDown[k] { others = true }
            }
            if others != (inst.legato == 1) { return false }
        }
        var k = inst.conditionStart
        while k < inst.conditionStart + inst.conditionCount {
            let c = tables.conditions[k]
            let v = controllers.conditionValue(Int(c.controller), channel: channel, note: Int(inst.note))
            if v < c.low || v > c.high { return false }
            k += 1
        }
        return true
    }

    /// The instruments a controller triggers, as it moves into their range.
    @_noLocks @_noAllocation
    private func triggerByController(_ number: Int, value: Float, channel: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount {
            let inst = tables.instruments[i]
            if Int(inst.triggerController) != number { continue }
            if value < inst.triggerLow || value > inst.triggerHigh { continue }
            let velocity = max(1, min(127, Int(value * 127 + 0.5)))
            trigger(instrument: i, velocity: velocity, channel: channel, due: due, at: frame)
        }
    }

    /// The factor, pan offset and cents the controllers of `channel` give instrument `inst`'s
    /// voices now.
    /// Inlined: its five results, returned in memory, were read back before they landed.
    @_noLocks @_noAllocation @inline(__always)
    func modulation(_ inst: UnsafeMutablePointer<InstrumentSlot>, _ tables: InstrumentTables, channel: Int)
        -> (factor: Float, pan: Float, cents: Float, cutoff: Float, resonance: Float) {
        var factor: Float = 1, volume: Float = 0, pan: Float = 0, cents: Float = 0, cutoff: Float = 0, resonance: Float = 0
        let start = inst.pointee.modulationStart, end = start + inst.pointee.modulationCount
        var k = start
        while k < end {
            let m = tables.modulations[k]
            k += 1
            let number = Int(m.controller)
            let v = controllers.value(number, channel: channel)
            var x = v
            if let curve = m.curve { x = readCurve(curve, at: v) }
            switch m.target {
            case .amplitude:
                if m.relative {
                    let d = tables.controllerDefaults[number]
                    let base = m.curve.map { readCurve($0, at: d) } ?? d
                    // Unity at the default; a default of nothing: the curve itself.
                    if base > 0 {
                        if x != base { factor *= m.depth * x / base }
                    } else {
                        factor *= m.depth * x
                    }
                } else {
                    factor *= m.depth * x
                }
            case .volume:
                volume += m.depth * x
            case .pan:
                if m.relative {
                    let d = tables.controllerDefaults[number]
                    pan += m.depth * (x - (m.curve.map { readCurve($0, at: d) } ?? d))
                } else {
                    pan += m.depth * x
                }
            case .pitch:
                cents += m.depth * x
            case .cutoff:
                cutoff += m.depth * x
            case .resonance:
                resonance += m.depth * x
            }
        }
        let bend = controllers.bend[channel]
        if bend > 0 { cents += bend * inst.pointee.bendUp } else if bend < 0 { cents -= bend * inst.pointee.bendDown }
        if volume != 0 { factor *= decibelFactor(min(48, max(-144, volume))) }
        // Never quite 0 (−140 dB at least: a level scaled down to nothing could not be scaled
        // back up when the controller returns), never beyond +80 dB, never NaN; pitch within
        // ±8 octaves (rates 1/256…256, which the voice plays).
        let level: Float = factor.isNaN ? 1 : min(1e4, max(factor, 1e-7))
        let bendCents: Float = cents.isNaN ? 0 : min(9600, max(-9600, cents))
        return (level, pan.isNaN ? 0 : pan, bendCents, cutoff.isNaN ? 0 : min(12_000, max(-12_000, cutoff)),
                resonance.isNaN ? 0 : min(96, max(-96, resonance)))
    }

    /// Every sounding voice whose instrument follows `controller` (`Controller.count`: the
    /// bend) on `channel` takes the controllers' new effect, on this frame.
    /// `late`: the change came after its frame; a voice whose level or pitch it moves is
    /// counted (the frames since were heard as they were, and what follows is not exactly as
    /// on time). The voices are steered once for all the messages of one frame, before the
    /// next frames are mixed (`flushSteering`).
    @_noLocks @_noAllocation
    private func steerVoices(controller: Int, channel: Int, late: Bool) {
        guard instrumentTables.pointee.steered[controller] else { return }
        steerAllVoices(channel: channel, late: late)
    }

    @_noLocks @_noAllocation
    private func steerAllVoices(channel: Int, late: Bool) {
        // A late message is steered at once, so that each one is counted where it moves a
        // voice (two late messages that cancel out still moved it in between, on time).
        if late {
            steer(instrumentTables.pointee, channel: channel, late: true)
            return
        }
        controllers.pendingSteer[0] |= 1 << UInt32(channel)
    }

    /// Steers the voices of the channels whose controllers changed since the last call: before
    /// any frame after those changes is mixed.
    @_noLocks @_noAllocation @inline(__always)
    func flushSteering() {
        if controllers.pendingSteer[0] == 0 { return }
        flushPendingSteering()
    }

    @_noLocks @_noAllocation
    private func flushPendingSteering() {
        var channels = controllers.pendingSteer[0]
        controllers.pendingSteer[0] = 0
        let tables = instrumentTables.pointee
        while channels != 0 {
            let channel = channels.trailingZeroBitCount
            channels &= channels - 1
            steer(tables, channel: channel, late: false)
        }
    }

    /// Every sounding voice of `channel` that an instrument's controllers steer takes their
    /// effect now: a walk over the modulated instruments' voices, each instrument's modulation
    /// computed once (for its first voice that follows it).
    @_noLocks @_noAllocation
    private func steer(_ tables: InstrumentTables, channel: Int, late: Bool) {
        controllers.steerStamp[0] &+= 1
        if controllers.steerStamp[0] == 0 { controllers.steerStamp[0] = 1 }
        let stamp = controllers.steerStamp[0]
        for i in 0..<tables.instrumentCount where tables.instruments[i].isModulated {
            let first = tables.instruments[i].firstPlayer
            for p in first..<(first + tables.instruments[i].voiceCount) {
                steerVoice(p, instrument: i, tables, channel: channel, stamp: stamp, late: late)
            }
        }
    }

    /// `steer` for voice `p` of instrument `i`.
    @_noLocks @_noAllocation @inline(__always)
    private func steerVoice(_ p: Int, instrument i: Int, _ tables: InstrumentTables, channel: Int, stamp: UInt32, late: Bool) {
        do {
            let control = voiceControls + p
            if control.pointee.instrument != Int32(i) || control.pointee.channel != Int32(channel) { return }
            let v = voices + p
            if !v.pointee.isActive {
                control.pointee.instrument = -1
                return
            }
            let cache = tables.steerCache + i
            if cache.pointee.stamp != stamp {
                let m = modulation(tables.instruments + i, tables, channel: channel)
                cache.pointee.stamp = stamp
                cache.pointee.factor = m.factor
                cache.pointee.pan = m.pan
                cache.pointee.cents = m.cents
                cache.pointee.cutoff = m.cutoff
                cache.pointee.resonance = m.resonance
                cache.pointee.panned = false
            }
            let m = cache.pointee, old = control.pointee
            let filterMoves = v.pointee.isFiltered && (m.cutoff != old.cutoff || m.resonance != old.resonance)
            // A stereo sound's pan is a gain before its filter.
            let filteredPanMoves = v.pointee.isFiltered && v.pointee.isStereo && m.pan != old.panOffset
            if late, m.factor != old.factor || (m.cents != old.cents && !v.pointee.isStreamed) || filterMoves || filteredPanMoves {
                lateCommandCounter.add(1, ordering: .relaxed)
            }
            if m.factor != old.factor {
                steerLevel(v, by: m.factor / old.factor, frames: tables.instruments[i].steerFrames)
                control.pointee.factor = m.factor
            }
            if m.pan != old.panOffset {
                // The pan law once per instrument, and only when a pan moved.
                if !cache.pointee.panned {
                    let inst = tables.instruments + i
                    cache.pointee.gains = m.pan != 0 ? PanGains(pan: inst.pointee.panPosition + m.pan, law: inst.pointee.panLaw) : inst.pointee.pan
                    cache.pointee.panned = true
                }
                v.pointee.setPan(cache.pointee.gains)
                control.pointee.panOffset = m.pan
            }
            if m.cents != old.cents, !v.pointee.isStreamed {
                let cents = min(9600, max(-9600, m.cents + old.randomCents))
                v.pointee.setRate(cents == 0 ? 1 : centsRate(cents))
                control.pointee.cents = m.cents
            }
            if filterMoves {
                let f = voiceFilters + p
                f.pointee.cutoffCents = m.cutoff
                f.pointee.resonanceDb = m.resonance
                f.pointee.update(sampleRate: tables.instruments[i].filterRate)
                control.pointee.cutoff = m.cutoff
                control.pointee.resonance = m.resonance
            }
        }
    }

    /// Voice `v`'s level to `ratio` times what it is (or is gliding to), in a straight line over
    /// `frames` from this frame, when it is steady: without an envelope or at its sustain, and
    /// not fading out. Otherwise in one step (`scaleLevel`), which keeps its envelope's shape.
    @_noLocks @_noAllocation
    func steerLevel(_ v: UnsafeMutablePointer<Voice>, by ratio: Float, frames: Int32) {
        var steady = v.pointee.envStage.isSteady
        if v.pointee.stopsAfterRamp { steady = false }
        if frames <= 0 { steady = false }
        if !steady {
            scaleLevel(v, by: ratio)
            return
        }
        let target = (v.pointee.rampFramesLeft > 0 ? v.pointee.levelTarget : v.pointee.level) * ratio
        v.pointee.envBase *= ratio
        v.pointee.levelTarget = target
        v.pointee.levelStep = (target - v.pointee.level) / Float(frames)
        v.pointee.rampOrigin = v.pointee.level
        v.pointee.rampElapsed = 0
        v.pointee.rampFramesLeft = frames
    }

    /// Scales voice `v`'s level by `ratio` wherever it is: its level, the ramp or envelope
    /// segment under way and the envelope's base, so that what follows keeps its shape.
    @_noLocks @_noAllocation
    func scaleLevel(_ v: UnsafeMutablePointer<Voice>, by ratio: Float) {
        v.pointee.level *= ratio
        v.pointee.levelTarget *= ratio
        v.pointee.levelStep *= ratio
        v.pointee.rampOrigin *= ratio
        v.pointee.envBase *= ratio
    }

    /// Whether instrument `inst`'s note-offs on `channel` wait: its sustain pedal down, or the
    /// sostenuto pedal went down while its note was.
    @_noLocks @_noAllocation @inline(__always)
    func pedalHolds(_ inst: InstrumentSlot, channel: Int) -> Bool {
        if inst.sostenutoHeld { return true }
        if inst.sustainController < 0 { return false }
        return controllers.value(Int(inst.sustainController), channel: channel) >= 0.5
    }

    /// A pedal went up: the note-offs held on `channel` whose pedals are all up now release their
    /// instruments.
    @_noLocks @_noAllocation
    private func releaseHeldNotes(channel: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount {
            let inst = tables.instruments[i]
            guard inst.heldReleaseDue != .min, Int(inst.heldReleaseChannel) == channel, !pedalHolds(inst, channel: channel) else { continue }
            tables.instruments[i].heldReleaseDue = .min
            // Pressed again since its note-off (and not let go): still held down.
            if inst.lastTriggerDue > inst.heldReleaseDue { continue }
            release(instrument: i, channel: channel, due: due, at: frame)
        }
    }

    /// The sostenuto pedal went down on `channel`: the instruments whose notes are down (pressed
    /// and not released, nor held by the sustain pedal) keep them until it goes up.
    @_noLocks @_noAllocation
    private func latchSostenuto(channel: Int) {
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount {
            let inst = tables.instruments[i]
            guard inst.followsNoteOff, channel >= Int(inst.channelLow), channel <= Int(inst.channelHigh) else { continue }
            // Down: pressed after its last note-off, applied or held by the sustain pedal.
            if inst.lastTriggerDue != .min, inst.lastTriggerDue > max(inst.lastReleaseDue, inst.heldReleaseDue) {
                tables.instruments[i].sostenutoHeld = true
            }
        }
    }

    /// The sostenuto pedal went up on `channel`: what it held is let go.
    @_noLocks @_noAllocation
    private func unlatchSostenuto(channel: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount where tables.instruments[i].sostenutoHeld {
            let inst = tables.instruments[i]
            guard channel >= Int(inst.channelLow), channel <= Int(inst.channelHigh) else { continue }
            tables.instruments[i].sostenutoHeld = false
        }
        releaseHeldNotes(channel: channel, due: due, at: frame)
    }

    /// All notes off: a note-off of every instrument on `channel` (the pedal still holds them).
    @_noLocks @_noAllocation
    private func releaseAllInstruments(channel: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount where channel >= Int(tables.instruments[i].channelLow) && channel <= Int(tables.instruments[i].channelHigh) {
            release(instrument: i, channel: channel, due: due, at: frame)
        }
    }

    /// All sound off: every voice of the instruments on `channel` fades out over its declick.
    @_noLocks @_noAllocation
    private func silenceInstruments(channel: Int, due: Frame, at frame: Frame) {
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount {
            let inst = tables.instruments[i]
            if channel < Int(inst.channelLow) || channel > Int(inst.channelHigh) { continue }
            for p in inst.firstPlayer..<(inst.firstPlayer + inst.voiceCount) {
                let v = voices + p
                if !v.pointee.isActive || v.pointee.stopsAfterRamp || v.pointee.startedAt > due { continue }
                if inst.declickFrames <= 0 {
                    endVoice(v, player: p, endedAt: frame, report: .stopped, at: frame)
                } else {
                    startRamp(v, to: 0, frames: inst.declickFrames)
                    v.pointee.stopsAfterRamp = true
                }
            }
        }
    }
}
