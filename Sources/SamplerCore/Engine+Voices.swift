// Ending a voice and finishing a ramp: the one place each is written.

extension Engine {
    /// The voice or tail `key` names.
    @_noLocks @_noAllocation @inline(__always)
    func voice(_ key: VoiceKey) -> UnsafeMutablePointer<Voice> {
        (key.isTail ? tails : voices) + key.player
    }

    /// Voice `v` stops sounding: it ended on device frame `endedAt` (what a late command due
    /// before it compares with), and player `p` reports `kind` on frame `reported` (a tail,
    /// `p` = -1, reports nothing). Real-time safe.
    @_noLocks @_noAllocation @inline(__always)
    func endVoice(_ v: UnsafeMutablePointer<Voice>, player p: Int, endedAt: Frame, report kind: Event.Kind, at reported: Frame) {
        v.pointee.isActive = false
        v.pointee.endedAt = endedAt
        if p >= 0 { emit(Event(kind: kind, player: Int32(p), frame: reported, tag: v.pointee.tag)) }
    }

    /// Voice `v`, in its envelope's delay, begins the attack of the instrument of `tables` whose
    /// trigger started it (its tag); a voice not in a delay is left as it is.
    @_noLocks @_noAllocation
    func attackAfterDelay(_ v: UnsafeMutablePointer<Voice>, _ tables: InstrumentTables) {
        guard v.pointee.isActive, v.pointee.isInEnvelopeDelay else { return }
        let i = Int(v.pointee.tag)
        if i < tables.instrumentCount, tables.instruments[i].hasEnvelope {
            if tables.instruments[i].hasVelocityEnvelope {
                // The attack its velocity gave it.
                var e = tables.instruments[i]
                if v >= voices, v < voices + configuration.maxPlayers { e.attackFrames = voiceAttacks[v - voices] }
                if v >= tails, v < tails + configuration.maxPlayers { e.attackFrames = tailAttacks[v - tails] }
                v.pointee.beginAttack(e)
            } else {
                v.pointee.beginAttack(tables.instruments[i])
            }
        } else {
            v.pointee.envStage = .none
            v.pointee.rampFramesLeft = 0
            v.pointee.level = v.pointee.envBase
        }
    }

    /// Voice `v`'s ramp has reached its end on frame `end`: its level is the target; a stop's
    /// fade (or an envelope's last segment) ends the voice, reported as `.stopped`; an envelope
    /// goes on with its next segment. Returns whether the voice still sounds. Real-time safe.
    @_noLocks @_noAllocation @inline(__always)
    func finishRamp(_ v: UnsafeMutablePointer<Voice>, player p: Int, at end: Frame) -> Bool {
        v.pointee.rampFramesLeft = 0
        v.pointee.level = v.pointee.levelTarget
        v.pointee.rampEndedAt = end
        if v.pointee.stopsAfterRamp {
            v.pointee.stopsAfterRamp = false
            v.pointee.envStage = .none
            endVoice(v, player: p, endedAt: end, report: .stopped, at: end)
            return false
        }
        if v.pointee.isInEnvelopeDelay {
            attackAfterDelay(v, instrumentTables.pointee)
            return true
        }
        if v.pointee.envStage.isOn { v.pointee.nextEnvelopeSegment() }
        return true
    }
}
