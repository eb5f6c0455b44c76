// The period: the render entry points, the bookkeeping of each period (the device timeline's
// catch-up and repeats, the last line of defence against non-finite samples), and the status the
// control side reads (positions, meters, events).

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
    func renderOutputs(frameCount: Int, periodStart: Frame, count: Int) {
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
        publishTailNeeds(frameCount: frameCount)
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
                flushSteering()
                bound += mixVoices(from: cursor, to: offset, periodStart: periodStart, buses: buses, busCount: busCount,
                                   publishing: false, silent: silent)
                cursor = offset
            }
            apply(command, at: periodStart + Int64(offset))
        }
        // The block's last stretch (every command in it is applied): mixed and published in one
        // pass over the voices, while each voice's record is in cache.
        flushSteering()
        bound += mixVoices(from: cursor, to: frameCount, periodStart: periodStart, buses: buses, busCount: busCount,
                           publishing: true, silent: silent)
        return bound
    }

    /// The tables the control thread published (`Engine.replaceInstruments`) trade places with
    /// the ones in use, which it frees once it sees them handed back. Nothing when none is
    /// published.
    @_noLocks @_noAllocation
    func swapInInstruments() {
        guard instrumentSwap.load(ordering: .acquiring) == InstrumentSwap.published else { return }
        let inUse = instrumentTables.pointee
        // A voice still in its envelope's delay would take its attack from the new tables (its
        // tag names an instrument of the old ones): it begins it now, from the old.
        for p in 0..<configuration.maxPlayers {
            attackAfterDelay(voices + p, inUse)
            attackAfterDelay(tails + p, inUse)
        }
        instrumentTables.pointee = pendingInstruments.pointee
        pendingInstruments.pointee = inUse
        instrumentSwap.store(InstrumentSwap.handedBack, ordering: .releasing)
        // A new kit starts from its own controller defaults and key switch; what sounds is no
        // longer steered.
        resetControllers()
        for p in 0..<configuration.maxPlayers { voiceControls[p].instrument = -1 }
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
    func publish(_ v: UnsafeMutablePointer<Voice>, player p: Int, frameCount: Int) -> Bool {
        let flags: Int64 = (v.pointee.isActive ? 1 : 0) | (v.pointee.isPaused ? 2 : 0)
        playerStates[p].store(v.pointee.position << 2 | flags, ordering: .relaxed)
        if v.pointee.isMetered {
            publishMeters(v, base: p * PlayerMeterField.stride, frameCount: frameCount)
            return true
        }
        return v.pointee.isActive
    }

    @_noLocks @_noAllocation
    func publishMeters(_ v: UnsafeMutablePointer<Voice>, base: Int, frameCount: Int) {
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
}
