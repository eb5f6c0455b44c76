import SamplerCore

/// A Standard MIDI File's note-ons as triggers on the device timeline: note n plays the
/// instruments `instruments(n)` at the note's velocity, on the frame its tick falls on under the
/// file's tempo map (scaled by `speed`), counted from `origin`. Frames come from absolute
/// positions (the pass times the file's length plus the note's time), never from summed
/// intervals. With `loops`, the file starts again at its end (its last end-of-track). Note-offs
/// release the instruments `releasing` names (those with an envelope that follows note-offs).
/// Control thread only.
package struct MIDIFileSource: TriggerSource {
    /// One note-on: seconds from the file's start, the instruments it plays, its velocity (0…1).
    struct Note {
        var seconds: Double
        var instruments: [Int]
        var velocity: Float
        var isRelease = false
    }

    let notes: [Note]
    /// The file's length in seconds at its own tempo.
    let length: Double
    let speed: Double
    let sampleRate: Double
    let origin: Frame
    let loops: Bool
    private var pass: Int64 = 0
    private var next = 0

    /// - Parameters:
    ///   - speed: tempo factor (2: twice as fast); `--tempo` gives tempo / the file's first tempo.
    ///   - instruments: the instruments a MIDI note plays (none: the note is skipped).
    ///   - releasing: the instruments a note-off of a MIDI note releases (`Trigger.isRelease`).
    ///   - noteOffTriggers: the instruments a note-off plays (release triggers), at the velocity
    ///     of the note's last note-on on its channel.
    package init(file: MIDIFile, instruments: (Int) -> [Int], releasing: (Int) -> [Int] = { _ in [] },
                 noteOffTriggers: (Int) -> [Int] = { _ in [] }, sampleRate: Double, origin: Frame,
                 speed: Double = 1, loops: Bool = false) {
        var lastVelocity = [Int](repeating: 64, count: 16 * 128)
        var notes: [Note] = []
        for e in file.events {
            let seconds = file.seconds(atTick: e.tick)
            if e.isNoteOn {
                lastVelocity[e.channel * 128 + e.note] = e.velocity
                let targets = instruments(e.note)
                if !targets.isEmpty { notes.append(Note(seconds: seconds, instruments: targets, velocity: Float(e.velocity) / 127)) }
            } else {
                let released = releasing(e.note)
                if !released.isEmpty { notes.append(Note(seconds: seconds, instruments: released, velocity: 0, isRelease: true)) }
                let played = noteOffTriggers(e.note)
                if !played.isEmpty {
                    notes.append(Note(seconds: seconds, instruments: played, velocity: Float(lastVelocity[e.channel * 128 + e.note]) / 127))
                }
            }
        }
        self.notes = notes
        length = file.duration
        self.speed = speed
        self.sampleRate = sampleRate
        self.origin = origin
        // A file shorter than a frame cannot loop (its passes would pile up on one frame).
        self.loops = loops && !notes.isEmpty && length / speed * sampleRate >= 1
    }

    /// The frame of `seconds` into pass `pass`; beyond 2^62 frames (a file slowed down by an
    /// extreme `--tempo`), never.
    func frame(pass: Int64, seconds: Double) -> Frame {
        let offset = ((Double(pass) * length + seconds) / speed * sampleRate).rounded()
        guard offset < 4.6e18 else { return .max }
        return origin.addingReportingOverflow(Frame(offset)).overflow ? .max : origin + Frame(offset)
    }

    package var endFrame: Frame? { loops ? nil : frame(pass: 0, seconds: length) }

    package mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        while !notes.isEmpty {
            if next == notes.count {
                guard loops else { return }
                pass += 1
                next = 0
            }
            let note = notes[next]
            let f = frame(pass: pass, seconds: note.seconds)
            if f >= horizon || f == .max { return }
            for instrument in note.instruments {
                body(Trigger(frame: f, player: instrument, velocity: note.velocity, isRelease: note.isRelease))
            }
            next += 1
        }
    }
}
