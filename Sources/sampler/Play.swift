import ArgumentParser
import Foundation
import DrumPlayer
import NSM
import ProgramHost
import SamplerCore

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a patch live on a JACK server (the default command).",
        discussion: """
        Stops after --duration seconds, on Ctrl-C, or when the JACK server goes away. Note-ons on the \
        midi_in port play the patch's instruments (their "midiNote", or the General MIDI drum note their id names: "kick" 36, "snare" 38, ...), exactly one period after the frame they arrive on; a streamed instrument plays only from the patch's patterns.
        """
    )

    @OptionGroup var patchOptions: PatchOptions

    @Option(help: "Stop after this many seconds (default: play until Ctrl-C).")
    var duration: Double?

    @OptionGroup var jack: JACKOptions

    @Option(help: "Also write what is played to this WAV file (32-bit float).")
    var record: String?

    @Option(help: "Listen for OSC on this UDP port (0: any free port, printed): /sampler/trigger ID [VELOCITY], /sampler/stop, /sampler/query, /sampler/ping; a message in a bundle acts on the device frame of its timetag. A patch without patterns then plays only what is triggered.")
    var oscPort: String?

    @OptionGroup var oscAccess: OSCAccessOptions

    @Flag(help: "Join an Ableton Link session (a Link build: make build LINK=1): the song or pattern plays at the session's tempo from one of its bars (the first pattern's bar is the quantum), starts and stops with it and follows its tempo and phase. See README (Ableton Link) to keep Link on one machine.")
    var link = false

    /// A patch `/sampler/load` put in place, kept by an NSM session: loaded the same way (the
    /// launch patch's outputs, OSC mode) when the program starts.
    @Option(help: .hidden)
    var oscLoad: String?

    @Flag(help: "Wait for a MIDI Start (0xFA) on midi_in, then play the song or pattern from the bar line one bar after it (the Start's frame plus one period, as a note's): a metronome's or sequencer's --midi-clock on another JACK client or netjack2 host starts it on the frame.")
    var followMIDIStart = false

    @Flag(help: "No status line, and no loading progress.")
    var quiet = false

    func validate() throws {
        // A year at most: far beyond any session, and far from overflowing 64-bit frame counts.
        if let duration, !(duration > 0 && duration <= 366 * 86400) {
            throw ValidationError("--duration must be a positive number of seconds, at most 31622400 (a year), got \(duration)")
        }
        if let oscPort, !(oscPort.allSatisfy(\.isNumber) && (Int(oscPort).map { (0...65535).contains($0) } ?? false)) {
            throw ValidationError("--osc-port must be a UDP port number (0 to 65535), got \"\(oscPort)\"")
        }
        try oscAccess.validate(port: oscPort)
        if link {
            if !PatchProgram.isLinkAvailable {
                throw ValidationError("--link: this build has no Ableton Link (it is GPL-licensed and opt-in: build with `make build LINK=1`; README: Ableton Link)")
            }
            if patchOptions.tempo != nil { throw ValidationError("--link plays the session's tempo: leave out --tempo") }
        }
    }

    func run() throws {
        LivePlayback.blockTerminationSignals()
        // In an NSM session (NSM_URL set): the session's state replaces the options it keeps.
        guard let url = NSMSession.url else { return try runCommand(session: nil) }
        try NSMSession.run(self, url: url) { try $0.runCommand(session: $1) }
    }

    private func runCommand(session: NSMSession?) throws {
        let program = try patchOptions.makeProgram(oscPort: oscPort, oscHost: oscAccess.oscHost, oscRoot: oscAccess.oscRoot, link: link)
        if !quiet { (program as? PatchProgram)?.showLoadProgress() }
        if followMIDIStart {
            guard let patchProgram = program as? PatchProgram else {
                throw SamplerError("--follow-midi-start plays a patch's song or pattern")
            }
            try patchProgram.followMIDIStart()
        }
        if let oscLoad {
            guard let patchProgram = program as? PatchProgram, oscPort != nil else {
                throw SamplerError("the session's state holds a patch loaded over OSC (\(oscLoad)): start the player with --osc-port and a patch without patterns, as when it was loaded")
            }
            patchProgram.loadOverOSCAtStart(oscLoad)
        }
        var options = LivePlayback.Options()
        jack.apply(to: &options)
        if let session {
            options.clientName = session.open.clientID
            options.exactClientName = true
            let kept = sessionOptions
            options.onTick = {
                session.tick(current: { self.liveSessionOptions(kept, loadedOverOSC: (program as? PatchProgram)?.patchLoadedOverOSC) },
                             check: { state in var copy = self; try copy.apply(sessionOptions: state, file: session.statePath) })
            }
        }
        options.duration = duration
        options.recordPath = record
        options.showStatus = !quiet && isatty(STDOUT_FILENO) != 0
        let playback = LivePlayback(program: program, options: options)
        let summary: LivePlayback.Summary
        do {
            summary = try playback.run { print($0) }
        } catch {
            throw SamplerError("\(error)")
        }
        if summary.serverShutDown {
            throw SamplerError("the JACK server shut down; stopped after \(String(format: "%.2f", summary.renderedSeconds)) s")
        }
        print(String(format: "played %.2f s: %d starts, %d MIDI notes, %d late, %d xruns, ", summary.renderedSeconds,
                     summary.startsSent, summary.midiNotes, summary.lateStarts, summary.xruns) + summary.lostDescription + summary.reconnectionDescription + summary.tailDescription)
        if summary.programChanges > 0 {
            FileHandle.standardError.write(Data("sampler: warning: \(summary.programChanges) MIDI program change\(summary.programChanges == 1 ? "" : "s") ignored (a kit is one program)\n".utf8))
        }
    }
}

extension Play: SessionKeeping {
    static let sessionCommand = "play"

    /// What plays; how the program is reached (JACK, OSC, Link), for how long and where it
    /// records come from the command line that starts it.
    var sessionOptions: [String: SessionValue] {
        ["patch": .file(patchOptions.patch), "tempo": .decimal(patchOptions.tempo), "pattern": .text(patchOptions.pattern),
         "song": .bool(patchOptions.song), "loop": .flag(patchOptions.loop), "midi": .file(patchOptions.midi),
         "osc-load": .file(oscLoad)]
    }

    /// What a save keeps now: the options `kept` at the start, with the patch `/sampler/load`
    /// put in place (as "osc-load": the reopened player starts from its launch patch, in OSC
    /// mode with its outputs, and loads it as the message did).
    func liveSessionOptions(_ kept: [String: SessionValue], loadedOverOSC: String?) -> [String: SessionValue] {
        var options = kept
        if let loadedOverOSC { options["osc-load"] = .file(loadedOverOSC) }
        return options
    }

    mutating func apply(sessionOptions options: [String: SessionValue], file: String) throws {
        let read = SessionOptionReader(file: file)
        for (key, value) in options.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "patch": patchOptions.patch = try read.requiredText(key, value)
            case "tempo": patchOptions.tempo = try read.number(key, value)
            case "pattern": patchOptions.pattern = try read.text(key, value)
            case "song": patchOptions.song = try read.flag(key, value) ?? false
            case "loop": patchOptions.loop = try read.flag(key, value)
            case "midi": patchOptions.midi = try read.text(key, value)
            case "osc-load": oscLoad = try read.text(key, value)
            default: throw read.unknown(key, command: Self.sessionCommand, keeps: Array(sessionOptions.keys))
            }
        }
        do {
            try patchOptions.validate()
            try validate()
        } catch { throw read.invalid(error) }
    }
}
