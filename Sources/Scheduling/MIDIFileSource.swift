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
        var channel = 1
        /// A channel message instead (see `Trigger.channelMessage`), at `velocity`.
        var channelMessage: Int64 = -1
        var note = 0
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
    /// What a pass after the first begins with: the controllers, bend and pressure the file
    /// moves, back to the values they start with.
    let restart: [Note]
    private var restarted = true

    /// - Parameters:
    ///   - speed: tempo factor (2: twice as fast); `--tempo` gives tempo / the file's first tempo.
    ///   - instruments: the instruments a MIDI note plays (none: the note is skipped).
    ///   - releasing: the instruments a note-off of a MIDI note releases (`Trigger.isRelease`).
    ///   - noteOffTriggers: the instruments a note-off plays (release triggers), at the velocity
    ///     of the note's last note-on on its channel.
    ///   - stateNotes: the notes whose note-ons and note-offs also go as key state
    ///     (`Command.ChannelMessage.noteOn`/`noteOff`: key switches, keys conditions read).
    package init(file: MIDIFile, instruments: (Int) -> [Int], releasing: (Int) -> [Int] = { _ in [] },
                 noteOffTriggers: (Int) -> [Int] = { _ in [] }, sampleRate: Double, origin: Frame,
                 speed: Double = 1, loops: Bool = false, stateNotes: Set<Int> = [], controllerDefaults: [Float]? = nil) {
        var lastVelocity = [Int](repeating: 64, count: 16 * 128)
        var notes: [Note] = []
        var moved: Set<Int64> = []
        for e in file.events {
            let seconds = file.seconds(atTick: e.tick)
            let channel = e.channel + 1
            if !e.isNote {
                var message: Int64
                var value: Float
                switch e.kind {
                case 0xB0: message = Int64(e.note); value = Float(e.velocity) / 127
                case 0xE0: message = Command.ChannelMessage.pitchBend; value = Command.bendLevel(e.velocity << 7 | e.note)
                case 0xD0: message = Command.ChannelMessage.channelPressure; value = Float(e.note) / 127
                case 0xA0: message = Command.ChannelMessage.polyPressure; value = Float(e.velocity) / 127
                case 0xC0: message = Command.ChannelMessage.programChange; value = 0
                default: continue
                }
                var n = Note(seconds: seconds, instruments: [], velocity: value, channel: channel, channelMessage: message, note: e.note)
                if e.kind != 0xA0, e.kind != 0xC0 { n.note = 0 }
                notes.append(n)
                // Channel-mode messages (120…127) act rather than set: never sent again.
                if message != Command.ChannelMessage.programChange, !(120...127).contains(message) { moved.insert(Int64(e.channel) << 32 | (e.kind == 0xA0 ? message << 8 | Int64(e.note) : message << 8)) }
                continue
            }
            if e.isNoteOn {
                lastVelocity[e.channel * 128 + e.note] = e.velocity
                if stateNotes.contains(e.note) {
                    notes.append(Note(seconds: seconds, instruments: [], velocity: 0, channel: channel,
                                      channelMessage: Command.ChannelMessage.noteOn, note: e.note))
                }
                let targets = instruments(e.note)
                if !targets.isEmpty {
                    notes.append(Note(seconds: seconds, instruments: targets, velocity: Float(e.velocity) / 127, channel: channel))
                }
            } else {
                if stateNotes.contains(e.note) {
                    notes.append(Note(seconds: seconds, instruments: [], velocity: 0, channel: channel,
                                      channelMessage: Command.ChannelMessage.noteOff, note: e.note))
                }
                let released = releasing(e.note)
                if !released.isEmpty { notes.append(Note(seconds: seconds, instruments: released, velocity: 0, isRelease: true, channel: channel)) }
                let played = noteOffTriggers(e.note)
                if !played.isEmpty {
                    notes.append(Note(seconds: seconds, instruments: played, velocity: Float(lastVelocity[e.channel * 128 + e.note]) / 127,
                                      channel: channel))
                }
            }
        }
        self.notes = notes
        // A looped file starts every pass with the controllers it moves where they started.
        let defaults = controllerDefaults ?? ControllerSetup().values
        restart = moved.sorted().map { key in
            let channel = Int(key >> 32) + 1, message = (key & 0xFFFF_FFFF) >> 8, note = Int(key & 0xFF)
            let value: Float = message == Command.ChannelMessage.pitchBend ? 0.5
                : message < Int64(Controller.count) ? defaults[Int(message)] : 0
            return Note(seconds: 0, instruments: [], velocity: value, channel: channel, channelMessage: message, note: note)
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
                restarted = false
            }
            if !restarted {
                let f = frame(pass: pass, seconds: 0)
                if f >= horizon || f == .max { return }
                for r in restart { body(.channelMessage(r.channelMessage, channel: r.channel, value: r.velocity, note: r.note, at: f)) }
                restarted = true
            }
            let note = notes[next]
            let f = frame(pass: pass, seconds: note.seconds)
            if f >= horizon || f == .max { return }
            if note.channelMessage >= 0 {
                body(.channelMessage(note.channelMessage, channel: note.channel, value: note.velocity, note: note.note, at: f))
            }
            for instrument in note.instruments {
                body(Trigger(frame: f, player: instrument, velocity: note.velocity, isRelease: note.isRelease, channel: note.channel))
            }
            next += 1
        }
    }
}
