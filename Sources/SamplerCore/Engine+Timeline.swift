/// The render thread's own view of the device timeline: where its voices are.
struct TimelineState {
    /// Whether a period has been rendered on the current clock.
    var isRunning = false
    /// The first device frame no voice has been advanced over yet.
    var nextFrame: Frame = 0
    /// While catching up over lost frames: the frame the catch-up ends on (the starts applied
    /// before it are reported late by the frames of them that were lost); `.min` otherwise.
    var lostUntil: Frame = .min
    /// The device clock the render thread is on (`Engine.beginNewClock`).
    var epoch: UInt32 = 0
}

extension Engine {
    /// Advances every voice and every scheduled command over `from ..< to`, frames the device
    /// skipped, exactly as if they had been rendered, and discards the output. Counted as one
    /// lost stretch of `to - from` frames. Real-time safe.
    @_noLocks @_noAllocation
    func catchUp(from: Frame, to: Frame) {
        lostPeriodCounter.add(1, ordering: .relaxed)
        lostFrameCounter.add(Int(to - from), ordering: .relaxed)
        timeline.pointee.lostUntil = to
        // One silent block: each voice is moved on in closed form between the commands due in
        // the stretch (`mixVoice`), so the cost does not grow with the stretch's length.
        renderBlock(frameCount: Int(to - from), periodStart: from, buses: discardBuses, busCount: 1, silent: true)
        timeline.pointee.lostUntil = .min
    }

    /// Moves voice `v` of player `p` on over the `frames` frames from device frame `from` as
    /// playing them would, in closed form (`mixVoice` with `silent`): a start that arrived late
    /// takes up its sound where it would be had it started on time. Gives up (the voice then
    /// plays from where it is) beyond `maxCatchUpFrames`. Real-time safe.
    @_noLocks @_noAllocation
    func advanceVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, from: Frame, frames: Int64) {
        guard frames > 0, frames <= Int64(configuration.maxCatchUpFrames), v.pointee.isActive else { return }
        mixVoice(v, player: p, from: 0, to: Int(frames), periodStart: from, left: discardLeft, right: discardRight, silent: true)
    }

    /// A jump of the device clock too large to catch up on (or a server's new clock): everything
    /// scheduled on the old clock is dropped and every voice stops. Real-time safe.
    @_noLocks @_noAllocation
    func restartClock() {
        clockRestartCounter.add(1, ordering: .relaxed)
        silenceEverything()
        timeline.pointee.isRunning = false
    }

    /// Stops every voice and tail and forgets every pending command (a pending replacement of
    /// the instruments is made at once: the control thread counts on it). Real-time safe.
    @_noLocks @_noAllocation
    func silenceEverything() {
        while schedule.count > 0 {
            // A start of the old clock is reported (a player that counted on it learns it never
            // played).
            let dropped = schedule.removeFirst()
            // A routing is kept across clocks: applied now rather than dropped.
            if case .setOutput = dropped.kind {
                let p = Int(dropped.player)
                if p >= 0, p < configuration.maxPlayers { voices[p].output = UInt8(clamping: dropped.outputIndex) }
            }
            if case .start = dropped.kind {
                staleCommandCounter.add(1, ordering: .relaxed)
                emit(Event(kind: .staleCommand, player: dropped.player, frame: renderedFrameCounter.load(ordering: .relaxed),
                           value: dropped.frame, tag: dropped.tag))
            }
        }
        // Messages of the old clock are not sent on the new one.
        lateMIDICounter.add(deferredMIDICountStorage.pointee, ordering: .relaxed)
        deferredMIDICountStorage.pointee = 0
        swapInInstruments()
        // Nothing of the old clock's frames is kept: when voices ended, when layers were last
        // triggered, when instruments were last released.
        for p in 0..<configuration.maxPlayers {
            voices[p].endedAt = .min
            voices[p].startedAt = .min
            voices[p].rampEndedAt = .min
            voices[p].pausedAt = .min
        }
        let tables = instrumentTables.pointee
        for l in 0..<layerCount(tables) {
            tables.layers[l].lastDue = .min
            tables.layers[l].sameFrameIndex = 0
        }
        for i in 0..<tables.instrumentCount {
            tables.instruments[i].lastReleaseDue = .min
            tables.instruments[i].lastTriggerDue = .min
            tables.instruments[i].heldReleaseDue = .min
            tables.instruments[i].sostenutoHeld = false
        }
        // Frames of the old clock mean nothing on the new one; keys held then have lost their
        // note-offs (dropped as stale), and the last notes are of the old timeline.
        for k in 0..<ControllerState.changeSlots { controllers.changedAt[k] = .min }
        for k in 0..<128 { controllers.keysDown[k] = false }
        for k in 0..<128 { controllers.keyDownAt[k] = .min }
        controllers.keySwitch[1] = -1
        controllers.keySwitch[2] = -1
        // Every sounding voice is listed; the period's end publishes them once more.
        for i in 0..<voiceList.count {
            let v = voice(voiceList.key(at: i))
            v.pointee.isActive = false
            // A tail's end is never compared with a late command's frame.
            if !voiceList.key(at: i).isTail { v.pointee.endedAt = .min }
        }
    }

    /// Frames the device skipped and the engine advanced over (output lost), and in how many
    /// stretches. Any thread.
    public var lostFrameCount: Int { lostFrameCounter.load(ordering: .relaxed) }
    public var lostPeriodCount: Int { lostPeriodCounter.load(ordering: .relaxed) }
    /// Frames the device asked for again after they had been rendered (written as silence).
    public var repeatedFrameCount: Int { repeatedFrameCounter.load(ordering: .relaxed) }
    /// Device-clock jumps beyond `maxCatchUpFrames` (everything was stopped). Any thread.
    public var clockRestartCount: Int { clockRestartCounter.load(ordering: .relaxed) }
}

extension Engine {
    /// The number of velocity layers in `tables`. Real-time safe.
    @_noLocks @_noAllocation
    func layerCount(_ tables: InstrumentTables) -> Int {
        if tables.instrumentCount == 0 { return 0 }
        let last = tables.instruments[tables.instrumentCount - 1]
        return last.layerStart + last.layerCount
    }
}
