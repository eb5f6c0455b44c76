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
    package init(file: MIDIFile, instruments: (Int) -> [Int], releasing: (Int) -> [Int] = { _ in [] }, sampleRate: Double, origin: Frame,
                 speed: Double = 1, loops: Bool = false) {
        notes = file.events.compactMap { e in
            let targets = e.isNoteOn ? instruments(e.note) : releasing(e.note)
            return targets.isEmpty ? nil : Note(seconds: file.seconds(atTick: e.tick), instruments: targets, velocity: Float(e.velocity) / 127,
                                                isRelease: !e.isNoteOn)
        }
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
