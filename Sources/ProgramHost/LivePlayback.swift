import Foundation
import JACKBackend
import Patches
import SamplerCore
import Scheduling
import SoundFiles

/// What `LivePlayback` plays: something that loads its sounds into an engine once the server's
/// rate is known, and then produces timed commands from a start frame on. Control thread only.
package protocol LiveProgram {
    /// Players the engine needs.
    var playerCount: Int { get }
    /// Sounds the engine needs room for (its table is sized to the program, at least
    /// `EngineConfiguration.maxSounds`' default).
    var soundCount: Int { get }
    /// Whether the client needs a MIDI output port, `midi_out` (for `Command.midi`).
    var midiOutput: Bool { get }
    /// Outputs besides the main mix, in engine output order (1, 2, …): each a stereo pair of
    /// ports `NAME_L`/`NAME_R` (see `Engine.render(frameCount:periodStart:outputs:outputCount:)`).
    var outputNames: [String] { get }
    /// A short name for messages ("Patches/drums.json", "metronome at 120 bpm").
    var title: String { get }
    /// Loads and registers the sounds at `sampleRate`.
    mutating func prepare(engine: Engine, sampleRate: Double) throws
    /// The commands to send, the first on or after `origin`.
    func makeFeeder(origin: Frame) -> CommandFeeder
    /// Extra text for the status line at device frame `frame` (e.g. "bar 3.2  120 bpm").
    func status(at frame: Frame) -> String
    /// Called once the client runs, before `makeFeeder`: for a program that maps host times to
    /// device frames (OSC timetags) or needs the period size.
    mutating func attach(client: JACKClient)
    /// Called on the control thread about every 10 ms while playing (e.g. to read keys); return
    /// false to stop.
    mutating func tick(engine: Engine, feeder: inout CommandFeeder, frame: Frame) -> Bool
    /// Called once when playback is about to stop (duration, quit, signal), while the client
    /// still runs: last commands (a MIDI Stop). Returns a frame the engine should render before
    /// the client closes (waited for, at most 1 s), or nil.
    mutating func finishing(engine: Engine) -> Frame?
}

extension LiveProgram {
    package var soundCount: Int { 0 }
    /// The engine this program plays on.
    package var engineConfiguration: EngineConfiguration {
        EngineConfiguration(maxPlayers: max(playerCount, 1), maxSounds: max(EngineConfiguration().maxSounds, soundCount))
    }
    package var midiOutput: Bool { false }
    package var outputNames: [String] { [] }
    package func status(at frame: Frame) -> String { "" }
    package mutating func attach(client: JACKClient) {}
    package mutating func tick(engine: Engine, feeder: inout CommandFeeder, frame: Frame) -> Bool { true }
    package mutating func finishing(engine: Engine) -> Frame? { nil }
}

/// Plays a `LiveProgram` on a JACK server until a duration passes, the user interrupts, or the
/// server goes away: opens the client, lets the program load its sounds at the server's rate,
/// starts it one period ahead on the device clock and keeps the engine's command queue fed ahead
/// of time.
///
/// Control thread only. `run` blocks the calling thread; it waits for SIGINT/SIGTERM with
/// `sigtimedwait` (the signals are blocked in every thread), so no signal handler runs.
package final class LivePlayback {
    package struct Options {
        package var clientName = "sampler"
        package var serverName: String?
        /// nil: connect to the first two physical playback ports; []: connect nothing.
        package var connections: [String]?
        /// Ports to connect `midi_out` to (when the program has one).
        package var midiConnections: [String] = []
        /// Named outputs' ports to connect (`--connect-output NAME=PORT[,PORT]`).
        package var outputConnections: [(output: String, ports: [String])] = []
        package var duration: Double?
        package var recordPath: String?
        package var showStatus = false
        /// Called on the control thread about every 10 ms while playing, after the program's
        /// `tick`; the first call comes once the client runs and its ports are connected. Return
        /// false to stop. (A session manager's messages: `sampler`'s NSM client.)
        package var onTick: (() -> Bool)?
        /// Open the client under `clientName` exactly or fail (a session manager's client id),
        /// rather than let JACK add a suffix.
        package var exactClientName = false
        package init() {}
    }

    /// What happened, for the caller to report.
    package struct Summary {
        /// "N lost periods (F frames), R frames repeated", for the exit line.
        package var lostDescription: String {
            "\(lostPeriods) lost periods (\(lostFrames) frames), \(repeatedFrames) frames repeated"
                + (overrunPeriods == 0 ? "" : ", \(overrunPeriods) overrun periods (rendered after the server's cycle had moved on: not heard)")
        }
        package var renderedSeconds: Double
        package var startsSent: Int
        /// MIDI note-ons on midi_in that played an instrument.
        package var midiNotes: Int
        /// MIDI program changes received (a kit is one program: they select nothing).
        package var programChanges: Int = 0
        package var lateStarts: Int
        /// MIDI messages sent on their frames, and those not sent (due in lost frames or late).
        package var midiMessages: Int
        package var lateMIDIMessages: Int
        /// System messages (MIDI clock) sent after their frame, on the first after a lost stretch.
        package var deferredMIDIMessages: Int = 0
        /// MIDI messages JACK's output buffer had no room for.
        package var unwrittenMIDIMessages: Int = 0
        package var xruns: Int
        /// Stretches of device frames JACK skipped the client for (each a silent gap in the
        /// output, the music advanced over it), and their frames.
        package var lostPeriods: Int
        package var lostFrames: Int
        /// Frames JACK asked for again after they had been rendered (written as silence).
        package var repeatedFrames: Int
        /// Periods rendered after the server had moved on to its next cycle without waiting for
        /// them (a silent gap: what was rendered for them is not heard).
        package var overrunPeriods: Int = 0
        /// Times a port this client was connected to went away and came back, and was connected
        /// again (a netjack2 slave's net driver restarting re-registers its `system` ports).
        package var reconnections: Int = 0
        /// Frames the master ran that a netjack2 slave's server missed (a silent gap the
        /// timeline moved past when its ports came back).
        package var uncountedFrames: Frame = 0
        /// Voices whose streamed tail was not read by their head's end (they ended there), and
        /// notes not played for want of a free tail buffer (`Engine.tailUnderrunCount`,
        /// `refusedTailCount`).
        package var lateTails: Int = 0
        package var refusedTails: Int = 0
        /// Whether the kit streams tails, and the most voices that sounded at once.
        package var streamsTails = false
        package var peakVoices: Int = 0
        /// "; …" for the exit line when the kit streams tails (the most voices at once), tails
        /// were late or notes refused, else "".
        package var tailDescription: String {
            (streamsTails ? "; at most \(peakVoices) voices at once" : "")
                + (lateTails == 0 ? "" : "; \(lateTails) voice(s) ended at their head's end, their tail not read from disk in time")
                + (refusedTails == 0 ? "" : "; \(refusedTails) note(s) not played, every voice that streams from disk busy (--stream-voices)")
        }
        /// "; …" for the exit line when ports were reconnected, else "".
        package var reconnectionDescription: String {
            reconnections == 0 ? "" : "; \(reconnections) connection(s) lost with a port that went away and made again when it came back (on a netjack2 slave: its net driver restarted)"
                + (uncountedFrames == 0 ? "" : "; \(uncountedFrames) frames the server did not count passed while it was stopped (a silent gap)")
        }
        package var serverShutDown: Bool
        package var originFrame: Frame
        package var sampleRate: Double
        package var bufferSize: Int
    }

    private var program: any LiveProgram
    private let options: Options

    package init(program: any LiveProgram, options: Options) {
        self.program = program
        self.options = options
    }

    /// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts later),
    /// so that `run` can wait for them synchronously. Call first thing in `main`.
    package static func blockTerminationSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    package func run(log: (String) -> Void) throws -> Summary {
        let engine = Engine(configuration: program.engineConfiguration)
        let tap = options.recordPath == nil ? nil : RecordTap()
        let client = try JACKClient(name: options.clientName, serverName: options.serverName, engine: engine, recordTap: tap,
                                    midiOutput: program.midiOutput, outputs: program.outputNames,
                                    exactName: options.exactClientName)
        let rate = client.sampleRate
        try program.prepare(engine: engine, sampleRate: rate)
        var writer: WAVFileWriter?
        if let path = options.recordPath, let tap {
            let w = try WAVFileWriter(path: path, sampleRate: Int(rate), channelCount: 2, format: .float32)
            writer = w
            tap.start { l, r in try? w.write(left: l, right: r, frameCount: l.count) }
        }
        try client.activate()
        defer {
            client.close()
            tap?.stop()
            writer?.close()
        }
        // The connections made here, made again when a port they go to comes back after going
        // away (a netjack2 slave's driver restart re-registers the server's ports).
        var made: [(from: String, to: String)] = []
        func pairs(_ pair: [String], _ ports: [String]) -> [(from: String, to: String)] {
            ports.prefix(2).enumerated().map { (pair[$0.offset], $0.element) } + (ports.count == 1 ? [(pair[1], ports[0])] : [])
        }
        if let wanted = options.connections {
            // The wanted ports come from the command line's --connect.
            do { if !wanted.isEmpty { try client.connectOutputs(to: wanted) } } catch { throw SamplerError("--connect: \(error)") }
            made += pairs(client.outputPortNames, wanted)
        } else {
            let physical = client.physicalPlaybackPorts()
            if !physical.isEmpty { try client.connectOutputs(to: Array(physical.prefix(2))) }
            made += pairs(client.outputPortNames, Array(physical.prefix(2)))
        }
        for (output, ports) in options.outputConnections {
            guard client.outputs.contains(output) else {
                let have = client.outputs.isEmpty ? "it has none" : "it has \(client.outputs.joined(separator: ", "))"
                throw SamplerError("--connect-output: \(program.title) has no output \"\(output)\" (\(have))")
            }
            do { try client.connectOutput(output, to: ports) } catch { throw SamplerError("--connect-output: \(error)") }
            made += pairs(client.portNames(ofOutput: output), ports)
        }
        if let midiOut = client.midiOutputPortName {
            for port in options.midiConnections {
                do { try client.connect(midiOut, to: port) } catch { throw SamplerError("--midi-connect: \(error)") }
                made.append((midiOut, port))
            }
        }
        _ = client.takeRouteChanges()
        _ = client.takeRegisteredPorts()
        var broken: [(from: String, to: String)] = []
        var reconnections = 0
        var advancedFrames: Frame = 0
        var takeUncountedUntil: Date?

        // Wait (bounded) for the first period, so the device clock is running. The same watchdog
        // then checks, all through the run, that JACK still runs this client. Mid-run, a server
        // that itself stopped cycling (stopped, or a suspended machine) is waited for: playing
        // goes on when it does.
        var watchdog = ProcessWatchdog(limit: 5, sampleRate: rate)
        func checkRunning(started: Bool) throws {
            if let stall = watchdog.check(periods: engine.periodCount, serverFrame: client.serverCycleFrame,
                                          now: ProcessInfo.processInfo.systemUptime), stall.serverRan || !started {
                throw SamplerError(stall.message(client: client.name))
            }
        }
        while engine.periodCount == 0 && !client.isShutDown {
            try checkRunning(started: false)
            usleep(1_000)
        }
        program.attach(client: client)
        // This thread feeds the engine 0.1 s ahead. Beside busy processes of normal priority it
        // was once held off longer than that (a MIDI clock tick deferred): it asks for a higher
        // scheduling weight (nice −10, for this thread alone on Linux, and threads it starts later;
        // allowed for root or within RLIMIT_NICE, else it stays as it is). Never real-time: a
        // long OSC load also runs here.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -10)
        let period = Frame(client.bufferSize)
        // One period ahead of the first frame not yet rendered: the command reaches the render
        // thread before that period begins.
        let origin = engine.renderedFrame + period
        var feeder = program.makeFeeder(origin: origin)
        let lookahead = Frame(rate * 0.1) + 2 * period
        let endFrame = options.duration.map { origin + Frame(($0 * rate).rounded()) }
        log("playing \(program.title) on JACK at \(Int(rate)) Hz, \(client.bufferSize) frames per period, as \(client.name), from device frame \(origin)")
        if !client.outputs.isEmpty {
            log("outputs beside out_L/out_R: " + client.outputs.map { "\($0)_L/\($0)_R" }.joined(separator: ", "))
        }

        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        var tick = timespec(tv_sec: 0, tv_nsec: 10_000_000)
        var lastStatus = Date.distantPast
        var late = 0
        while true {
            if client.isShutDown { break }
            let rendered = engine.renderedFrame
            if let endFrame, rendered >= endFrame { break }
            try checkRunning(started: true)
            var horizon = rendered + lookahead
            if let endFrame { horizon = min(horizon, endFrame) }
            feeder.feed(engine, before: horizon)
            if !program.tick(engine: engine, feeder: &feeder, frame: rendered) { break }
            if let onTick = options.onTick, !onTick() { break }
            engine.drainEvents { if $0.kind == .lateStart { late += 1 } }
            for change in client.takeRouteChanges() where !change.connected {
                if made.contains(where: { $0.from == change.source && $0.to == change.destination }),
                   !broken.contains(where: { $0.from == change.source && $0.to == change.destination }) {
                    broken.append((change.source, change.destination))
                }
            }
            let registered = client.takeRegisteredPorts()
            if !broken.isEmpty, !registered.isEmpty {
                let back = broken.filter { registered.contains($0.to) }
                // A netjack2 slave's net driver restarted: the master ran the cycles the slave
                // missed, which the slave's frame time did not count. They are measured on the
                // first cycle after the restart, which may come after its ports do: they are
                // taken for a second from now.
                if !back.isEmpty { takeUncountedUntil = Date().addingTimeInterval(1) }
                for link in back where (try? client.connect(link.from, to: link.to)) != nil {
                    broken.removeAll { $0.from == link.from && $0.to == link.to }
                    reconnections += 1
                    FileHandle.standardError.write(Data("sampler: warning: \(link.to) went away and came back; \(link.from) is connected to it again (on a netjack2 slave its net driver restarted: see docs/netjack.md)\n".utf8))
                }
            }
            // Moved past the missed cycles, the device clock is on the master's timeline again,
            // and they are a silent gap.
            if let until = takeUncountedUntil {
                let missed = client.takeUncountedFrames()
                if missed > 0 {
                    client.advanceClock(by: missed)
                    advancedFrames += missed
                    FileHandle.standardError.write(Data("sampler: warning: the server missed \(missed) frames (\(missed / period) cycles) that its frame time does not count (a netjack2 slave whose net driver restarted): the timeline moves past them, a silent gap, so that what follows is heard where it would have been\n".utf8))
                }
                if Date() > until { takeUncountedUntil = nil }
            }
            if options.showStatus, Date().timeIntervalSince(lastStatus) > 0.25 {
                lastStatus = Date()
                let t = Double(rendered - origin) / rate
                let line = String(format: "\r%8.2f s  voices %3d  late %d  lost %d (%d frames)  xruns %d  ", max(0, t),
                                  engine.activeVoiceCount, late, engine.lostPeriodCount, engine.lostFrameCount,
                                  client.xrunCount) + program.status(at: rendered)
                FileHandle.standardOutput.write(line.data(using: .utf8)!)
            }
            if sigtimedwait(&signals, nil, &tick) > 0 { break }
        }
        if !client.isShutDown, let last = program.finishing(engine: engine) {
            // Bounded: a server that stopped running its cycle must not hold the exit.
            let deadline = Date().addingTimeInterval(1)
            while engine.renderedFrame <= last && !client.isShutDown && Date() < deadline { usleep(2_000) }
        }
        if options.showStatus { FileHandle.standardOutput.write("\n".data(using: .utf8)!) }
        var summary = Summary(renderedSeconds: Double(max(0, engine.renderedFrame - origin)) / rate,
                       startsSent: feeder.sentCount, midiNotes: engine.midiNoteCount, lateStarts: engine.lateStartCount,
                       midiMessages: engine.sentMIDICount, lateMIDIMessages: engine.lateMIDICount, deferredMIDIMessages: engine.deferredMIDICount,
                       unwrittenMIDIMessages: client.unwrittenMIDICount, xruns: client.xrunCount,
                       lostPeriods: engine.lostPeriodCount, lostFrames: engine.lostFrameCount,
                       repeatedFrames: engine.repeatedFrameCount,
                       serverShutDown: client.isShutDown, originFrame: origin, sampleRate: rate,
                       bufferSize: client.bufferSize)
        summary.programChanges = engine.programChangeCount
        summary.reconnections = reconnections
        summary.overrunPeriods = client.overrunCount
        summary.uncountedFrames = advancedFrames
        summary.lateTails = engine.tailUnderrunCount
        summary.refusedTails = engine.refusedTailCount
        summary.streamsTails = engine.tailBufferShape.count > 0
        summary.peakVoices = engine.peakVoiceCount
        return summary
    }
}
