import Foundation
import JACKBackend
import ProgramHost
import SamplerCore
import Scheduling
import Sync

/// How a live metronome relates to JACK's transport.
package enum MetronomeTransportMode: String, CaseIterable, Sendable {
    /// Ignore the transport: click from start-up.
    case off
    /// Click only while the transport rolls, from its position: bar/beat/tick from the timebase
    /// master when there is one, else the metronome's own music (transport frame 0 = first beat).
    case follow
    /// As `follow`, and be the timebase master: other clients get bar/beat/tick from this music.
    case master
}

/// What the keys and OSC changed that a session manager keeps (nil: as the settings say).
package struct MetronomeEdits: Equatable, Sendable {
    /// The tempo last asked for, as played: quarter notes per minute, after `--multiply` and
    /// `--beat-unit`.
    package var tempo: Double?
    /// The meter set over OSC (`/klick/simple/set_meter`).
    package var meter: Meter?
    /// A tempo map loaded over OSC (`/klick/map/load_file`); it replaces the tempo and meter.
    package var mapFile: String?
    /// The metronome type set over OSC (`/klick/metro/set_type`): "simple" (its tempo and meter
    /// are then in `tempo` and `meter`) or "map" (the map in `mapFile`, or the starting one).
    package var type: String?

    package init(tempo: Double? = nil, meter: Meter? = nil, mapFile: String? = nil) {
        self.tempo = tempo
        self.meter = meter
        self.mapFile = mapFile
    }
}

/// The control side of a live metronome: the clicks being played (a `MetronomeTrack`), what was
/// sent to the engine and can still be cancelled, keys, and the JACK transport. Shared by the
/// program's copies and the feeder's source. Control thread only.
package final class MetronomeController {
    let settings: MetronomeSettings
    let transportMode: MetronomeTransportMode
    let serverName: String?
    let clientName: String
    let interactive: Bool

    private(set) var timing: TempoMapTiming?
    private(set) var instrument: MetronomeInstrument?
    var track = MetronomeTrack(nil)
    /// Triggers sent to the engine whose frames may not have been rendered yet.
    var sent: [Trigger] = []
    /// The last click sent whose frame has been rendered (Link: where a re-anchored grid goes on).
    var lastRenderedClick: Frame?
    /// True while clicking (the user did not stop it, the transport rolls).
    var running = false
    /// A short note for the status line ("121 bpm from bar 9").
    var note = ""
    private var keys: TerminalKeys?
    private var taps = TapTempo()
    private(set) var transport: TransportClient?
    /// The transport start prepared for: it should roll from `frame` on device frame `at`.
    private var expectedRoll: (request: TransportSnapshot, at: Frame)?
    private var pendingRequest: TransportSnapshot?
    private var transportState: TransportState = .stopped
    private var bufferSize = 0
    /// What keys and OSC changed, for a session's state.
    var edits = MetronomeEdits()

    /// The UDP port for klick's OSC interface ("0": any free one); nil: no OSC.
    var oscPort: String?
    /// The address the OSC port listens on (127.0.0.1: this machine only).
    var oscHost = "127.0.0.1"
    /// `/klick/map/load_file` reads only files under this directory (nil: any the process may read).
    var oscRoot: String?
    private(set) var osc: KlickOSC?
    /// The live client, for host time → device frame (OSC timetags).
    var client: JACKClient?
    var sampleRate = 48000.0
    /// Join an Ableton Link session (`--link`): tempo, bar phase and start/stop from it.
    var linkEnabled = false
    private(set) var link: LinkSession?
    /// The Link grid the clicks follow now: its tempo and the frame (fractional) of bar `bar`'s
    /// first beat; nil while not clicking.
    var linkAnchor: (tempo: Double, barFrame: Double, bar: Double)?
    /// The tempo last committed to the session, until the session shows it (or a second passes).
    var linkPendingTempo: (bpm: Double, until: Frame)?

    package init(settings: MetronomeSettings, transportMode: MetronomeTransportMode, serverName: String?, clientName: String,
         interactive: Bool) {
        self.settings = settings
        self.transportMode = transportMode
        self.serverName = serverName
        self.clientName = clientName
        self.interactive = interactive
    }

    deinit { finish() }

    /// Restores the terminal and closes the transport client.
    func finish() {
        keys?.restore()
        keys = nil
        transport?.close()
        osc?.server.close()
    }

    package func prepare(engine: Engine, sampleRate: Double) throws {
        let timing = TempoMapTiming(map: settings.map, sampleRate: sampleRate)
        self.timing = timing
        instrument = try MetronomeInstrument(settings: settings, sampleRate: sampleRate, engine: engine)
        if transportMode != .off {
            let table = transportMode == .master ? try TimebaseTable(timing: timing) : nil
            let client: TransportClient
            do {
                client = try TransportClient(name: String("\(clientName)-transport".prefix(60)), serverName: serverName, engine: engine,
                                             slowSync: true, timebase: table)
                try client.activate()
            } catch {
                throw SamplerError("--transport \(transportMode.rawValue): \(error)")
            }
            transport = client
        }
        if interactive { keys = TerminalKeys() }
        self.sampleRate = sampleRate
        if linkEnabled {
            link = try LinkSession(tempo: settings.map.sections[0].tempo.initial)
            print("Link: enabled, \(formatNumber(linkQuantum)) beats a bar; peers join as they are found")
            fflush(nil)
        }
        if let oscPort {
            let server: OSCServer
            do { server = try OSCServer(host: oscHost, port: oscPort, hostNow: { JACKClient.hostClockNow }) } catch {
                throw SamplerError("--osc-port: \(error)")
            }
            osc = KlickOSC(server: server, controller: self, mapFile: settings.mapFile, root: oscRoot) { print($0); fflush(nil) }
            print("OSC: klick's interface on UDP port \(server.port) of \(server.host) (waiting for /klick/metro/start)")
            fflush(nil)
            keepsRunningAtEnd = true
        }
    }

    /// The clicks of the music from its first beat on device frame `origin`, from `first` on.
    func metronome(origin: Frame, phase: Double = 0, startingAt first: Frame? = nil) -> Metronome {
        let timing = timing!
        let countIn = timing.sectionFirstBars[timing.map.countInSections]
        return Metronome(timing: timing, origin: origin, phase: phase, subdivision: settings.subdivision,
                         subdivisionVelocity: settings.subdivisionVelocity, barLimit: settings.bars.map { $0 + countIn },
                         startingAt: first, midiClock: settings.midiClock ? .start : nil)
    }

    /// Called once the engine runs: without transport the music starts on `origin`.
    package func start(origin: Frame) {
        // Under OSC control the clicks wait for /klick/metro/start, as klick's do.
        guard transport == nil, osc == nil else { return }
        if let link {
            // Late enough for the first tick's `followLink` to reach it.
            let at = max(origin, client.map { LinkSession.earliestFrame(client: $0) + Frame($0.bufferSize) } ?? origin)
            link.start(atHostTime: linkHostTime(ofFrame: at), quantum: linkQuantum)
            return
        }
        track = MetronomeTrack(metronome(origin: origin))
        running = true
    }

    func makeFeeder() -> CommandFeeder {
        let instrument = instrument!
        return CommandFeeder(source: ControllerSource(controller: self)) { [unowned self] trigger in
            sent.append(trigger)
            return instrument.command(for: trigger)
        }
    }

    /// MIDI Stop one period ahead (a message for the period under way could arrive late), after
    /// every clock message still queued from `frame` on is withdrawn. Returns its frame.
    @discardableResult
    private func sendClockStop(engine: Engine, withdrawingFrom frame: Frame) -> Frame {
        let period = max(1, engine.renderedFrame - engine.lastPeriodStart)
        let at = engine.renderedFrame + period
        engine.send(.cancelPending(player: Metronome.clockPlayer, from: frame))
        engine.send(.midi(MIDIClockMessage.stop.bytes, player: Metronome.clockPlayer, at: at))
        return at
    }

    /// Playback is stopping: with MIDI clock running and the music not at its end (where the
    /// metronome itself says Stop), Stop now. Returns the frame to render before closing.
    func finishing(engine: Engine) -> Frame? {
        guard settings.midiClock, running, transport == nil else { return nil }
        if let end = track.endFrame, engine.renderedFrame > end { return nil }
        running = false
        return sendClockStop(engine: engine, withdrawingFrom: engine.renderedFrame)
    }

    /// Silences every click sent for a frame at or after `frame` (and before `end`): a stop on
    /// the click's own player and frame, queued after its start, so that it plays no sample.
    func cancelSent(from frame: Frame, before end: Frame = .max, engine: Engine) {
        var kept: [Trigger] = []
        for t in sent {
            if t.frame >= frame && t.frame < end {
                // A MIDI clock message is withdrawn by the cancel the caller sends; a click is
                // stopped on its own frame.
                if t.player != Metronome.clockPlayer {
                    engine.send(.stop(player: t.player, at: t.frame))
                }
            } else {
                kept.append(t)
            }
        }
        sent = kept
    }

    // MARK: - Each tick

    /// Reads keys and transport reports; returns false to quit.
    func tick(engine: Engine, feeder: inout CommandFeeder, frame: Frame) -> Bool {
        for t in sent where t.frame < frame && t.player != Metronome.clockPlayer {
            lastRenderedClick = max(lastRenderedClick ?? t.frame, t.frame)
        }
        sent.removeAll { $0.frame < frame }
        for key in keys?.read() ?? [] {
            if !handle(key, engine: engine, feeder: &feeder, frame: frame) { return false }
        }
        if let osc, let client {
            guard osc.tick(controller: self, engine: engine, frame: frame, sampleRate: sampleRate, hostNow: client.hostTimeNow,
                           frameAt: { client.frame(atHostTime: $0) }) else { return false }
        }
        if transport != nil {
            pollTransport(engine: engine, feeder: &feeder)
            return true
        }
        if link != nil { followLink(engine: engine, feeder: &feeder) }
        // The music (or --bars) ended by itself, its last frame rendered (a MIDI Stop is on the
        // end frame).
        if running, let end = track.endFrame, frame > end {
            guard keepsRunningAtEnd else { return false }
            running = false
            note = "ended"
        }
        return true
    }

    func handle(_ key: MetronomeKey, engine: Engine, feeder: inout CommandFeeder, frame: Frame) -> Bool {
        switch key {
        case .quit:
            return false
        case .startStop:
            if let transport {
                if transportState == .rolling || transportState == .starting { transport.stop() } else { transport.start() }
            } else if link != nil {
                if linkIsPlaying { stopClicks(at: frame, engine: engine) } else { startClicks(at: frame) }
            } else if running {
                stopClicks(at: frame, engine: engine)
            } else {
                startClicks(at: frame)
            }
        case .tempo(let delta):
            changeTempo(engine: engine, frame: frame) { ($0 + delta).rounded() }
        case .tap:
            // A tap is a beat of the meter; the tempo counts quarter notes.
            tap(at: Double(DispatchTime.now().uptimeNanoseconds) / 1e9, engine: engine, frame: frame)
        }
        return true
    }

    /// Stops the clicks from `frame` on: those already sent for it or later are silenced.
    func stopClicks(at frame: Frame, engine: Engine) {
        if let link {
            // The session stops there; every peer (this one too, in `followLink`) follows.
            link.stop(atHostTime: linkHostTime(ofFrame: max(frame, linkEarliestFrame(engine: engine))))
            return
        }
        track.stop(at: frame)
        cancelSent(from: frame, engine: engine)
        if settings.midiClock { sendClockStop(engine: engine, withdrawingFrom: frame) }
        running = false
        note = "stopped"
    }

    /// Starts the music from its top on `frame` (or on the first frame not yet produced, when
    /// that is later). Returns the frame of its first beat.
    /// With `engine` (OSC, a timed start), exactly on `frame`: clicks (and MIDI clock) already
    /// sent for it or later are withdrawn first.
    @discardableResult
    func startClicks(at frame: Frame, engine: Engine? = nil) -> Frame {
        if let link {
            // The session starts there (beat 0 when alone; with peers Link keeps their phase).
            link.start(atHostTime: linkHostTime(ofFrame: frame), quantum: linkQuantum)
            return frame
        }
        var origin = max(frame, track.producedBefore)
        if let engine {
            cancelSent(from: frame, engine: engine)
            if settings.midiClock { engine.send(.cancelPending(player: Metronome.clockPlayer, from: frame)) }
            origin = frame
        }
        track.hand(over: origin, to: metronome(origin: origin))
        running = true
        note = ""
        return origin
    }

    /// Whether the clicks play (for OSC queries).
    var isRunning: Bool { link != nil ? linkIsPlaying : running }

    /// While set, the end of the music stops the clicks but not the program (OSC control, as
    /// klick's: a new start plays it again).
    var keepsRunningAtEnd = false

    /// The tempo map the next start plays.
    var map: TempoMap? { timing?.map }

    /// Plays `map` from the next start on (only while stopped). Tempo keys and OSC tempo changes
    /// work when `tempoChangesAllowed` (a simple metronome, not a loaded map).
    func replaceMap(_ map: TempoMap, sampleRate: Double, tempoChangesAllowed: Bool) {
        guard !running else { return }
        timing = TempoMapTiming(map: map, sampleRate: sampleRate)
        self.tempoChangesAllowed = tempoChangesAllowed
    }

    /// nil: as the settings say.
    private var tempoChangesAllowedOverride: Bool?
    var tempoChangesAllowed: Bool {
        get { tempoChangesAllowedOverride ?? settings.allowsTempoChanges }
        set { tempoChangesAllowedOverride = newValue }
    }

    /// The tempo now (at `frame`), or of the next start's first beat when stopped.
    func tempo(at frame: Frame) -> Double {
        if running, let p = track.position(at: frame) { return p.tempo }
        return timing?.map.sections.first?.tempo.initial ?? 0
    }

    /// A new tempo from the next bar not yet sent (as the tempo keys do).
    func setTempo(_ bpm: Double, engine: Engine, frame: Frame) {
        changeTempo(engine: engine, frame: frame) { _ in bpm }
    }

    /// Forgets the taps so far (the next tap starts a new count).
    func resetTaps() { taps = TapTempo() }

    /// A tap of the tap-tempo, at `seconds` (any clock counting seconds).
    func tap(at seconds: Double, engine: Engine, frame: Frame) {
        if let perMinute = taps.tap(at: seconds) {
            let denominator = Double(meterDenominator(at: frame))
            changeTempo(engine: engine, frame: frame) { _ in (perMinute * 4 / denominator).rounded() }
        }
    }

    private func meterDenominator(at frame: Frame) -> Int {
        guard let m = track.metronome(at: .max), let (s, _) = m.timing.locate(Double(frame - m.origin)) ?? m.timing.locate(0) else { return 4 }
        return m.timing.map.sections[s].meter.denominator
    }

    /// A new tempo from the next bar not yet sent, on that bar's exact frame.
    private func changeTempo(engine: Engine, frame: Frame, _ newTempo: (Double) -> Double) {
        if let link {
            // Committed to the session from the first frame a change can still reach (Link's
            // timeline is one line: a later time would move the beats before it too); the clicks
            // sent beyond it are re-sent on the new grid, and every peer follows.
            let time = linkHostTime(ofFrame: linkEarliestFrame(engine: engine))
            // Build on the last tempo asked for while the session has not shown it yet (Link
            // applies a commit asynchronously), so that quick presses add up.
            if let pending = linkPendingTempo, frame > pending.until { linkPendingTempo = nil }
            let current = linkPendingTempo?.bpm ?? link.timeline(quantum: linkQuantum, reference: time).tempo
            let bpm = min(999, max(20, newTempo(current)))
            link.setTempo(bpm, atHostTime: time)
            linkPendingTempo = (bpm, frame + Frame(sampleRate))
            note = "\(formatNumber(bpm)) bpm to the Link session"
            return
        }
        guard running, transport == nil else { return }
        guard tempoChangesAllowed else { note = "tempo keys are off with a tempo map"; return }
        // Build on the last change asked for, so that quick presses add up.
        guard let base = track.metronome(at: .max) else { return }
        let current = base.position(at: max(frame, base.origin))?.tempo ?? base.timing.map.sections[0].tempo.initial
        let bpm = min(TempoMap.tempoRange.upperBound, max(TempoMap.tempoRange.lowerBound, newTempo(current)))
        guard let (next, _, at) = base.changingTempo(to: bpm, notBefore: max(frame, track.producedBefore)) else { return }
        track.hand(over: at, to: next)
        edits.tempo = bpm
        note = "\(formatNumber(bpm)) bpm from bar \(next.position(at: at)?.bar ?? 0)"
    }

    // MARK: - Transport

    private func pollTransport(engine: Engine, feeder: inout CommandFeeder) {
        guard let transport else { return }
        bufferSize = transport.bufferSize
        var reports: [TransportSnapshot] = []
        transport.poll { reports.append($0) }
        for r in reports {
            switch r.kind {
            case .syncRequest:
                pendingRequest = r
                transportState = .starting
            case .change:
                transportState = r.state
                if r.state == .rolling {
                    rolled(r, engine: engine)
                } else {
                    halted(r, engine: engine)
                }
            }
        }
        // A start asked for and not called off since.
        if let request = pendingRequest {
            pendingRequest = nil
            if transportState != .stopped { prepareRoll(request, engine: engine, feeder: &feeder) }
        }
    }

    /// The transport stopped (or is starting again from somewhere) from `r.deviceFrame` on.
    private func halted(_ r: TransportSnapshot, engine: Engine) {
        running = false
        if r.state == .starting, let expected = expectedRoll, r.deviceFrame < expected.at {
            // Halted before the start prepared for: silence only what the old position scheduled.
            cancelSent(from: r.deviceFrame, before: expected.at, engine: engine)
            return
        }
        expectedRoll = nil
        track.stop(at: r.deviceFrame)
        cancelSent(from: r.deviceFrame, engine: engine)
    }

    /// The first cycle at or after `frame` (cycles start every `bufferSize` frames from `cycle`).
    private func cycle(atOrAfter frame: Frame, from cycle: Frame) -> Frame {
        let p = Frame(max(1, bufferSize))
        return frame <= cycle ? cycle : cycle + (frame - cycle + p - 1) / p * p
    }

    /// A transport start is pending: schedule the clicks for a roll a little later, then tell
    /// JACK we are ready in the cycle before it, so that it rolls exactly there.
    ///
    /// The roll's cycle is a fixed number of periods after the first cycle that asked (about
    /// 50 ms and four periods), so that several metronomes on one server pick the same cycle and
    /// the transport rolls where each of them expects. It must come after the cycle being
    /// rendered (which has taken its commands) and after the cycle in which we say "ready".
    private func prepareRoll(_ request: TransportSnapshot, engine: Engine, feeder: inout CommandFeeder) {
        let p = Frame(max(1, bufferSize))
        let earliest = engine.renderedFrame + 3 * p
        var rollAt: Frame
        if let e = expectedRoll, e.request.frame == request.frame, e.at >= earliest {
            // The same start, with the timebase master's position arriving: keep its cycle.
            rollAt = e.at
        } else {
            let lead = (Frame((0.05 * timing!.sampleRate).rounded(.up)) + p - 1) / p + 4
            rollAt = request.deviceFrame + lead * p
            if rollAt < earliest { rollAt = cycle(atOrAfter: earliest, from: request.deviceFrame) }
        }
        cancelSent(from: request.deviceFrame, engine: engine)
        let m = anchored(request, at: rollAt)
        track.hand(over: min(rollAt, track.producedBefore), to: m)
        feeder.feed(engine, before: max(track.producedBefore, rollAt + 1))
        expectedRoll = (request, rollAt)
        transport?.arm(frame: request.frame, readyInCycle: rollAt - p)
    }

    /// The transport rolls from `r`: as prepared, or (already rolling at start-up, a missed
    /// cycle, a new tempo from the timebase master) anchored afresh on this cycle.
    private func rolled(_ r: TransportSnapshot, engine: Engine) {
        running = true
        if let expected = expectedRoll, expected.request.frame == r.frame, expected.at == r.deviceFrame,
           !(transportMode == .follow && r.hasBBT && !r.sameBBT(as: expected.request)) {
            expectedRoll = nil
            return
        }
        expectedRoll = nil
        let reachable = max(r.deviceFrame, engine.renderedFrame + Frame(max(1, bufferSize)))
        cancelSent(from: r.deviceFrame, engine: engine)
        track.hand(over: min(reachable, track.producedBefore), to: anchored(r, at: r.deviceFrame, startingAt: reachable))
    }

    /// The clicks for transport position `r` placed so that its frame falls on device frame `at`.
    private func anchored(_ r: TransportSnapshot, at deviceFrame: Frame, startingAt first: Frame? = nil) -> Metronome {
        if transportMode == .follow, r.hasBBT, r.beatsPerMinute > 0, r.ticksPerBeat > 0, let m = fromBBT(r, at: deviceFrame, startingAt: first) {
            return m
        }
        return metronome(origin: deviceFrame - r.frame, startingAt: first ?? deviceFrame)
    }

    /// The timebase master's bar/beat/tick and tempo as a constant-tempo metronome.
    private func fromBBT(_ r: TransportSnapshot, at deviceFrame: Frame, startingAt first: Frame?) -> Metronome? {
        let beats = Int(r.beatsPerBar.rounded()), type = Int(r.beatType.rounded())
        guard let meter = try? Meter(beats: min(max(beats, 1), Meter.maxBeats), denominator: min(max(type, 1), Meter.maxDenominator)) else { return nil }
        let quarterBPM = r.beatsPerMinute * 4 / Double(meter.denominator)
        let pattern = settings.map.sections.last?.pattern.flatMap { $0.beats.count == meter.beats ? $0 : nil }
        guard let map = try? TempoMap.constant(bpm: min(max(quarterBPM, 1), 1000), meter: meter, pattern: pattern,
                                               volume: settings.map.sections.last?.volume ?? 1) else { return nil }
        let timing = TempoMapTiming(map: map, sampleRate: timing!.sampleRate)
        let framesPerBeat = timing.offset(inSection: 0, beat: 1)
        // Where this bar began: the BBT position refers to `bbtOffset` frames before the cycle.
        let intoBar = (Double(max(r.beat, 1) - 1) + r.tick / r.ticksPerBeat) * framesPerBeat
        let barStart = Double(deviceFrame - r.bbtOffset) - intoBar
        let origin = Frame(barStart.rounded(.down))
        return Metronome(timing: timing, origin: origin, phase: barStart - Double(origin), subdivision: settings.subdivision,
                         subdivisionVelocity: settings.subdivisionVelocity, startingAt: first ?? deviceFrame,
                         barNumberOffset: Int(r.bar) - 1)
    }

    // MARK: - Status

    func status(at frame: Frame) -> String {
        if transport != nil && !running {
            return transportState == .starting ? "transport starting" : "waiting for the transport to roll"
        }
        var note = note
        if let link { note = "Link \(link.peerCount) peer\(link.peerCount == 1 ? "" : "s")  " + note }
        guard running, let p = track.position(at: frame) else { return note }
        let place = p.isCountIn ? "count-in \(p.bar).\(p.beat)" : "bar \(p.bar).\(p.beat)"
        return "\(place)  \(String(format: "%.1f", p.tempo)) bpm  \(note)"
    }
}

/// The feeder's view of the controller's track.
struct ControllerSource: TriggerSource {
    let controller: MetronomeController
    var endFrame: Frame? { controller.track.endFrame }
    mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        controller.track.produce(before: horizon, body)
    }
}
