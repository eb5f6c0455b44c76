import JACKBackend
import ProgramHost
import SamplerCore
import Scheduling
import Sync

extension TimebaseTable {
    /// Most beats tabulated for `--transport master` (about 35 hours at 960 bpm).
    static let maxBeats = 2_000_000

    /// JACK's bar/beat/tick for a metronome's music, transport frame 0 being its first beat:
    /// every beat of the finite sections, and the endless last section (if any) as a tail. The
    /// tempo given to JACK counts the meter's note value (JACK's convention); during a ramp it is
    /// the beat's mean tempo, as klick gives it.
    convenience init(timing: TempoMapTiming) throws {
        let sections = timing.map.sections
        let total = sections.compactMap(\.beatCount).reduce(0, +)
        guard total <= TimebaseTable.maxBeats else {
            throw SamplerError("--transport master: the map is too long to publish (\(total) beats; at most \(TimebaseTable.maxBeats))")
        }
        var beats: [Beat] = []
        beats.reserveCapacity(total)
        var beatsBefore = 0
        var tail: Tail?
        let rate = timing.sampleRate
        for (s, section) in sections.enumerated() {
            let perBar = section.meter.beats, type = Float(section.meter.denominator)
            guard let count = section.beatCount else {
                let framesPerBeat = timing.offset(inSection: s, beat: 1)
                tail = Tail(start: timing.sectionStarts[s], framesPerBeat: framesPerBeat, firstBar: timing.sectionFirstBars[s] + 1,
                            beatsBefore: beatsBefore, beatsPerBar: perBar, beatType: type, beatsPerMinute: 60 * rate / framesPerBeat)
                break
            }
            var start = timing.position(section: s, beat: 0)
            for i in 0..<count {
                let next = timing.position(section: s, beat: i + 1)
                beats.append(Beat(start: start, bar: Int32(timing.sectionFirstBars[s] + i / perBar + 1), beat: Int32(i % perBar + 1),
                                  beatsPerBar: Float(perBar), beatType: type, beatsPerMinute: 60 * rate / (next - start),
                                  barStartTick: Double(beatsBefore + i - i % perBar) * TimebaseTable.ticksPerBeat))
                start = next
            }
            beatsBefore += count
        }
        let end = timing.length ?? tail?.start ?? 0
        self.init(beats: beats, end: end, tail: tail)
    }
}
