import JACKBackend
import ProgramHost
import SamplerCore
import Scheduling
import SoundFiles
import Sync

/// A metronome as a live program for `LivePlayback`: its clicks from the start frame on (or from
/// the JACK transport's position), keys when standard input is a terminal, and a status line
/// with bar.beat and tempo. Offline, `render` plays the same clicks through the same feeder, so a
/// rendered file is frame-identical to what live playback sends.
///
/// Control thread only. Copies share one controller.
package struct MetronomeProgram: LiveProgram {
    package let settings: MetronomeSettings
    let controller: MetronomeController

    /// - Parameters:
    ///   - transport: how to relate to the JACK transport.
    ///   - serverName, clientName: where the transport client (a second, port-less client named
    ///     `<clientName>-transport`) opens, as for the main client.
    ///   - interactive: read keys from standard input when it is a terminal.
    ///   - oscPort: listen for klick's OSC messages on this UDP port ("0": any free one; the port
    ///     is printed); the clicks then wait for `/klick/metro/start`, as klick's do.
    ///   - link: join an Ableton Link session (a Link build only: `LinkSession.isAvailable`): the
    ///     session's tempo and bar phase (a bar of the meter is the quantum), start and stop
    ///     shared; tempo keys and OSC tempo changes go to the session. Needs a constant tempo.
    package init(settings: MetronomeSettings, transport: MetronomeTransportMode = .off, serverName: String? = nil,
                clientName: String = "sampler", interactive: Bool = false, oscPort: String? = nil, oscHost: String = "127.0.0.1", oscRoot: String? = nil,
                link: Bool = false) {
        self.settings = settings
        controller = MetronomeController(settings: settings, transportMode: transport, serverName: serverName,
                                         clientName: clientName, interactive: interactive)
        controller.oscPort = oscPort
        controller.oscHost = oscHost
        controller.oscRoot = oscRoot
        controller.linkEnabled = link
    }

    package mutating func attach(client: JACKClient) { controller.client = client }

    package var playerCount: Int { settings.playerCount }
    package var midiOutput: Bool { settings.midiClock }
    package var title: String {
        "metronome (\(settings.title))" + (controller.transportMode == .off ? "" : ", transport \(controller.transportMode.rawValue)")
            + (controller.linkEnabled ? ", Ableton Link" : "")
    }

    package mutating func prepare(engine: Engine, sampleRate: Double) throws {
        try controller.prepare(engine: engine, sampleRate: sampleRate)
    }

    package func makeFeeder(origin: Frame) -> CommandFeeder {
        controller.start(origin: origin)
        return controller.makeFeeder()
    }

    package func status(at frame: Frame) -> String { controller.status(at: frame) }

    package mutating func tick(engine: Engine, feeder: inout CommandFeeder, frame: Frame) -> Bool {
        controller.tick(engine: engine, feeder: &feeder, frame: frame)
    }

    /// With MIDI clock: a Stop when the clicks are stopped before the music's end (quit, signal,
    /// `--duration`).
    package mutating func finishing(engine: Engine) -> Frame? { controller.finishing(engine: engine) }

    /// Restores the terminal and closes the transport client (also done when the last copy
    /// goes away).
    package func finish() { controller.finish() }

    /// What the keys and OSC changed since the start that a session keeps (tempo, meter, map).
    package var edits: MetronomeEdits { controller.edits }

    // MARK: - Offline

    /// The end of the clicks for rendering: the map's end or `--bars`, from a first beat on
    /// frame 0; nil when endless.
    package func endFrame(sampleRate: Double) -> Frame? {
        let timing = TempoMapTiming(map: settings.map, sampleRate: sampleRate)
        let countIn = timing.sectionFirstBars[timing.map.countInSections]
        return Metronome(timing: timing, origin: 0, barLimit: settings.bars.map { $0 + countIn }).endFrame
    }

    /// An engine with the clicks loaded at `sampleRate` and a feeder for them from frame 0.
    package func offline(sampleRate: Double, engine: Engine? = nil) throws -> (engine: Engine, feeder: CommandFeeder) {
        let engine = engine ?? Engine(configuration: .init(maxPlayers: settings.playerCount))
        let controller = MetronomeController(settings: settings, transportMode: .off, serverName: nil, clientName: "",
                                             interactive: false)
        try controller.prepare(engine: engine, sampleRate: sampleRate)
        controller.start(origin: 0)
        return (engine, controller.makeFeeder())
    }

    /// Renders `frameCount` frames of clicks (first beat on frame 0) to a WAV file.
    package func render(to path: String, frameCount: Int, sampleRate: Double, format: WAVSampleFormat = .float32,
                       blockSize: Int = 256) throws {
        let (engine, feeder) = try offline(sampleRate: sampleRate)
        var optional: CommandFeeder? = feeder
        let renderer = OfflineRenderer(engine: engine, sampleRate: sampleRate, blockSize: blockSize)
        do {
            try renderer.renderToFile(path: path, frameCount: frameCount, feeder: &optional, format: format)
        } catch {
            throw SamplerError("\(error)")
        }
    }
}

extension MetronomeProgram {
    /// Whether this build has Ableton Link (`link: true`); it is GPL and opt-in (`make build LINK=1`).
    package static var isLinkAvailable: Bool { LinkSession.isAvailable }
}
