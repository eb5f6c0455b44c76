// MIDI out: `.midi` commands sent on their frame, system messages held over skipped frames.

extension Engine {
    /// Adds a `.midi` command's message to the period's MIDI output when it is due exactly at
    /// `frame` in audible frames. A channel message (a note) due in skipped frames or arriving
    /// late is not sent: a gap, never a shift. A system message (clock tick, start, stop,
    /// continue, song position) is never lost, since a follower counts them: late, it goes at
    /// once; due in skipped frames, on the first frame after them (`flushDeferredMIDI`).
    @_noLocks @_noAllocation
    func queueMIDI(_ command: Command, at frame: Frame, silent: Bool) {
        let status = command.midiBytes & 0xFF
        let isSystem = status == 0xF2 || (status >= 0xF8 && status <= 0xFC)
        // Locals: `&&`'s autoclosure would capture (and retain) self.
        let capacity = midiOutputCapacity
        if silent {
            let deferred = deferredMIDICountStorage.pointee
            if isSystem && deferred < capacity {
                deferredMIDI[deferred] = MIDIMessage(frame: 0, bytes: command.midiBytes, length: command.midiLength)
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
        midiOutput[count] = MIDIMessage(frame: frame, bytes: command.midiBytes, length: command.midiLength)
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
}
