import Foundation
import JACKBackend
import ProgramHost
import SamplerCore
import Scheduling
import Sync

/// klick's OSC interface on the live metronome (`sampler metronome --osc-port`): the methods a
/// click-track client of klick 0.12 uses, with klick's replies (to the address the message
/// names, else to its sender) and notifications (to registered clients), plus timetags: a
/// start, stop or tempo sent in a bundle acts on the device frame of the bundle's time; an
/// untimed message, or one whose time has passed, acts as soon as possible.
///
/// Differences from klick: a tempo sent while the clicks play takes effect from the next bar
/// not yet sent (as the tempo keys do), a meter from the next start; `/klick/metro/set_type
/// jack`, the sound and volume settings, `connect`/`autoconnect`, the speed trainer and the
/// preroll are not supported (a line on standard error says so).
///
/// Control thread only (the metronome's), each tick.
package final class KlickOSC {
    let server: OSCServer
    private var clients: [String] = []
    /// The most clients that may register (`/klick/register_client`): every tempo change sends
    /// each a datagram, so the list is never a way to multiply one message into many.
    package static let maximumClients = 16
    package var registeredClientCount: Int { clients.count }
    private var clientsFullWarned = false
    private var type: String
    private var mapFile = ""
    private var loadedMap: TempoMap?
    private var simpleTempo: Double
    private var simpleMeter: Meter
    private var lastTempo: Double = -1
    /// Which clock the last tap's time was on (taps on different clocks do not mix).
    private var tapClock = ""
    /// Every message handled, with the frame it acted on, is printed (standard output).
    let log: (String) -> Void

    /// The directory `/klick/map/load_file` may read from (nil: anywhere the process may read).
    private let root: String?
    private let timed = OSCTimedQueue()
    /// Refusals on standard error, at most ten lines a second.
    private let warnings = OSCWarnings()

    package init(server: OSCServer, controller: MetronomeController, mapFile: String?, root: String? = nil, log: @escaping (String) -> Void) {
        self.root = root
        self.server = server
        self.log = log
        let map = controller.map
        type = controller.tempoChangesAllowed ? "simple" : "map"
        if !controller.tempoChangesAllowed {
            loadedMap = map
            self.mapFile = mapFile ?? ""
        }
        // The music's first section after any count-in.
        let first = map.flatMap { $0.sections.indices.contains($0.countInSections) ? $0.sections[$0.countInSections] : $0.sections.first }
        simpleTempo = first?.tempo.initial ?? 120
        simpleMeter = first?.meter ?? .fourFour
    }

    /// Handles the messages received since the last tick. `frame`: the engine's rendered frame;
    /// `frameAt` maps a host time to a device frame. Returns false on `/klick/quit`.
    func tick(controller: MetronomeController, engine: Engine, frame: Frame, sampleRate: Double, hostNow: UInt64,
              frameAt: (UInt64) -> Frame) -> Bool {
        warnings.flush()
        let dropped = server.takeDroppedCount()
        if dropped > 0 { log("osc: \(dropped) message\(dropped == 1 ? "" : "s") dropped (malformed, or more than \(OSCServer.maximumQueued) at once)") }
        let due = timed.due(engine: engine, sampleRate: sampleRate, hostNow: hostNow, clock: server.hostClock)
        return dispatch(due + server.take(), controller: controller, engine: engine, frame: frame, sampleRate: sampleRate,
                        hostNow: hostNow, frameAt: frameAt)
    }

    /// Handles `messages` (what `tick` takes from the server; the fuzz target's own). Returns
    /// false on `/klick/quit`. Control thread only.
    package func dispatch(_ messages: [OSCMessage], controller: MetronomeController, engine: Engine, frame: Frame, sampleRate: Double,
                          hostNow: UInt64, frameAt: (UInt64) -> Frame) -> Bool {
        var refused = 0
        defer { if refused > 3 { log("osc: \(refused - 3) more messages refused") } }
        for message in messages {
            let at: Frame, when: String
            switch message.placement(engine: engine, sampleRate: sampleRate, hostNow: hostNow, frameAt: frameAt, limit: timed) {
            case .at(let f, let how): (at, when) = (f, how)
            case .held: continue
            case .refused(let why):
                // A flood of refusals is counted, not printed line by line.
                refused += 1
                if refused <= 3 { warn(message, why) }
                let replyTo = message.arguments.first?.text.flatMap { OSCServer.replyURL($0, source: message.source) } ?? message.source
                server.send("/klick/error", [.string(message.path), .string(why)], to: replyTo)
                continue
            }
            if !handle(message, at: at, when: when, controller: controller, engine: engine, frame: frame, sampleRate: sampleRate) {
                return false
            }
        }
        // klick tells registered clients the tempo whenever it changes.
        let tempo = controller.isRunning ? controller.tempo(at: frame) : 0
        if tempo != lastTempo {
            lastTempo = tempo
            notify("/klick/simple/current_tempo", [.float(Float(tempo))])
        }
        return true
    }

    private func handle(_ m: OSCMessage, at: Frame, when: String, controller: MetronomeController, engine: Engine,
                        frame: Frame, sampleRate: Double) -> Bool {
        let replyTo = m.arguments.first?.text.flatMap { OSCServer.replyURL($0, source: m.source) } ?? m.source
        func reply(_ path: String, _ args: [OSCArgument] = []) { server.send(path, args, to: replyTo) }
        func ack(_ what: String) { log("osc: \(m.path) \(what)") }
        switch (m.path, m.types) {
        case ("/klick/ping", ""), ("/klick/ping", "s"):
            reply("/klick/pong")
            ack("from \(m.source)")
        case ("/klick/check", ""), ("/klick/check", "s"):
            reply("/klick/ready")
        case ("/klick/register_client", ""), ("/klick/register_client", "s"):
            if clients.contains(replyTo) { break }
            guard clients.count < Self.maximumClients else {
                // Said once per refusal burst: a flood of registrations is one line, not many.
                if !clientsFullWarned { warn(m, "at most \(Self.maximumClients) clients register (unregister one first)") }
                clientsFullWarned = true
                break
            }
            clients.append(replyTo)
        case ("/klick/unregister_client", ""), ("/klick/unregister_client", "s"):
            clients.removeAll { $0 == replyTo }
            clientsFullWarned = false
        case ("/klick/quit", _):
            ack("")
            return false
        case ("/klick/query", ""), ("/klick/query", "s"):
            queryMetro(reply, controller: controller)
            if type == "simple" { querySimple(reply, controller: controller, frame: frame) } else { queryMap(reply) }
        case ("/klick/metro/query", ""), ("/klick/metro/query", "s"):
            queryMetro(reply, controller: controller)
        case ("/klick/metro/start", ""):
            if controller.isRunning { controller.stopClicks(at: at, engine: engine) }
            // A simple metronome starts with the tempo and meter set last.
            if type == "simple" { applySimple(controller, sampleRate: sampleRate) }
            let first = controller.startClicks(at: at, engine: engine)
            ack("\(when): first beat at frame \(first)")
            notify("/klick/metro/active", [.int(1)])
        case ("/klick/metro/stop", ""):
            if controller.isRunning { controller.stopClicks(at: at, engine: engine) }
            ack("\(when): stopped at frame \(at)")
            notify("/klick/metro/active", [.int(0)])
        case ("/klick/metro/set_type", "s"):
            let wanted = m.arguments[0].text!
            switch wanted {
            case "simple":
                stop(controller, engine: engine, at: at)
                type = "simple"
                applySimple(controller, sampleRate: sampleRate)
                // What a session keeps from now on: this tempo and meter, no map.
                controller.edits = MetronomeEdits(tempo: simpleTempo, meter: simpleMeter)
                controller.edits.type = "simple"
            case "map":
                stop(controller, engine: engine, at: at)
                type = "map"
                if let loadedMap { controller.replaceMap(loadedMap, sampleRate: sampleRate, tempoChangesAllowed: false) }
                // A session keeps the map (the one loaded over OSC, else the starting one).
                if loadedMap != nil {
                    controller.edits = MetronomeEdits(mapFile: mapFile.isEmpty ? nil : mapFile)
                    controller.edits.type = "map"
                }
            default:
                warn(m, "metronome type \"\(wanted)\" is not supported (simple or map)")
                return true
            }
            notify("/klick/metro/type", [.string(type)])
        case ("/klick/simple/set_tempo", "f"), ("/klick/simple/set_tempo", "i"), ("/klick/simple/set_tempo", "d"):
            guard type == "simple" else { warn(m, "function not available for current metronome type"); return true }
            let bpm = m.arguments[0].number!
            guard TempoMap.tempoRange.contains(bpm) else { warn(m, "tempo \(bpm) is out of range"); return true }
            simpleTempo = bpm
            controller.edits.tempo = bpm
            if controller.isRunning { controller.setTempo(bpm, engine: engine, frame: at) } else { applySimple(controller, sampleRate: sampleRate) }
            ack("\(bpm) bpm")
            notify("/klick/simple/tempo", [.float(Float(bpm))])
        case ("/klick/simple/set_meter", "ii"):
            guard type == "simple" else { warn(m, "function not available for current metronome type"); return true }
            guard case .int(let beats) = m.arguments[0], case .int(let denominator) = m.arguments[1],
                  let meter = try? Meter(beats: Int(beats), denominator: Int(denominator)) else {
                warn(m, "not a meter"); return true
            }
            simpleMeter = meter
            controller.edits.meter = meter
            if !controller.isRunning { applySimple(controller, sampleRate: sampleRate) }
            ack("\(meter)" + (controller.isRunning ? " from the next start" : ""))
            notify("/klick/simple/meter", [.int(beats), .int(denominator)])
        case ("/klick/simple/tap", ""), ("/klick/simple/tap", "d"):
            guard type == "simple" else { warn(m, "function not available for current metronome type"); return true }
            // klick's time argument is in seconds of any clock; without one, the tap's own
            // time (its timetag, else its arrival) on the device clock.
            let seconds = m.arguments.first?.number ?? Double(at) / sampleRate
            if tapClock != (m.arguments.isEmpty ? "device" : "sender") { controller.resetTaps() }
            tapClock = m.arguments.isEmpty ? "device" : "sender"
            controller.tap(at: seconds, engine: engine, frame: at)
        case ("/klick/simple/query", ""), ("/klick/simple/query", "s"):
            querySimple(reply, controller: controller, frame: frame)
        case ("/klick/map/load_file", "s"):
            let path = m.arguments[0].text!
            do {
                let map = try TempoMap(contentsOfFile: path, root: root)
                stop(controller, engine: engine, at: at)
                loadedMap = map
                mapFile = path
                type = "map"
                controller.replaceMap(map, sampleRate: sampleRate, tempoChangesAllowed: false)
                controller.edits = MetronomeEdits(mapFile: path)
                ack("\(path)")
                notify("/klick/map/filename", [.string(path)])
            } catch {
                // The sender may not be able to read the file: the error names its line, never
                // what the line holds.
                let why = "\(error.withoutQuotedInput)"
                warn(m, why)
                reply("/klick/error", [.string(m.path), .string(why)])
            }
        case ("/klick/map/query", ""), ("/klick/map/query", "s"):
            queryMap(reply)
        default:
            warn(m, "unknown message")
        }
        return true
    }

    private func stop(_ controller: MetronomeController, engine: Engine, at frame: Frame) {
        guard controller.isRunning else { return }
        controller.stopClicks(at: frame, engine: engine)
        notify("/klick/metro/active", [.int(0)])
    }

    private func applySimple(_ controller: MetronomeController, sampleRate: Double) {
        if let map = try? TempoMap.constant(bpm: simpleTempo, meter: simpleMeter) {
            controller.replaceMap(map, sampleRate: sampleRate, tempoChangesAllowed: true)
        }
    }

    private func queryMetro(_ reply: (String, [OSCArgument]) -> Void, controller: MetronomeController) {
        reply("/klick/metro/type", [.string(type)])
        reply("/klick/metro/active", [.int(controller.isRunning ? 1 : 0)])
    }

    private func querySimple(_ reply: (String, [OSCArgument]) -> Void, controller: MetronomeController, frame: Frame) {
        reply("/klick/simple/tempo", [.float(Float(simpleTempo))])
        reply("/klick/simple/tempo_increment", [.float(0)])
        reply("/klick/simple/tempo_start", [.float(0)])
        reply("/klick/simple/tempo_limit", [.float(0)])
        reply("/klick/simple/current_tempo", [.float(Float(controller.isRunning ? controller.tempo(at: frame) : 0))])
        reply("/klick/simple/meter", [.int(Int32(simpleMeter.beats)), .int(Int32(simpleMeter.denominator))])
        reply("/klick/simple/pattern", [.string("")])
    }

    private func queryMap(_ reply: (String, [OSCArgument]) -> Void) {
        reply("/klick/map/filename", [.string(mapFile)])
        reply("/klick/map/preroll", [.int(-1)])
        reply("/klick/map/tempo_multiplier", [.float(1)])
    }

    private func notify(_ path: String, _ args: [OSCArgument]) {
        for client in clients { server.send(path, args, to: client) }
    }

    private func warn(_ m: OSCMessage, _ what: String) {
        warnings.refused(m, what)
    }
}
