import Foundation
import JACKBackend
import Locking
import Patches
import ProgramHost
import SafeFiles
import SamplerCore
import Scheduling
import SFZ
import Sync

/// The sampler's own OSC interface on a live patch (`sampler play --osc-port`):
///
/// | message | does |
/// |---|---|
/// | `/sampler/trigger ,s id` (`,sf id velocity` 0…1, `,si id velocity` 1…127; `,i index`) | plays the instrument |
/// | `/sampler/gain ,sf id gain`, `/sampler/pan ,sf id pan` | the instrument's mix for its triggers from then on |
/// | `/sampler/load ,s path` | the patch's (or the `.sfz` file's) instruments replace these once loaded on a thread of its own (what sounds stops); replies `/sampler/loading ,sii path done files` every half second while it loads, then `/sampler/loaded ,si path count` or `/sampler/error ,ss path message` |
/// | `/sampler/stop` | stops every voice |
/// | `/sampler/ping` (`,s address`) | replies `/sampler/pong` |
/// | `/sampler/query` (`,s address`) | replies `/sampler/instrument ,is index id` for each instrument, then `/sampler/state ,hdi frame sampleRate voices` |
///
/// A message in a bundle acts on the device frame of the bundle's timetag (held until it is
/// near, then mapped to its frame: `OSCTimedQueue`); an untimed message,
/// or one whose time has passed, as soon as possible. A timetag more than an hour ahead, or one
/// arriving while 1,024 timed messages wait for their frames, is refused with
/// `/sampler/error ,ss path reason`. `/sampler/load` reads only a regular patch or SFZ file
/// (it, its includes and its samples under `--osc-root` when given), and its errors never
/// quote the file: a message may do no more than the command line could. Replies go to the
/// address a message
/// names (an OSC URL or a port on this machine), else to its sender. Each trigger and stop is
/// printed with its frame.
///
/// Control thread only (the playback's), each tick.
package final class PatchOSC {
    let server: OSCServer
    private let log: (String) -> Void
    /// Refusals on standard error, at most ten lines a second.
    private let warnings = OSCWarnings()
    /// Whether `/sampler/load` may replace the instruments (a program playing only what OSC
    /// triggers: patterns would name instruments of the old patch).
    let canLoad: Bool
    /// The patch loaded over OSC, if any, in place of the program's.
    private(set) var replaced: (kit: Patch, loaded: LoadedPatch)?
    /// Kits replaced by a load, kept until the device frame given (a second after their last
    /// frame), so that their voices until the swap and the fades after it find their tails.
    private var retiring: [(loaded: LoadedPatch, until: Frame)] = []
    private static let retiringLimit = 4
    /// The file of the patch `/sampler/load` loaded last, if any (a session keeps it).
    private(set) var loadedPath: String?
    /// The directory `/sampler/load` may read from (nil: anywhere the process may read).
    let root: String?
    /// The outputs the client has besides the main mix (the program's patch's): a loaded patch's
    /// instruments go to those of them it names, the rest to the main mix.
    let outputs: [String]
    private let timed = OSCTimedQueue()
    /// The load whose thread runs, and the one asked for after it (started once that thread
    /// is done): at most one loading thread, whatever the messages.
    private var loading: PendingLoad?
    private var nextLoad: PendingLoad?
    /// Called on a load's thread before it reads anything (tests hold a load in flight here).
    var beforeLoading: (@Sendable (String) -> Void)?
    /// How a loaded kit streams its samples' tails where the engine has tail buffers (the
    /// program's kit was loaded `readyForLoads`); nil: loads decode every sample whole.
    package var streaming: PatchStreamingOptions?

    /// The streaming options a load on `engine` takes.
    /// Heads at most a quarter of the engine's tail rings (`LoadedPatch`'s four heads a ring).
    private func streaming(on engine: Engine) -> PatchStreamingOptions? {
        let shape = engine.tailBufferShape
        guard shape.count > 0, var options = streaming else { return nil }
        options.longestHeadFrames = max(64, shape.capacity / 4)
        return options
    }

    package init(server: OSCServer, canLoad: Bool, root: String? = nil, outputs: [String] = [], log: @escaping (String) -> Void) {
        self.outputs = outputs
        self.server = server
        self.canLoad = canLoad
        self.root = root
        self.log = log
    }

    /// `hostNow`: the device's host clock now (microseconds); `frameAt` maps host times to frames.
    func tick(kit programKit: Patch, loaded programLoaded: LoadedPatch, engine: Engine, sampleRate: Double, hostNow: UInt64,
              frameAt: (UInt64) -> Frame) {
        warnings.flush()
        let dropped = server.takeDroppedCount()
        if dropped > 0 { log("osc: \(dropped) message\(dropped == 1 ? "" : "s") dropped (malformed, or more than \(OSCServer.maximumQueued) at once)") }
        serviceLoads(kit: programKit, loaded: programLoaded, engine: engine, sampleRate: sampleRate)
        let due = timed.due(engine: engine, sampleRate: sampleRate, hostNow: hostNow, clock: server.hostClock)
        dispatch(due + server.take(), kit: programKit, loaded: programLoaded, engine: engine, sampleRate: sampleRate, hostNow: hostNow,
                 frameAt: frameAt)
    }

    /// Handles `messages` (what `tick` takes from the server; the fuzz target's own) for the
    /// program's `programKit` as loaded. Control thread only.
    package func dispatch(_ messages: [OSCMessage], kit programKit: Patch, loaded programLoaded: LoadedPatch, engine: Engine,
                          sampleRate: Double, hostNow: UInt64, frameAt: (UInt64) -> Frame) {
        var refused = 0
        defer { if refused > 3 { log("osc: \(refused - 3) more messages refused") } }
        var loadedThisTick = false
        for m in messages {
            let kit = replaced?.kit ?? programKit, loaded = replaced?.loaded ?? programLoaded
            let replyTo = m.arguments.first?.text.flatMap { OSCServer.replyURL($0, source: m.source) } ?? m.source
            let at: Frame, when: String
            switch m.placement(engine: engine, sampleRate: sampleRate, hostNow: hostNow, frameAt: frameAt, limit: timed) {
            case .at(let frame, let how): (at, when) = (frame, how)
            case .held: continue
            case .refused(let why):
                // A flood of refusals is counted, not printed line by line.
                refused += 1
                if refused <= 3 { warn(m, why) }
                server.send("/sampler/error", [.string(m.path), .string(why)], to: replyTo)
                continue
            }
            switch (m.path, m.types) {
            case ("/sampler/ping", ""), ("/sampler/ping", "s"):
                server.send("/sampler/pong", [], to: replyTo)
            case ("/sampler/query", ""), ("/sampler/query", "s"):
                for (i, instrument) in kit.instruments.enumerated() {
                    server.send("/sampler/instrument", [.int(Int32(i)), .string(instrument.id)], to: replyTo)
                }
                server.send("/sampler/state", [.int64(engine.renderedFrame), .double(sampleRate), .int(Int32(engine.activeVoiceCount))],
                            to: replyTo)
            case ("/sampler/trigger", let types) where ["s", "sf", "sd", "si", "i", "if", "id", "ii"].contains(types):
                guard let index = instrumentIndex(m.arguments[0], kit: kit) else {
                    warn(m, "no instrument \(m.arguments[0]) (the patch has \(kit.instruments.map(\.id).joined(separator: ", ")))")
                    continue
                }
                var velocity: Float = 1
                if m.arguments.count == 2, let v = m.arguments[1].number {
                    // An integer is a MIDI velocity (1…127), a float a level (0…1].
                    if case .int = m.arguments[1] { velocity = Float(v) / 127 } else { velocity = Float(v) }
                    guard velocity.isFinite, velocity > 0, velocity <= 1 else { warn(m, "velocity out of range"); continue }
                }
                _ = engine.send(loaded.command(for: Trigger(frame: at, player: index, velocity: velocity)))
                log("osc: /sampler/trigger \(kit.instruments[index].id) \(when): at frame \(at)")
            case ("/sampler/gain", let types) where ["sf", "sd", "si", "if", "id", "ii"].contains(types),
                 ("/sampler/pan", let types) where ["sf", "sd", "si", "if", "id", "ii"].contains(types):
                guard let index = instrumentIndex(m.arguments[0], kit: kit) else {
                    warn(m, "no instrument \(m.arguments[0]) (the patch has \(kit.instruments.map(\.id).joined(separator: ", ")))")
                    continue
                }
                guard !loaded.streams(instrument: index) else { warn(m, "\(kit.instruments[index].id) streams from disk: its mix is the patch's"); continue }
                guard let value = m.arguments[1].number, value.isFinite else { warn(m, "not a number"); continue }
                let isGain = m.path == "/sampler/gain"
                if isGain && !(0...16).contains(value) { warn(m, "gain out of range (0 to 16, linear)"); continue }
                if !isGain && !(-1...1).contains(value) { warn(m, "pan out of range (-1 to 1)"); continue }
                let law = kit.panLaw.kind
                _ = engine.send(.setInstrumentMix(instrument: index, gain: isGain ? Gain(linear: Float(value)) : nil,
                                                  pan: isGain ? nil : PanGains(pan: Float(value), law: law), at: at))
                log("osc: \(m.path) \(kit.instruments[index].id) \(formatNumber(value)) \(when): at frame \(at)")
            case ("/sampler/load", "s"), ("/sampler/load", "ss"):
                guard case .string(let path) = m.arguments[0] else { continue }
                let replyTo = m.arguments.count == 2 ? (m.arguments[1].text.flatMap { OSCServer.replyURL($0, source: m.source) } ?? m.source) : m.source
                // One load a tick: a bundle of loads cannot hold the control thread (and the
                // replies to everyone else) for as long as all of them would take.
                guard !loadedThisTick else {
                    warn(m, "one load at a time: send it again")
                    server.send("/sampler/error", [.string(path), .string("one load at a time: send it again")], to: replyTo)
                    continue
                }
                loadedThisTick = true
                guard canLoad else {
                    warn(m, Self.cannotLoad)
                    server.send("/sampler/error", [.string(path), .string(Self.cannotLoad)], to: replyTo)
                    continue
                }
                startLoad(PendingLoad(path: path, replyTo: replyTo, at: at, when: when, known: loaded.shareableKeys,
                                      knownHeads: loaded.shareableHeadKeys),
                          engine: engine, sampleRate: sampleRate)
            case ("/sampler/note", let types) where ["ii", "iii"].contains(types):
                guard let note = m.arguments[0].number, let velocity = m.arguments[1].number, (0...127).contains(note),
                      (0...127).contains(velocity), let channel = Self.channel(m, at: 2) else {
                    warn(m, "expected a note (0 to 127), a velocity (0 to 127; 0 is a note-off) and a channel (1 to 16)")
                    continue
                }
                for command in loaded.noteCommands(note: Int(note), velocity: Int(velocity), channel: channel, kit: kit, at: at) {
                    _ = engine.send(command)
                }
                log("osc: /sampler/note \(Int(note)) \(Int(velocity)) \(when): at frame \(at)")
            case ("/sampler/cc", let types) where ["ii", "if", "id", "iii", "ifi", "idi"].contains(types):
                guard let number = m.arguments[0].number, (0...127).contains(number), let raw = m.arguments[1].number,
                      let value = Self.controllerValue(m.arguments[1], raw), let channel = Self.channel(m, at: 2) else {
                    warn(m, "expected a controller (0 to 127), a value (0 to 127, or 0 to 1 as a float) and a channel (1 to 16)")
                    continue
                }
                _ = engine.send(.controller(channel: channel, number: Int(number), value: value, at: at))
                log("osc: /sampler/cc \(Int(number)) \(formatNumber(raw)) \(when): at frame \(at)")
            case ("/sampler/bend", let types) where ["i", "f", "d", "ii", "fi", "di"].contains(types):
                guard let raw = m.arguments[0].number, raw.isFinite, let channel = Self.channel(m, at: 1) else {
                    warn(m, "expected a bend (-8192 to 8191, or -1 to 1 as a float) and a channel (1 to 16)")
                    continue
                }
                var bend: Double
                if case .int = m.arguments[0] { bend = raw >= 0 ? raw / 8191 : raw / 8192 } else { bend = raw }
                guard (-1...1).contains(bend) else { warn(m, "bend out of range (-8192 to 8191, or -1 to 1)"); continue }
                _ = engine.send(.channelMessage(Command.ChannelMessage.pitchBend, channel: channel, value: Float((bend + 1) / 2), at: at))
                log("osc: /sampler/bend \(formatNumber(raw)) \(when): at frame \(at)")
            case ("/sampler/aftertouch", let types) where ["i", "f", "d", "ii", "fi", "di"].contains(types),
                 ("/sampler/polyaftertouch", let types) where ["ii", "if", "id", "iii", "ifi", "idi"].contains(types):
                let poly = m.path == "/sampler/polyaftertouch"
                let note = poly ? m.arguments[0].number ?? -1 : 0
                let k = poly ? 1 : 0
                guard (0...127).contains(note), let raw = m.arguments[k].number, let value = Self.controllerValue(m.arguments[k], raw),
                      let channel = Self.channel(m, at: k + 1) else {
                    warn(m, "expected \(poly ? "a note (0 to 127), " : "")a pressure (0 to 127, or 0 to 1 as a float) and a channel (1 to 16)")
                    continue
                }
                _ = engine.send(.channelMessage(poly ? Command.ChannelMessage.polyPressure : Command.ChannelMessage.channelPressure,
                                                channel: channel, value: value, note: Int(note), at: at))
                log("osc: \(m.path) \(formatNumber(raw)) \(when): at frame \(at)")
            case ("/sampler/stop", ""):
                _ = engine.send(Command(kind: .stopAll, player: 0, frame: at))
                log("osc: /sampler/stop \(when): at frame \(at)")
            default:
                warn(m, "unknown message")
            }
        }
    }

    /// The channel (1…16) in argument `index` of `m`, 1 when it has none; nil when out of range.
    static func channel(_ m: OSCMessage, at index: Int) -> Int? {
        guard m.arguments.count > index else { return 1 }
        guard let c = m.arguments[index].number, (1...16).contains(c) else { return nil }
        return Int(c)
    }

    /// A controller value: an integer 0…127, or a float 0…1; nil out of range.
    static func controllerValue(_ argument: OSCArgument, _ raw: Double) -> Float? {
        guard raw.isFinite else { return nil }
        if case .int = argument { return (0...127).contains(raw) ? Float(raw) / 127 : nil }
        return (0...1).contains(raw) ? Float(raw) : nil
    }

    /// A load asked for by a message: read and decoded on a thread of its own while the old
    /// instruments play on, then swapped in by the control thread (`serviceLoads`). A new load
    /// cancels the one in flight: its files not begun are left, and its sender is told.
    private final class PendingLoad: Sendable {
        let path: String
        let replyTo: String
        /// The frame the message asked for, and how it was placed (for the log line).
        let at: Frame
        let when: String
        /// The sounds of the kit it replaces, with their files' stamps (not decoded again while
        /// the files are unchanged).
        let known: [String: LoadedPatch.FileStamp?]
        let knownHeads: [String: LoadedPatch.KnownHead]
        let control = LoadControl()
        let started = Date()
        private let finished = DispatchSemaphore(value: 0)
        private let outcome = Locked<Result<(LoadedPatch.Prepared, notes: Int), SamplerError>?>(nil)
        private let reported = Locked(0.0)

        init(path: String, replyTo: String, at: Frame, when: String, known: [String: LoadedPatch.FileStamp?],
             knownHeads: [String: LoadedPatch.KnownHead]) {
            self.known = known
            self.knownHeads = knownHeads
            self.path = path
            self.replyTo = replyTo
            self.at = at
            self.when = when
        }

        var result: Result<(LoadedPatch.Prepared, notes: Int), SamplerError>? { outcome.withLock { $0 } }

        func run(root: String?, maxPlayers: Int, sampleRate: Double, streaming: PatchStreamingOptions?, before: (@Sendable (String) -> Void)?) {
            let path = path, control = control, outcome = outcome, finished = finished, known = known, knownHeads = knownHeads
            Thread.detachNewThread {
                before?(path)
                let result = Result<(LoadedPatch.Prepared, notes: Int), SamplerError> { () throws(SamplerError) in
                    do { return try PatchOSC.prepareLoad(path, root: root, maxPlayers: maxPlayers, sampleRate: sampleRate, streaming: streaming,
                                                         control: control, known: known, knownHeads: knownHeads) } catch {
                        throw (error as? SamplerError) ?? SamplerError("\(error)")
                    }
                }
                outcome.withLock { $0 = result }
                finished.signal()
            }
        }

        /// Blocks until its thread is done (it signals once: one waiter).
        func waitUntilDone() { finished.wait() }

        /// Whether a progress reply is due: half a second after the start, then every half second.
        func progressDue() -> Bool {
            let elapsed = Date().timeIntervalSince(started)
            return reported.withLock { last in
                guard elapsed >= last + 0.5 else { return false }
                last = elapsed
                return true
            }
        }
    }

    /// Starts `load` on a thread of its own, or queues it behind the one whose thread runs
    /// (which it cancels); a load queued before it is cancelled. Control thread.
    private func startLoad(_ load: PendingLoad, engine: Engine, sampleRate: Double) {
        for earlier in [loading, nextLoad].compactMap({ $0 }) where !earlier.control.isCancelled {
            earlier.control.cancel()
            server.send("/sampler/error", [.string(earlier.path), .string("\(earlier.path): cancelled by a load of \(load.path)")], to: earlier.replyTo)
            log("osc: /sampler/load \(earlier.path): cancelled by a load of \(load.path)")
        }
        if loading == nil {
            loading = load
            load.run(root: root, maxPlayers: engine.configuration.maxPlayers, sampleRate: sampleRate, streaming: streaming(on: engine),
                     before: beforeLoading)
        } else {
            nextLoad = load
        }
    }

    /// A finished load swapped in (on the frame its message asked for, or as soon as possible
    /// when that has passed) and answered; a running one's progress replied every half second
    /// (`/sampler/loading ,sii path files-decoded files`). Control thread, each tick.
    private func serviceLoads(kit programKit: Patch, loaded programLoaded: LoadedPatch, engine: Engine, sampleRate: Double) {
        retiring.removeAll { engine.renderedFrame > $0.until }
        guard let load = loading else { return }
        guard let result = load.result else {
            if !load.control.isCancelled, load.progressDue() {
                let (done, total) = load.control.progress
                server.send("/sampler/loading", [.string(load.path), .int(Int32(clamping: done)), .int(Int32(clamping: total))], to: load.replyTo)
            }
            return
        }
        if !load.control.isCancelled {
            // The previous swap not yet taken by the render thread: the next tick.
            if !engine.instrumentsReplaced { return }
            do {
                let (prepared, notes) = try result.get()
                if notes > 0 { log("osc: \(load.path): \(notes) note(s) on the import (`sampler validate \(load.path)` lists them)") }
                let period = max(1, engine.renderedFrame - engine.lastPeriodStart)
                let at = max(load.at, engine.renderedFrame + 2 * period)
                let count = try swapIn(prepared, path: load.path, replacing: replaced?.loaded ?? programLoaded, engine: engine, at: at)
                server.send("/sampler/loaded", [.string(load.path), .int(Int32(count))], to: load.replyTo)
                let heads = replaced?.loaded.streamsTails == true ? ", its samples' heads in memory and their tails streamed" : ""
                log("osc: /sampler/load \(load.path) \(at == load.at ? load.when : "when loaded"): \(count) instruments from frame \(at)"
                    + String(format: " (loaded in %.2f s", Date().timeIntervalSince(load.started)) + heads + ")")
            } catch {
                warnings.line("osc: /sampler/load ,s: \(error)")
                server.send("/sampler/error", [.string(load.path), .string("\(error)")], to: load.replyTo)
            }
        }
        loading = nil
        if let next = nextLoad {
            nextLoad = nil
            loading = next
            next.run(root: root, maxPlayers: engine.configuration.maxPlayers, sampleRate: sampleRate, streaming: streaming(on: engine),
                     before: beforeLoading)
        }
    }

    /// Waits for the loads asked for so far and swaps them in, as ticks would (the fuzz
    /// target's, which has no ticks); stops at one that waits for the render thread to take
    /// the previous swap. Control thread.
    package func finishLoads(kit: Patch, loaded: LoadedPatch, engine: Engine, sampleRate: Double) {
        while let load = loading {
            if load.result == nil { load.waitUntilDone() }
            serviceLoads(kit: kit, loaded: loaded, engine: engine, sampleRate: sampleRate)
            if loading === load { return }
        }
    }

    /// `load` before the engine renders (its instruments swapped in on the first frame).
    func loadAtStart(_ path: String, replacing old: LoadedPatch, engine: Engine, sampleRate: Double) throws -> Int {
        try load(path, replacing: old, engine: engine, sampleRate: sampleRate, at: 0)
    }

    /// Loads the patch (or `.sfz` file) at `path` on this thread and swaps its instruments in on
    /// frame `at`; returns its instrument count (`/sampler/load` loads on a thread of its own:
    /// `startLoad`).
    private func load(_ path: String, replacing old: LoadedPatch, engine: Engine, sampleRate: Double, at: Frame) throws -> Int {
        guard canLoad else { throw SamplerError(Self.cannotLoad) }
        let (prepared, notes) = try Self.prepareLoad(path, root: root, maxPlayers: engine.configuration.maxPlayers,
                                                     sampleRate: sampleRate, streaming: streaming(on: engine), control: nil,
                                                     known: old.shareableKeys, knownHeads: old.shareableHeadKeys)
        if notes > 0 { log("osc: \(path): \(notes) note(s) on the import (`sampler validate \(path)` lists them)") }
        return try swapIn(prepared, path: path, replacing: old, engine: engine, at: at)
    }

    private static let cannotLoad = "load works on a program that plays what OSC triggers (start sampler play with a patch without patterns)"

    /// The first half of a load, on any thread: the patch read (or the SFZ file imported), held
    /// to the root and to the engine's players, and its samples decoded into memory, or with
    /// `streaming` their heads where the kit is large enough to stream its tails (a patch whose
    /// instruments stream through rings of their own is refused). Returns the import's note
    /// count too.
    private static func prepareLoad(_ path: String, root: String?, maxPlayers: Int, sampleRate: Double, streaming: PatchStreamingOptions?,
                                    control: LoadControl?, known: [String: LoadedPatch.FileStamp?],
                                    knownHeads: [String: LoadedPatch.KnownHead] = [:]) throws -> (LoadedPatch.Prepared, notes: Int) {
        let kit: Patch
        var notes = 0
        if path.lowercased().hasSuffix(".sfz") {
            (kit, notes) = try Self.importSFZ(path, root: root)
        } else {
            kit = try Self.loadPatch(path, root: root)
        }
        // Every sample it names is held to the root as the patch is: one answer for a sample
        // outside it, whether a file is there or not.
        if let root {
            for sample in kit.instruments.flatMap({ $0.layers.flatMap(\.samples) }) where sample.data == nil {
                do { try FileGate.checkUnderRoot(root, sample.resolvedPath) } catch {
                    throw SamplerError("\(path): a sample it names is not under \(root)")
                }
            }
        }
        let voices = kit.instruments.reduce(0) { $0 + $1.voices }
        guard voices <= maxPlayers else {
            throw SamplerError("\(path): \(voices) voices in all; this sampler has \(maxPlayers) players (start it with the patch)")
        }
        if let i = kit.instruments.firstIndex(where: { $0.layers.contains { $0.samples.contains { $0.loading == .stream } } }) {
            throw SamplerError("\(path): instrument \(kit.instruments[i].id) streams from disk (\"stream\": true), which a load over OSC does not do")
        }
        var options = streaming ?? PatchStreamingOptions()
        options.threshold = nil
        do {
            return (try LoadedPatch.prepare(kit, sampleRate: sampleRate, streaming: options, headsAllowed: streaming != nil, root: root,
                                            control: control, known: known, knownHeads: knownHeads), notes)
        } catch {
            if control?.isCancelled == true { throw SamplerError("\(path): the load was cancelled") }
            throw SamplerError("\(path): a sound file it names cannot be loaded (`sampler validate \(path)` says which)")
        }
    }

    /// The patch at `path`, checked before it is read whole: under the root, a regular file
    /// within a patch's size, beginning as a JSON object does.
    private static func loadPatch(_ path: String, root: String?) throws -> Patch {
        do { return try PatchLoader.load(path: path, root: root, objectsOnly: true) } catch {
            // A message's sender may not be able to read the file: say what kind of problem it
            // is, never what the file holds (`sampler validate` shows that to whoever may read it).
            if error.path.isEmpty && error.message.hasPrefix("cannot read the file") || error.message.hasPrefix("the file is")
                || error.message.hasPrefix("not a patch") {
                throw SamplerError("\(error)")
            }
            throw SamplerError("\(path): not a valid patch (`sampler validate \(path)` says where and why)")
        }
    }

    /// The SFZ instrument at `path`, imported as `sampler play --patch` imports it, except that
    /// it, its includes and its samples are read only under the root: a sample whose directory
    /// or file is not there (or leads out of it) refuses the kit with one answer, before
    /// anything outside is looked at. Its errors name the kind of problem, never what the files
    /// hold; the import's notes are counted, not quoted.
    private static func importSFZ(_ path: String, root: String?) throws -> (Patch, notes: Int) {
        let bytes: [UInt8]
        do { bytes = try FileGate.read(path, limit: SFZReader.maximumFileSize, root: root) } catch .tooLarge(let size) {
            throw SamplerError("\(path): the file is \(size >> 20) MB; an SFZ file is at most \(SFZReader.maximumFileSize >> 20) MB")
        } catch {
            throw SamplerError("\(path): cannot read the file (\(error.reason))")
        }
        do {
            let imported = try SFZImporter.importSFZ(bytes: bytes, path: path, root: root)
            return (imported.kit, imported.notes.count)
        } catch let error as SFZImporter.SampleOutsideRoot {
            throw SamplerError("\(path): \(error)")
        } catch {
            throw SamplerError("\(path): not a valid SFZ instrument (`sampler validate \(path)` says where and why)")
        }
    }

    /// The second half of a load, on the control thread: `prepared`'s sounds registered and its
    /// instruments swapped in on frame `at`, where every voice of the old ones stops; returns
    /// its instrument count.
    private func swapIn(_ prepared: LoadedPatch.Prepared, path: String, replacing old: LoadedPatch, engine: Engine,
                        at: Frame) throws -> Int {
        guard engine.instrumentsReplaced else { throw SamplerError("the previous load has not been swapped in yet: send it again") }
        let kit = prepared.kit
        let loaded: LoadedPatch
        do { loaded = try LoadedPatch(prepared: prepared, engine: engine, outputs: outputs, sharing: old) } catch let error as LoadedPatch.TailsError {
            throw SamplerError("\(error)")
        } catch {
            throw SamplerError("\(path): a sound file it names cannot be loaded (`sampler validate \(path)` says which)")
        }
        guard engine.replaceInstruments(loaded.definitions, controllers: kit.controllers, at: at) else {
            for id in loaded.soundIDs { engine.unregister(id) }
            throw SamplerError("the command queue is full: send it again")
        }
        _ = engine.send(Command(kind: .stopAll, player: 0, frame: at))
        // The old sounds go once the render thread confirms that nothing refers to them: its
        // instruments until the swap, the voices the stop fades out (`Engine.unregister`).
        // (A sound the new kit shares is registered by it too: it stays.)
        for id in old.soundIDs { engine.unregister(id) }
        // The kit replaced plays until `at` and its voices fade after it: it (and the sources
        // of its tails) goes a second later.
        if let previous = replaced?.loaded { retiring.append((previous, at + Frame(prepared.sampleRate))) }
        // Without periods rendered (or loads many times a second), the oldest go early: a
        // voice of theirs still playing ends where its tail was read, counted.
        if retiring.count > Self.retiringLimit { retiring.removeFirst(retiring.count - Self.retiringLimit) }
        replaced = (kit, loaded)
        if !loaded.unroutedOutputs.isEmpty {
            log("osc: \(path): outputs \(loaded.unroutedOutputs.joined(separator: ", ")) are not this client's: their instruments play on the main mix")
        }
        loadedPath = path
        return kit.instruments.count
    }

    /// The instrument an argument names: by id, or by index.
    private func instrumentIndex(_ argument: OSCArgument, kit: Patch) -> Int? {
        let index: Int?
        switch argument {
        case .string(let id): index = kit.instruments.firstIndex { $0.id == id }
        case let a: index = a.number.flatMap { $0.isFinite && abs($0) < 1e9 ? Int($0) : nil }
        }
        return index.flatMap { kit.instruments.indices.contains($0) ? $0 : nil }
    }

    private func warn(_ m: OSCMessage, _ what: String) {
        warnings.refused(m, what)
    }
}
