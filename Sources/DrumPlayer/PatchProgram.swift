import Foundation
import JACKBackend
import Patches
import ProgramHost
import SamplerCore
import Scheduling
import SoundFiles
import Sync

/// What a patch plays: a song, one pattern, or whatever the patch suggests.
package enum PatchSelection: Equatable, Sendable {
    /// The song if the patch has one, else the first pattern, else every instrument once.
    case automatic
    case pattern(String)
    case song
}

/// A patch (of either file version) as a live or offline program: its samples loaded and tuned
/// at the engine's rate (long ones streamed, see `LoadedPatch`), its instruments set on the
/// engine, and its song or pattern fed as `Command.trigger`s, which the render thread resolves
/// to layers and voices (so a pattern step and a MIDI note take the same path). A patch without
/// patterns plays every instrument once from the start. Control thread only.
package struct PatchProgram: LiveProgram {
    package let kit: Patch
    /// The sections played and whether they loop; empty: every instrument once.
    package let sections: [SongSection]
    package let loops: Bool
    /// A description of what plays, e.g. "song" or "pattern fill".
    package let selectionName: String
    package let streaming: PatchStreamingOptions
    /// A Standard MIDI File played instead of the patch's song or patterns (`--midi`).
    package let midi: MIDIPlayback?
    private let session = Session()

    /// What `prepare` and `makeFeeder` set, read by the status line and the commands.
    private final class Session {
        var sampleRate = 48000.0
        var origin: Frame?
        var loaded: LoadedPatch?
        var oscPort: String?
        var oscHost = "127.0.0.1"
        var oscRoot: String?
        var osc: PatchOSC?
        var client: JACKClient?
        var linkEnabled = false
        var pendingOSCLoad: String?
        var link: PatchLinkTrack?
        /// Whether the song or pattern waits for a MIDI Start on midi_in (`followMIDIStart`), and
        /// the Start it follows now.
        var followsMIDIStart = false
        /// Whether loading the patch shows its progress (`showLoadProgress`).
        var showsLoadProgress = false
        var startFollowed: Frame?
        /// The server's period the tail rings were last found too short for (warned once each).
        var ringWarnedPeriod = 0
    }

    /// - Parameters:
    ///   - loop: nil: a song loops as the patch says, a pattern loops.
    ///   - tempo: replaces the patch's tempo and every song entry's.
    ///   - streaming: which samples stream from disk (an instrument's only sample, when longer
    ///     than the threshold or marked `"stream": true`).
    ///   - link: join an Ableton Link session (a Link build only: `LinkSession.isAvailable`): the
    ///     song or pattern plays at the session's tempo from one of its bars (the first
    ///     pattern's bar is the quantum), starts and stops with it, and follows its tempo and
    ///     phase. Needs a song or a pattern.
    ///   - oscPort: listen for the sampler's OSC messages (`/sampler/trigger`, `/sampler/stop`, …,
    ///     see `PatchOSC`) on this UDP port, live ("0": any free one; the port is printed). A
    ///     patch without patterns then waits for triggers instead of playing every instrument.
    ///   - oscHost: the address the OSC port listens on: 127.0.0.1 (this machine only) unless
    ///     the user opens it to a network on purpose ("0.0.0.0": every IPv4 interface).
    ///   - oscRoot: `/sampler/load` reads only patch files under this directory (nil: any the
    ///     process may read).
    package init(kit: Patch, selection: PatchSelection = .automatic, loop: Bool? = nil, tempo: Double? = nil,
                streaming: PatchStreamingOptions = .init(), oscPort: String? = nil, oscHost: String = "127.0.0.1",
                oscRoot: String? = nil, link: Bool = false, midi: MIDIPlayback? = nil) throws {
        self.kit = kit
        self.streaming = streaming
        self.midi = midi
        if midi != nil {
            guard selection == .automatic else { throw SamplerError("--midi plays the MIDI file: it cannot be used with --pattern or --song") }
            guard !link else { throw SamplerError("--midi cannot be used with --link") }
        }
        func tempoOf(_ entry: Song.Entry?) -> Double { tempo ?? entry?.tempo ?? kit.tempo }
        var selection = selection
        if let midi {
            sections = []
            loops = midi.loops
            selectionName = midi.file.file + (midi.loops ? ", looped" : "")
        } else {
        if selection == .automatic {
            if kit.song != nil {
                selection = .song
            } else if let first = kit.patterns.first {
                selection = .pattern(first.name)
            }
        }
        switch selection {
        case .song:
            guard let song = kit.song else { throw SamplerError("\(kit.file): --song: the patch has no \"song\"") }
            sections = song.entries.map { SongSection(pattern: $0.pattern, repeats: $0.repeats, tempo: tempoOf($0)) }
            loops = loop ?? song.loop
            selectionName = "song"
        case .pattern(let name):
            guard let index = kit.patternIndex(named: name) else {
                let names = kit.patterns.isEmpty ? "it has none" : "expected one of: \(kit.patterns.map(\.name).joined(separator: ", "))"
                throw SamplerError("\(kit.file): --pattern: no pattern named \"\(name)\" (\(names))")
            }
            sections = [SongSection(pattern: index, repeats: 1, tempo: tempoOf(nil))]
            loops = loop ?? true
            selectionName = "pattern \(name)"
        case .automatic:
            // No song, no pattern: every instrument once.
            sections = []
            loops = false
            selectionName = "every instrument once"
        } }
        session.oscPort = oscPort
        session.oscHost = oscHost
        session.oscRoot = oscRoot
        if link && sections.isEmpty {
            throw SamplerError("\(kit.file): --link plays a song or a pattern in time with the session, and the patch has neither")
        }
        session.linkEnabled = link
    }

    /// The patch's voices; with OSC, at least 128 (a patch loaded over OSC takes players of its own).
    package var playerCount: Int {
        let voices = kit.instruments.reduce(0) { $0 + $1.voices }
        return session.oscPort != nil && sections.isEmpty ? max(voices, 128) : voices
    }
    /// A sound per sample (two where a loop plays until its release) and two per instrument (a
    /// streamed one registers two rings), and one per voice that plays streamed tails
    /// (`PatchStreamingOptions.tailVoices`); with OSC, room for a second kit as large beside it
    /// while a load swaps them, and 4,096 more.
    package var soundCount: Int {
        let samples = kit.instruments.reduce(0) { total, instrument in
            total + instrument.layers.reduce(0) { $0 + $1.samples.count } * (instrument.loopsUntilRelease ? 2 : 1) + 2
        } + (streaming.tailsAboveBytes == nil ? 0 : max(1, streaming.tailVoices))
        return session.oscPort != nil ? 2 * samples + 4096 : samples
    }
    /// The patch's named outputs (`"output"`): a JACK stereo pair each, beside the main mix.
    package var outputNames: [String] { kit.outputNames }
    package var title: String {
        "\(kit.file) (\(session.oscPort != nil && sections.isEmpty && midi == nil ? "what OSC triggers" : selectionName))" + (session.linkEnabled ? ", Ableton Link" : "")
    }

    package mutating func prepare(engine: Engine, sampleRate: Double) throws {
        session.sampleRate = sampleRate
        // Kits loaded over OSC in its place may stream their tails as the program's may.
        let loads = session.oscPort != nil && sections.isEmpty && midi == nil
        let loaded = try LoadedPatch(kit, engine: engine, sampleRate: sampleRate, streaming: streaming,
                                     showsProgress: session.showsLoadProgress, readyForLoads: loads)
        engine.setInstruments(loaded.definitions, controllers: kit.controllers)
        for command in loaded.routingCommands { engine.send(command) }
        session.loaded = loaded
        if session.linkEnabled {
            let link = try LinkSession(tempo: sections[0].tempo)
            let track = PatchLinkTrack(link: link, patterns: kit.patterns.map(Self.sequencePattern), sections: sections, loops: loops,
                                       instrumentCount: kit.instruments.count)
            track.sampleRate = sampleRate
            track.streamed = Set(kit.instruments.indices.filter { loaded.streams(instrument: $0) })
            session.link = track
            print("Link: enabled, \(Int(track.quantum)) beats a bar; the patterns play while the session does")
            fflush(nil)
        }
        if let port = session.oscPort {
            let server: OSCServer
            do { server = try OSCServer(host: session.oscHost, port: port, hostNow: { JACKClient.hostClockNow }) } catch {
                throw SamplerError("--osc-port: \(error)")
            }
            session.osc = PatchOSC(server: server, canLoad: loads, root: session.oscRoot,
                                   outputs: kit.outputNames) { print($0); fflush(nil) }
            session.osc?.streaming = streaming
            print("OSC: /sampler/trigger, gain, pan, load, stop, query, ping on UDP port \(server.port) of \(server.host)")
            fflush(nil)
            if let path = session.pendingOSCLoad, let osc = session.osc {
                let count = try osc.loadAtStart(path, replacing: loaded, engine: engine, sampleRate: sampleRate)
                print("OSC: \(path) loaded as /sampler/load did before: \(count) instruments")
                fflush(nil)
            }
        }
    }

    /// Waits for a MIDI Start (0xFA) on midi_in and plays the song or pattern from the first bar
    /// line one bar after it: bar 1 starts one bar (of the first pattern, at its tempo) after the
    /// frame the Start takes effect on (its arrival plus one period, as a note's). It follows the
    /// first Start; later ones change nothing. Live only; needs a song or a pattern, not `--link`
    /// or `--midi`.
    package func followMIDIStart() throws {
        guard !sections.isEmpty else { throw SamplerError("\(kit.file): --follow-midi-start plays a song or a pattern, and the patch has neither") }
        guard !session.linkEnabled, midi == nil else { throw SamplerError("--follow-midi-start cannot be used with --link or --midi") }
        session.followsMIDIStart = true
    }

    /// Shows the patch's loading progress on standard error when it is a terminal and the load
    /// takes over a second (the command line, not `--quiet`). Control thread, before `prepare`.
    package func showLoadProgress() { session.showsLoadProgress = true }

    /// Frames from a MIDI Start's frame to the first bar line played (`followMIDIStart`).
    package var barAfterMIDIStart: Frame {
        guard let first = sections.first else { return 0 }
        let pattern = kit.patterns[first.pattern]
        return Frame((Double(pattern.beatsPerBar) * 60 / first.tempo * session.sampleRate).rounded())
    }

    package mutating func attach(client: JACKClient) {
        session.client = client
        // Live: tails are read on a thread of their own, as voices ask for them.
        session.loaded?.startTailThread()
        session.link?.client = client
    }

    package mutating func tick(engine: Engine, feeder: inout CommandFeeder, frame: Frame) -> Bool {
        if session.followsMIDIStart, session.startFollowed == nil, let start = engine.lastMIDIStartFrame {
            session.startFollowed = start
            feeder = feederFrom(origin: start + barAfterMIDIStart)
        }
        if let link = session.link {
            // What a re-anchor left to send again before the horizon already reached goes out
            // now, not on the next tick.
            let horizon = link.producedBefore
            link.follow(engine: engine)
            if link.producedBefore < horizon { feeder.feed(engine, before: horizon) }
        }
        if let osc = session.osc, let loaded = session.loaded, let client = session.client {
            osc.tick(kit: kit, loaded: loaded, engine: engine, sampleRate: session.sampleRate, hostNow: client.hostTimeNow,
                     frameAt: { client.frame(atHostTime: $0) })
        }
        // A period the server raised after the load: said once for each.
        let period = engine.expectedPeriodFrames
        if period != session.ringWarnedPeriod, let loaded = session.loaded, let warning = loaded.ringWarning(engine: engine, file: kit.file) {
            session.ringWarnedPeriod = period
            streaming.report(warning)
        }
        return true
    }

    /// The patch file `/sampler/load` put in place of the program's, if any.
    package var patchLoadedOverOSC: String? { session.osc?.loadedPath }

    /// Loads the patch at `path` once OSC is set up in `prepare`, as `/sampler/load` would have
    /// (a session restoring what a load put in place). Control thread, before `prepare`.
    package func loadOverOSCAtStart(_ path: String) { session.pendingOSCLoad = path }

    /// The instruments as `prepare` loaded them (nil before).
    package var loaded: LoadedPatch? { session.loaded }

    /// The sequencer of the selected song or pattern, its first step on `origin`.
    package func sequencer(origin: Frame, sampleRate: Double) -> SongSequencer? {
        guard !sections.isEmpty else { return nil }
        return SongSequencer(patterns: kit.patterns.map(Self.sequencePattern), sections: sections, loops: loops,
                      sampleRate: sampleRate, origin: origin)
    }

    /// The MIDI file's notes from `origin` on (nil without `--midi`). A note plays the
    /// instruments with that MIDI note.
    package func midiSource(origin: Frame) -> MIDIFileSource? {
        guard let midi else { return nil }
        let notes = kit.resolvedMIDINotes
        var byNote: [Int: [Int]] = [:]
        for (i, note) in notes.enumerated() { if let note { byNote[note, default: []].append(i) } }
        var onNoteOn: [Int: [Int]] = [:], releasing: [Int: [Int]] = [:], onNoteOff: [Int: [Int]] = [:]
        for (note, instruments) in byNote {
            onNoteOn[note] = instruments.filter { !kit.instruments[$0].triggersOnNoteOff }
            onNoteOff[note] = instruments.filter { kit.instruments[$0].triggersOnNoteOff }
            releasing[note] = instruments.filter {
                !kit.instruments[$0].triggersOnNoteOff && (kit.instruments[$0].envelope?.noteOff ?? false)
                    && !(session.loaded?.streams(instrument: $0) ?? false)
            }
        }
        return MIDIFileSource(file: midi.file, instruments: { onNoteOn[$0] ?? [] }, releasing: { releasing[$0] ?? [] },
                              noteOffTriggers: { onNoteOff[$0] ?? [] }, sampleRate: session.sampleRate, origin: origin,
                              speed: midi.tempo.map { $0 / midi.file.initialTempo } ?? 1, loops: midi.loops,
                              stateNotes: kit.stateNotes, controllerDefaults: kit.controllers.values)
    }

    /// The commands from `origin` on: the loaded instruments' (after `prepare`; before it,
    /// plain triggers, for a program that is only asked for its status).
    package func makeFeeder(origin: Frame) -> CommandFeeder {
        // Following MIDI Start: nothing plays until the first Start (`tick`).
        var feeder: CommandFeeder
        if session.followsMIDIStart {
            feeder = CommandFeeder(source: OneShot(players: 0, frame: origin), makeCommand: session.loaded?.command ?? Self.command)
            feeder.beforeEachFeed = session.loaded?.tailService
        } else {
            feeder = feederFrom(origin: origin)
        }
        return feeder
    }

    private func feederFrom(origin: Frame) -> CommandFeeder {
        session.origin = origin
        if let link = session.link {
            link.requestStart(at: origin)
            let source = PatchLinkSource(track: link)
            guard let loaded = session.loaded else { return CommandFeeder(source: source, makeCommand: Self.command) }
            var feeder = CommandFeeder(source: loaded.feederSource(source), makeCommand: loaded.command)
            feeder.beforeEachFeed = loaded.tailService
            return feeder
        }
        let source: any TriggerSource
        if let midi = midiSource(origin: origin) {
            source = midi
        } else {
            source = sequencer(origin: origin, sampleRate: session.sampleRate)
                ?? OneShot(players: session.oscPort == nil ? kit.instruments.count : 0, frame: origin)
        }
        guard let loaded = session.loaded else { return CommandFeeder(source: source, makeCommand: Self.command) }
        var feeder = CommandFeeder(source: loaded.feederSource(source), makeCommand: loaded.command)
        feeder.beforeEachFeed = loaded.tailService
        return feeder
    }

    /// "bar 2.3  fill".
    package func status(at frame: Frame) -> String {
        if let link = session.link {
            let peers = "Link \(link.link.peerCount) peer\(link.link.peerCount == 1 ? "" : "s")"
            guard let p = link.position(at: frame) else { return peers + (link.isPlaying ? "" : "  waiting for the session to play") }
            return "bar \(p.bar).\(p.beat)  \(p.pattern)  \(peers)"
        }
        if session.followsMIDIStart, session.startFollowed == nil { return "waiting for a MIDI Start on midi_in" }
        guard let origin = session.origin,
              let p = sequencer(origin: origin, sampleRate: session.sampleRate)?.position(at: frame) else { return "" }
        return "bar \(p.bar).\(p.beat)  \(p.pattern)"
    }

    /// The trigger of instrument `trigger.player` at its velocity (0…1 → 1…127).
    package static func command(for trigger: Trigger) -> Command {
        if trigger.channelMessage >= Int64(Controller.count) {
            return .channelMessage(trigger.channelMessage, channel: trigger.channel, value: trigger.velocity, note: trigger.note, at: trigger.frame)
        }
        if trigger.channelMessage >= 0 {
            return .controller(channel: trigger.channel, number: Int(trigger.channelMessage), value: trigger.velocity, at: trigger.frame)
        }
        if trigger.isRelease {
            var c = Command.release(instrument: trigger.player, at: trigger.frame)
            c.channel = Int32(min(16, max(1, trigger.channel)) - 1)
            return c
        }
        return .trigger(instrument: trigger.player, velocity: max(1, min(127, Int((trigger.velocity * 127).rounded()))),
                        channel: trigger.channel, at: trigger.frame)
    }

    static func sequencePattern(_ p: DrumPattern) -> SequencePattern {
        SequencePattern(name: p.name, beatsPerBar: p.beatsPerBar, stepsPerBeat: p.stepsPerBeat, stepCount: p.stepCount,
                        tracks: p.tracks.map { SequenceTrack(instrument: $0.instrument, velocities: $0.velocities,
                                                             probabilities: $0.probabilities) },
                        swing: p.swing, seed: p.seed, humanize: p.humanize.map { ($0.seed, $0.frames, $0.velocity) })
    }

    /// `sound` pitched by `semitones`: resampled from rate r to r / 2^(semitones/12) and then
    /// played at r, so that the callback never resamples.
    static func tuned(_ sound: Sound, semitones: Double) throws -> Sound {
        guard semitones != 0 else { return sound }
        let rate = sound.sampleRate
        let channels = (0..<sound.channelCount).map { sound.samples(channel: $0) }
        let shifted = try Resampler.resample(channels, from: rate, to: rate / Double.pow(2, semitones / 12))
        return try Sound(channels: shifted, sampleRate: rate, memory: HugePageSampleMemory.shared)
    }
}

/// A Standard MIDI File to play (`--midi`): at its own tempo map or scaled so that its first
/// tempo is `tempo`, once or looped.
package struct MIDIPlayback: Sendable {
    /// The shortest file that loops, in seconds (at its tempo): a pass is at least longer than
    /// any JACK period, so that a period never walks many passes.
    package static let shortestLoop = 0.1
    package var file: MIDIFile
    package var tempo: Double?
    package var loops: Bool

    package init(file: MIDIFile, tempo: Double? = nil, loops: Bool = false) {
        self.file = file
        self.tempo = tempo
        self.loops = loops
    }

    /// The notes of `file` no instrument of `kit` plays, for a warning.
    package func unplayedNotes(in kit: Patch) -> [Int] {
        // Key switches play nothing, and are not unplayed either.
        let mapped = Set(kit.resolvedMIDINotes.compactMap { $0 }).union(kit.instruments.flatMap { [$0.keySwitch, $0.keyDown, $0.keyUp].compactMap { $0 } })
        return Set(file.events.filter { $0.isNoteOn && !mapped.contains($0.note) }.map(\.note)).sorted()
    }
}

/// Triggers players 0 ..< `players` once, all on one frame (a patch without patterns plays
/// every instrument so).
package struct OneShot: TriggerSource {
    let players: Int
    let frame: Frame
    private var done = false

    package init(players: Int, frame: Frame) {
        self.players = players
        self.frame = frame
    }

    package var endFrame: Frame? { nil }

    package mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        guard !done, frame < horizon else { return }
        done = true
        for p in 0..<players { body(Trigger(frame: frame, player: p)) }
    }
}
