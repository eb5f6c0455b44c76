/// The beat timeline of an Ableton Link session as captured at one moment: a tempo and the beat
/// at a reference host time (Link's timeline is linear between changes), and the session's
/// start/stop state. Beats count quarter notes, as Link's peers (Live, most apps) do; a bar is
/// `quantum` beats. A value: any thread.
package struct LinkTimeline: Sendable, Equatable {
    /// Beats per minute.
    package var tempo: Double
    /// Beats per bar: the phase Link keeps aligned between peers.
    package var quantum: Double
    /// A host time (microseconds on Link's clock, CLOCK_MONOTONIC_RAW) and its beat.
    package var referenceTime: Int64
    package var beatAtReference: Double
    /// Whether the session plays (start/stop sync), and since (or from) which host time.
    package var isPlaying: Bool
    package var playingChangeTime: Int64

    package init(tempo: Double, quantum: Double, referenceTime: Int64, beatAtReference: Double, isPlaying: Bool,
                playingChangeTime: Int64) {
        self.tempo = tempo
        self.quantum = quantum
        self.referenceTime = referenceTime
        self.beatAtReference = beatAtReference
        self.isPlaying = isPlaying
        self.playingChangeTime = playingChangeTime
    }

    /// The beat at host time `microseconds`.
    package func beat(atHostTime microseconds: Int64) -> Double {
        beatAtReference + Double(microseconds - referenceTime) * tempo / 60e6
    }

    /// The host time of `beat`, in microseconds (not rounded).
    package func hostTime(atBeat beat: Double) -> Double {
        Double(referenceTime) + (beat - beatAtReference) * 60e6 / tempo
    }
}
