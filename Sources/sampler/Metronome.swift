import ArgumentParser
import Foundation
import MetronomeKit
import NSM
import ProgramHost
import SamplerCore
import Scheduling

struct Metronome: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A sample-exact click track on JACK (klick-compatible), or rendered to a file.",
        discussion: """
        Examples: `sampler metronome 120`, `sampler metronome 132 --meter 7/8 --accents X.x.x..`, \
        `sampler metronome 80-120/10` (speed trainer), `sampler metronome --map song.map --label chorus`, \
        `sampler metronome 113 --render click.wav --duration 60`. Tempos count quarter notes per minute \
        whatever the meter, as klick's do. Keys (when standard input is a terminal): space start/stop, \
        + and - (or arrows) tempo from the next bar, t tap tempo, q quit.
        """
    )

    @Argument(help: "Tempo in quarter notes per minute (1…1000), or START-END/BARS for the speed trainer (default 120).")
    var tempo: String?

    @Option(help: "Time signature N/D.")
    var meter: String?

    @Option(help: "Accents per beat: X accent, x normal, . silent (default: X then x).")
    var accents: String?

    @Option(help: "Notes per beat; the notes between beats click softer (1…16).")
    var subdivide: Int = 1

    @Option(help: "What the tempo counts: quarter (klick's convention) or denominator (the meter's note value).")
    var beatUnit: String = "quarter"

    @Option(help: "Play a klick tempo map file (see README: Metronome).")
    var map: String?

    @Option(help: "Start the tempo map at the section with this label.")
    var label: String?

    @Option(help: "Bars of count-in before the music (0: two beats).")
    var countIn: Int?

    @Option(help: "Stop after this many bars (after the count-in).")
    var bars: Int?

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Option(help: "Multiply every tempo by this factor.")
    var multiply: Double?

    @Option(help: "Built-in sound: click or woodblock.")
    var timbre: String = "click"

    @Option(help: "Sound file for the clicks (any format libsndfile reads); also the accent unless --accent-sound is given.")
    var sound: String?

    @Option(help: "Sound file for accented beats.")
    var accentSound: String?

    @Option(help: "Output level, linear (0…16).")
    var volume: Double = 1

    @Option(help: "Pan position, -1 (left) … 1 (right).")
    var pan: Double = 0

    @Option(help: "JACK transport: off, follow (click while it rolls, from its position) or master (also be the timebase master).")
    var transport: String = "off"

    @OptionGroup var jack: JACKOptions

    @Option(help: "Render the clicks offline to this WAV file instead of playing them (needs --duration or --bars, or a map that ends).")
    var render: String?

    @Option(help: "Sample rate of --render, in Hz.")
    var rate: Int = 48000

    @Option(help: "Sample format of --render: float32, pcm24 or pcm16.")
    var format: String = "float32"

    @Flag(help: "Send MIDI clock on a midi_out port, from the clicks' own timing: 24 per quarter note, song position and Start on the first tick, Stop at the end of the music or when stopped (not with --transport or --render).")
    var midiClock = false

    @Option(help: "With --midi-clock: connect midi_out to these JACK MIDI ports (comma-separated).")
    var midiConnect: String?

    @Option(help: "Listen for klick's OSC messages on this UDP port (0: any free port, printed), as klick -o does: /klick/metro/start and stop, /klick/simple/set_tempo, set_meter and tap, /klick/map/load_file, the queries and register_client; a message in a bundle acts on the device frame of its timetag. The clicks wait for /klick/metro/start.")
    var oscPort: String?

    @OptionGroup var oscAccess: OSCAccessOptions

    @Flag(help: "Join an Ableton Link session (a Link build: make build LINK=1): tempo, bar phase (a bar of --meter is the quantum) and start/stop from it; tempo keys and OSC tempo changes go to the session. Link finds peers on every network interface: see README (Ableton Link) to keep it on one machine.")
    var link = false

    @Flag(help: "No status line and no keys.")
    var quiet = false

    @Flag(help: "Read keys from standard input when it is a pipe, as typed (for scripts: + - tempo, space start/stop, q quit).")
    var keysFromStdin = false

    var request: MetronomeRequest {
        var r = MetronomeRequest()
        r.tempo = tempo
        r.mapFile = map
        r.label = label
        r.meter = meter
        r.accents = accents
        r.beatUnit = beatUnit
        r.subdivide = subdivide
        r.countIn = countIn
        r.bars = bars
        r.multiply = multiply
        r.timbre = timbre
        r.sound = sound
        r.accentSound = accentSound
        r.volume = volume
        r.pan = pan
        return r
    }

    var transportMode: MetronomeTransportMode? { MetronomeTransportMode(rawValue: transport) }

    var sampleFormat: WAVSampleFormat? { WAVSampleFormat(option: format) }

    func validate() throws {
        do { try request.validate() } catch { throw ValidationError(error.description) }
        if let duration, !(duration > 0 && duration <= 24 * 3600) {
            throw ValidationError("--duration must be a number of seconds greater than 0 and at most 86400, got \(duration)")
        }
        guard let mode = transportMode else {
            throw ValidationError("--transport must be off, follow or master, got \"\(transport)\"")
        }
        if midiClock && mode != .off {
            throw ValidationError("--midi-clock starts and stops with the metronome itself: leave out --transport")
        }
        if midiConnect != nil && !midiClock { throw ValidationError("--midi-connect needs --midi-clock") }
        if let oscPort {
            guard let port = Int(oscPort), (0...65535).contains(port), oscPort.allSatisfy(\.isNumber) else {
                throw ValidationError("--osc-port must be a UDP port number (0 to 65535), got \"\(oscPort)\"")
            }
            if mode != .off { throw ValidationError("--osc-port starts and stops the metronome itself: leave out --transport") }
            if render != nil { throw ValidationError("--osc-port listens while playing live: leave it out with --render") }
        }
        try oscAccess.validate(port: oscPort)
        if link {
            if !MetronomeProgram.isLinkAvailable {
                throw ValidationError("--link: this build has no Ableton Link (it is GPL-licensed and opt-in: build with `make build LINK=1`; README: Ableton Link)")
            }
            let clash = [(render != nil, "--render"), (mode != .off, "--transport"), (midiClock, "--midi-clock"), (map != nil, "--map"),
                         (countIn != nil, "--count-in"), (bars != nil, "--bars"), (tempo?.contains("/") == true, "a speed trainer tempo")]
            if let (_, name) = clash.first(where: { $0.0 }) {
                throw ValidationError("--link follows the session's one tempo from its start: leave out \(name)")
            }
        }
        if render != nil {
            if midiClock { throw ValidationError("--midi-clock sends on a JACK port: leave it out with --render") }
            if mode != .off { throw ValidationError("--render plays no transport: leave out --transport") }
            if !(8000...384_000).contains(rate) { throw ValidationError("--rate must be between 8000 and 384000 Hz, got \(rate)") }
            if sampleFormat == nil { throw ValidationError("--format must be float32, pcm24 or pcm16, got \"\(format)\"") }
        }
    }

    func run() throws {
        LivePlayback.blockTerminationSignals()
        // In an NSM session (NSM_URL set), live only: the session's state replaces the options it keeps.
        guard render == nil, let url = NSMSession.url else { return try runCommand(session: nil) }
        try NSMSession.run(self, url: url) { try $0.runCommand(session: $1) }
    }

    private func runCommand(session: NSMSession?) throws {
        var settings = try request.makeSettings()
        settings.midiClock = midiClock
        try MetronomeInstrument.checkSoundFiles(settings)
        if let render {
            try renderOffline(settings, to: render)
        } else {
            try playLive(settings, session: session)
        }
    }

    private func renderOffline(_ settings: MetronomeSettings, to path: String) throws {
        let program = MetronomeProgram(settings: settings)
        let sampleRate = Double(rate)
        let frames: Int
        if let duration {
            frames = Int((duration * sampleRate).rounded())
        } else if let end = program.endFrame(sampleRate: sampleRate) {
            frames = Int(end)
        } else {
            throw SamplerError("--render needs --duration or --bars: the clicks never end")
        }
        if frames > Int(86400 * sampleRate) {
            throw SamplerError(String(format: "--render: the clicks last %.0f s, more than 24 hours (86400 s); give --duration or fewer --bars",
                                      Double(frames) / sampleRate))
        }
        let started = Date()
        try program.render(to: path, frameCount: frames, sampleRate: sampleRate, format: sampleFormat!)
        print(String(format: "rendered %.3f s of clicks (%@) to %@ in %.3f s", Double(frames) / sampleRate, settings.title, path,
                     Date().timeIntervalSince(started)))
    }

    private func playLive(_ settings: MetronomeSettings, session: NSMSession?) throws {
        let interactive = !quiet && (isatty(STDIN_FILENO) != 0 || keysFromStdin)
        let clientName = session?.open.clientID ?? jack.name
        let program = MetronomeProgram(settings: settings, transport: transportMode!, serverName: jack.server, clientName: clientName,
                                       interactive: interactive, oscPort: oscPort, oscHost: oscAccess.oscHost,
                                       oscRoot: oscAccess.oscRoot, link: link)
        defer { program.finish() }
        var options = LivePlayback.Options()
        jack.apply(to: &options)
        options.clientName = clientName
        options.exactClientName = session != nil
        if let session {
            let kept = sessionOptions
            options.onTick = {
                session.tick(current: { self.liveSessionOptions(kept, edits: program.edits) },
                             check: { state in var copy = self; try copy.apply(sessionOptions: state, file: session.statePath) })
            }
        }
        options.duration = duration
        options.showStatus = !quiet && isatty(STDOUT_FILENO) != 0
        options.midiConnections = midiConnect.map { $0.split(separator: ",").map(String.init) } ?? []
        if interactive { print("keys: space start/stop, + - (arrows) tempo, t tap, q quit") }
        let summary: LivePlayback.Summary
        do {
            summary = try LivePlayback(program: program, options: options).run { print($0) }
        } catch {
            throw SamplerError("\(error)")
        }
        if summary.serverShutDown {
            throw SamplerError("the JACK server shut down; stopped after \(String(format: "%.2f", summary.renderedSeconds)) s")
        }
        var line = String(format: "played %.2f s: %d clicks, %d late, %d xruns, ", summary.renderedSeconds, summary.startsSent,
                          summary.lateStarts, summary.xruns) + summary.lostDescription + summary.reconnectionDescription
        if midiClock {
            line += "; \(summary.midiMessages) MIDI clock messages, \(summary.deferredMIDIMessages) deferred"
            if summary.unwrittenMIDIMessages > 0 { line += ", \(summary.unwrittenMIDIMessages) refused by JACK's MIDI buffer" }
        }
        if transportMode == .off && oscPort == nil && !link { line += "; first beat at device frame \(summary.originFrame)" }
        print(line)
    }
}

extension Metronome: SessionKeeping {
    static let sessionCommand = "metronome"

    /// The musical options; how the program is reached (JACK, OSC, keys, Link) and for how long
    /// come from the command line that starts it.
    var sessionOptions: [String: SessionValue] {
        ["tempo": .text(tempo), "map": .file(map), "label": .text(label), "meter": .text(meter), "accents": .text(accents),
         "subdivide": .integer(subdivide), "beat-unit": .string(beatUnit), "count-in": .integer(countIn), "bars": .integer(bars),
         "multiply": .decimal(multiply), "timbre": .string(timbre), "sound": .file(sound), "accent-sound": .file(accentSound),
         "volume": .number(volume), "pan": .number(pan)]
    }

    /// What a save keeps now: the options `kept` at the start, with what the keys and OSC changed.
    func liveSessionOptions(_ kept: [String: SessionValue], edits: MetronomeEdits) -> [String: SessionValue] {
        var options = kept
        if edits.type == "simple" {
            // Switched to the simple metronome over OSC: a tempo and a meter, no map.
            for key in ["map", "label"] { options[key] = .unset }
        }
        if edits.type == "map" {
            // Switched back to the map (the starting one, or one loaded over OSC).
            for key in ["tempo", "meter", "accents"] { options[key] = .unset }
        }
        if let map = edits.mapFile {
            for key in ["tempo", "label", "meter", "accents"] { options[key] = .unset }
            options["map"] = .file(map)
        }
        if let meter = edits.meter {
            options["meter"] = .string("\(meter)")
            // The accents were written for the old meter.
            options["accents"] = .unset
        }
        if let played = edits.tempo {
            // Back to the command line's terms: before --multiply and --beat-unit.
            let denominator = edits.meter?.denominator ?? self.meter.flatMap { try? Meter(parsing: $0) }?.denominator ?? 4
            let factor = (multiply ?? 1) * (beatUnit == "denominator" ? 4 / Double(denominator) : 1)
            options["tempo"] = .string(formatNumber((played / factor * 1e6).rounded() / 1e6))
        }
        return options
    }

    mutating func apply(sessionOptions options: [String: SessionValue], file: String) throws {
        let read = SessionOptionReader(file: file)
        for (key, value) in options.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "tempo": tempo = try read.text(key, value)
            case "map": map = try read.text(key, value)
            case "label": label = try read.text(key, value)
            case "meter": meter = try read.text(key, value)
            case "accents": accents = try read.text(key, value)
            case "subdivide": subdivide = try read.requiredInteger(key, value)
            case "beat-unit": beatUnit = try read.requiredText(key, value)
            case "count-in": countIn = try read.integer(key, value)
            case "bars": bars = try read.integer(key, value)
            case "multiply": multiply = try read.number(key, value)
            case "timbre": timbre = try read.requiredText(key, value)
            case "sound": sound = try read.text(key, value)
            case "accent-sound": accentSound = try read.text(key, value)
            case "volume": volume = try read.requiredNumber(key, value)
            case "pan": pan = try read.requiredNumber(key, value)
            default: throw read.unknown(key, command: Self.sessionCommand, keeps: Array(sessionOptions.keys))
            }
        }
        do { try validate() } catch { throw read.invalid(error) }
    }
}
