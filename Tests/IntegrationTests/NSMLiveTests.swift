import Foundation
import Glibc
import JACKTestSupport
import Sync
import Synchronization
import Testing

/// A session manager played by the test (NSM API 1.1 over the project's OSC server, on
/// 127.0.0.1): it records what clients send and sends them what a real server would.
final class FakeSessionManager {
    let osc: OSCServer
    private var inbox: [OSCMessage] = []

    init() throws {
        osc = try OSCServer(host: "127.0.0.1", port: "0", hostNow: { 0 })
    }

    deinit { osc.close() }

    /// What a client gets as NSM_URL.
    var url: String { "osc.udp://127.0.0.1:\(osc.port)/" }

    /// The first message to `path` (whose first argument is `first`, when given) received within
    /// `timeout` seconds; the others stay for later calls.
    func next(_ path: String, first: String? = nil, timeout: Double = 15) -> OSCMessage? {
        var found: OSCMessage?
        waitUntil(timeout: timeout) {
            inbox += osc.take()
            guard let i = inbox.firstIndex(where: { $0.path == path && (first == nil || $0.arguments.first?.text == first) }) else {
                return false
            }
            found = inbox.remove(at: i)
            return true
        }
        return found
    }

    /// Whether a message to `path` has come (without waiting).
    func hasReceived(_ path: String) -> Bool {
        inbox += osc.take()
        return inbox.contains { $0.path == path }
    }

    func send(_ path: String, _ arguments: [OSCArgument] = [], to url: String) {
        osc.send(path, arguments, to: url)
    }
}

/// `sampler` started as an NSM client (NSM_URL set, on a private server), its output read line
/// by line. Terminated after `timeout` seconds at the latest (so a read never hangs the test).
final class SessionClientProcess {
    let process = Process()
    private let out = Pipe()
    /// The program's standard input (for `--keys-from-stdin`).
    let input = Pipe()
    private(set) var lines: [String] = []

    /// With `script`, the client is started through a bash script of that path whose body is
    /// `exec -a "$(basename "$0")" sampler ARGUMENTS` (as docs/nsm.md has nsmd start it).
    init(_ arguments: [String], manager: FakeSessionManager, server: JACKServer, timeout: Double = 90, script: URL? = nil) throws {
        if let script {
            let sampler = productsDirectory.appendingPathComponent("sampler").path
            try ("#!/bin/bash\nexec -a \"$(basename \"$0\")\" '\(sampler)' " + arguments.map { "'\($0)'" }.joined(separator: " ") + " \"$@\"\n")
                .write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
            process.executableURL = script
            process.arguments = []
        } else {
            process.executableURL = productsDirectory.appendingPathComponent("sampler")
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(["NSM_URL": manager.url, "JACK_DEFAULT_SERVER": server.name]) { $1 }
        process.standardOutput = out
        process.standardError = out
        process.standardInput = input
        try process.run()
        let p = process
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if p.isRunning { p.terminate() } }
    }

    deinit { if process.isRunning { process.terminate() } }

    var pid: Int32 { process.processIdentifier }

    /// Reads output until a line satisfies `match`; nil at the end of the output.
    func line(where match: (String) -> Bool) -> String? {
        while let line = out.fileHandleForReading.readLineUnbuffered() {
            lines.append(line)
            if match(line) { return line }
        }
        return nil
    }

    /// Sends SIGTERM and waits up to `timeout` seconds for the exit; returns how long it took,
    /// or nil when the process was still running.
    func terminate(timeout: Double) -> Double? {
        let started = Date()
        kill(process.processIdentifier, SIGTERM)
        guard waitUntil(timeout: timeout, { !process.isRunning }) else { return nil }
        return Date().timeIntervalSince(started)
    }

    /// Everything left of the output once the process has ended.
    func rest() -> String {
        process.waitUntilExit()
        let tail = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (lines + [tail]).joined(separator: "\n")
    }
}

/// `sampler play` and `sampler metronome` as NSM clients (API 1.1) of a session manager the test
/// plays: the announce's arguments, open with the client id as JACK name, save, dirty and clean,
/// a reopen that restores the state, SIGTERM, and a bad state file.
@Suite(.serialized) struct NSMLiveTests {
    /// The client's announce, checked, answered; then `/nsm/client/open` sent. Returns the
    /// client's reply address.
    func announceAndOpen(_ client: SessionClientProcess, manager: FakeSessionManager, name: String, path: String,
                         id: String, executable: String = "sampler") throws -> String {
        let announce = try #require(manager.next("/nsm/server/announce"), "no announce: \(client.lines)")
        #expect(announce.arguments == [.string(name), .string(":dirty:"), .string(executable), .int(1), .int(1), .int(client.pid)],
                "announce \(announce)")
        manager.send("/reply", [.string("/nsm/server/announce"), .string("hello"), .string("test-nsm"), .string(":server-control:")],
                     to: announce.source)
        manager.send("/nsm/client/open", [.string(path), .string("Test session"), .string(id)], to: announce.source)
        return announce.source
    }

    func jackPorts(_ server: JACKServer) throws -> [String] {
        let result = try runTool(URL(fileURLWithPath: "/usr/bin/jack_lsp"), [], environment: ["JACK_DEFAULT_SERVER": server.name], timeout: 10)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    func state(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path + ".json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func options(_ path: String) throws -> [String: Any] {
        try #require(try state(path)["options"] as? [String: Any])
    }

    /// Save: the reply comes after the file is written, and says so.
    func save(_ manager: FakeSessionManager, client: String) throws {
        manager.send("/nsm/client/save", to: client)
        let reply = try #require(manager.next("/reply", first: "/nsm/client/save"), "no reply to save")
        #expect(reply.arguments.count == 2)
    }

    @Test func theMetronomeOpensSavesReportsDirtyAndRestoresItsTempo() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let path = try temporaryDirectory().appendingPathComponent("sampler.nMETRO").path
        let arguments = ["metronome", "120", "--meter", "3/4", "--osc-port", "0", "--no-connect", "--quiet"]

        let first = try SessionClientProcess(arguments, manager: manager, server: server)
        let address = try announceAndOpen(first, manager: manager, name: "sampler metronome", path: path, id: "sampler.nMETRO")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(first.lines)")
        #expect(try jackPorts(server).contains("sampler.nMETRO:out_L"), "the JACK client is not named by the client id")
        let oscLine = try #require(first.line { $0.hasPrefix("OSC:") })
        let port = try #require(oscLine.range(of: #"port \d+"#, options: .regularExpression).map { String(oscLine[$0].dropFirst(5)) })

        try save(manager, client: address)
        #expect(try state(path)["command"] as? String == "metronome")
        #expect(try options(path)["tempo"] as? String == "120")
        #expect(try options(path)["meter"] as? String == "3/4")
        #expect(!manager.hasReceived("/nsm/client/is_dirty"), "dirty before anything changed")

        // A tempo over klick's OSC interface is something a save keeps: dirty, then clean once saved.
        manager.send("/klick/simple/set_tempo", [.float(96)], to: "osc.udp://127.0.0.1:\(port)/")
        #expect(manager.next("/nsm/client/is_dirty") != nil, "no is_dirty after a tempo change")
        try save(manager, client: address)
        #expect(manager.next("/nsm/client/is_clean") != nil, "no is_clean after the save")
        #expect(try options(path)["tempo"] as? String == "96")

        #expect(first.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")
        #expect(first.process.terminationStatus == 0, "\(first.rest())")

        // Started again by the session with the same command line: the saved tempo plays.
        let second = try SessionClientProcess(arguments, manager: manager, server: server)
        _ = try announceAndOpen(second, manager: manager, name: "sampler metronome", path: path, id: "sampler.nMETRO")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "reopen not answered: \(second.lines)")
        let playing = try #require(second.line { $0.hasPrefix("playing ") })
        #expect(playing.contains("96 bpm 3/4"), "\(playing)")
        #expect(second.lines.contains("NSM: restored \(path).json"))
        #expect(second.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")
    }

    /// The tempo keys (here typed into a pipe) change what a save keeps too.
    /// Started by nsmd through a script (docs/nsm.md): it announces the script's name, which is
    /// how nsmd finds the client it launched. A client id whose JACK name another client has is
    /// an error answered to the open, never a client under another name. A map switched to the
    /// simple metronome over OSC is saved as a state a reopen accepts.
    @Test func aScriptsNameIsAnnouncedATakenNameFailsTheOpenAndASwitchedTypeSavesAsItPlays() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let dir = try temporaryDirectory()
        let map = dir.appendingPathComponent("song.map")
        try "intro: 4 3/4 100\nverse: 8 4/4 120\n".write(to: map, atomically: true, encoding: .utf8)
        let path = dir.appendingPathComponent("sampler.nWRAP").path
        let client = try SessionClientProcess(["metronome", "--map", map.path, "--osc-port", "0", "--no-connect", "--quiet"], manager: manager,
                                              server: server, script: dir.appendingPathComponent("sampler-metronome"))
        let address = try announceAndOpen(client, manager: manager, name: "sampler metronome", path: path, id: "sampler.nWRAP",
                                          executable: "sampler-metronome")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(client.lines)")
        let oscLine = try #require(client.line { $0.hasPrefix("OSC:") })
        let port = try #require(oscLine.range(of: #"port \d+"#, options: .regularExpression).map { String(oscLine[$0].dropFirst(5)) })
        // The map's metronome switched to the simple one, then a tempo: saved without the map.
        manager.send("/klick/metro/set_type", [.string("simple")], to: "osc.udp://127.0.0.1:\(port)/")
        manager.send("/klick/simple/set_tempo", [.float(90)], to: "osc.udp://127.0.0.1:\(port)/")
        #expect(manager.next("/nsm/client/is_dirty") != nil)
        try save(manager, client: address)
        #expect(try options(path)["tempo"] as? String == "90")
        let saved = try options(path)
        #expect(saved["map"] is NSNull, "\(saved)")

        // A second client given the same id while the first runs: the open fails, named.
        let twin = try SessionClientProcess(["metronome", "100", "--no-connect", "--quiet"], manager: manager, server: server)
        _ = try announceAndOpen(twin, manager: manager, name: "sampler metronome", path: dir.appendingPathComponent("other").path,
                                id: "sampler.nWRAP")
        let refused = try #require(manager.next("/error", first: "/nsm/client/open"), "the open was not refused: \(twin.lines)")
        #expect("\(refused.arguments)".contains("is taken"), "\(refused)")
        #expect(twin.rest().contains("JACK client name \"sampler.nWRAP\" is taken"))
        #expect(client.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")

        // The saved state reopens: 90 bpm, simple.
        let again = try SessionClientProcess(["metronome", "--map", map.path, "--no-connect"], manager: manager, server: server)
        _ = try announceAndOpen(again, manager: manager, name: "sampler metronome", path: path, id: "sampler.nWRAP")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "the saved state was refused: \(again.lines)")
        #expect(again.terminate(timeout: 3) != nil)
    }

    @Test func aTempoKeyMakesTheMetronomeDirty() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let path = try temporaryDirectory().appendingPathComponent("sampler.nKEYS").path
        let client = try SessionClientProcess(["metronome", "120", "--keys-from-stdin", "--no-connect"], manager: manager, server: server)
        let address = try announceAndOpen(client, manager: manager, name: "sampler metronome", path: path, id: "sampler.nKEYS")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(client.lines)")
        client.input.fileHandleForWriting.write(Data("++".utf8))
        #expect(manager.next("/nsm/client/is_dirty") != nil, "no is_dirty after two + keys")
        try save(manager, client: address)
        #expect(manager.next("/nsm/client/is_clean") != nil, "no is_clean after the save")
        #expect(try options(path)["tempo"] as? String == "122")
        #expect(client.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")
    }

    @Test func thePlayerKeepsItsPatchAndTempoAndTheSessionsOverTheLaunchs() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let path = try temporaryDirectory().appendingPathComponent("sampler.nDRUMS").path
        let patch = packageRoot.appendingPathComponent("Patches/drums.json").path

        let first = try SessionClientProcess(["play", "--patch", patch, "--tempo", "100", "--no-connect", "--quiet"], manager: manager, server: server)
        let address = try announceAndOpen(first, manager: manager, name: "sampler play", path: path, id: "sampler.nDRUMS")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(first.lines)")
        #expect(try jackPorts(server).contains("sampler.nDRUMS:out_R"))
        try save(manager, client: address)
        #expect(try state(path)["command"] as? String == "play")
        #expect(try options(path)["patch"] as? String == patch)
        #expect(try options(path)["tempo"] as? Double == 100)
        #expect(first.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")

        // Launched with another tempo: the session's state wins, and a save keeps it.
        let second = try SessionClientProcess(["play", "--patch", patch, "--tempo", "140", "--no-connect", "--quiet"], manager: manager, server: server)
        let again = try announceAndOpen(second, manager: manager, name: "sampler play", path: path, id: "sampler.nDRUMS")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "reopen not answered: \(second.lines)")
        try save(manager, client: again)
        #expect(try options(path)["tempo"] as? Double == 100)
        #expect(second.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")
    }

    /// A flood on the client's port from another sender (here spoofed saves) never crowds out
    /// the server's messages (issue 52: 0 of 5 saves were answered): the client drops what does
    /// not come from the server as it arrives, and answers every save.
    @Test func aFloodFromElsewhereNeverCrowdsOutTheServer() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let path = try temporaryDirectory().appendingPathComponent("sampler.nFLOOD").path
        let patch = packageRoot.appendingPathComponent("Patches/drums.json").path
        let client = try SessionClientProcess(["play", "--patch", patch, "--no-connect", "--quiet"], manager: manager, server: server)
        let address = try announceAndOpen(client, manager: manager, name: "sampler play", path: path, id: "sampler.nFLOOD")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(client.lines)")
        let (_, port) = try #require(OSCServer.udpEndpoint(address))
        // The flood: /nsm/client/save datagrams from a socket of its own, as fast as it can send.
        let flooding = Atomic<Bool>(true)
        let done = DispatchSemaphore(value: 0)
        let flooder = Thread {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var to = sockaddr_in()
            to.sin_family = sa_family_t(AF_INET)
            to.sin_port = in_port_t(UInt16(port)!).bigEndian
            to.sin_addr.s_addr = inet_addr("127.0.0.1")
            var datagram = Array("/nsm/client/save".utf8) + [0, 0, 0, 0] + Array(",".utf8) + [0, 0, 0]
            datagram.removeLast(datagram.count - 24)
            while flooding.load(ordering: .relaxed) {
                _ = withUnsafePointer(to: &to) { p in
                    p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            close(fd)
            done.signal()
        }
        flooder.start()
        var answered = 0
        for _ in 0..<5 {
            manager.send("/nsm/client/save", to: address)
            if manager.next("/reply", first: "/nsm/client/save", timeout: 5) != nil { answered += 1 }
        }
        flooding.store(false, ordering: .relaxed)
        done.wait()
        #expect(answered == 5, "\(answered) of 5 saves answered under the flood")
        #expect(try options(path)["patch"] as? String == patch)
        #expect(client.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")
    }

    /// A patch loaded over OSC (`/sampler/load`) is what a save keeps.
    @Test func aPatchLoadedOverOSCMakesThePlayerDirty() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let path = try temporaryDirectory().appendingPathComponent("sampler.nLOAD").path
        let instruments = #"[{"id": "kick", "layers": [{"samples": ["click.wav"]}]}]"#
        let first = try OSCLiveTests().clickKit(instruments)
        // The loaded patch has a pattern: in the player it replaced, only OSC plays it.
        let second = try OSCLiveTests().clickKit(#"[{"id": "snare", "layers": [{"samples": ["click.wav"]}]}], "patterns": [{"name": "p", "beatsPerBar": 1, "tracks": {"snare": [100, 0, 0, 0]}}]"#)
        let client = try SessionClientProcess(["play", "--patch", first.path, "--osc-port", "0", "--no-connect", "--quiet"],
                                              manager: manager, server: server)
        let address = try announceAndOpen(client, manager: manager, name: "sampler play", path: path, id: "sampler.nLOAD")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(client.lines)")
        let oscLine = try #require(client.line { $0.hasPrefix("OSC:") })
        let port = try #require(oscLine.range(of: #"port \d+"#, options: .regularExpression).map { String(oscLine[$0].dropFirst(5)) })
        manager.send("/sampler/load", [.string(second.path)], to: "osc.udp://127.0.0.1:\(port)/")
        #expect(manager.next("/sampler/loaded") != nil, "the patch was not loaded")
        #expect(manager.next("/nsm/client/is_dirty") != nil, "no is_dirty after a load")
        try save(manager, client: address)
        #expect(manager.next("/nsm/client/is_clean") != nil, "no is_clean after the save")
        #expect(try options(path)["patch"] as? String == first.path)
        #expect(try options(path)["osc-load"] as? String == second.path)
        #expect(client.terminate(timeout: 3) != nil, "still running 3 s after SIGTERM")

        // Reopened: the launch patch, then the load as the message made it (OSC mode: the
        // loaded patch's instruments, its pattern not playing), and clean.
        let again = try SessionClientProcess(["play", "--patch", first.path, "--osc-port", "0", "--no-connect", "--quiet"],
                                             manager: manager, server: server)
        _ = try announceAndOpen(again, manager: manager, name: "sampler play", path: path, id: "sampler.nLOAD")
        #expect(manager.next("/reply", first: "/nsm/client/open") != nil, "open not answered: \(again.lines)")
        let againLine = try #require(again.line { $0.hasPrefix("OSC:") })
        let againPort = try #require(againLine.range(of: #"port \d+"#, options: .regularExpression).map { String(againLine[$0].dropFirst(5)) })
        #expect(again.line { $0.contains("loaded as /sampler/load did before: 1 instruments") } != nil, "\(again.lines)")
        manager.send("/sampler/query", to: "osc.udp://127.0.0.1:\(againPort)/")
        let instrument = try #require(manager.next("/sampler/instrument"))
        #expect(instrument.arguments == [.int(0), .string("snare")])
        #expect(again.terminate(timeout: 3) != nil)
        #expect(!again.rest().contains("osc: /sampler/trigger"))
    }

    /// Each bad state file is refused to the server (code -9) and named in one line: a value the
    /// command refuses, a value of the wrong type, an option the command does not keep, another
    /// command's state, a file that is not JSON.
    @Test(arguments: [
        (#"{"sampler": "session state", "version": 1, "command": "metronome", "options": {"tempo": "fast"}}"#,
         #"expected a tempo like 120, or START-END/BARS for the speed trainer (80-120/10), got "fast""#),
        (#"{"sampler": "session state", "version": 1, "command": "metronome", "options": {"subdivide": "two"}}"#,
         #"options.subdivide: expected a whole number, got "two""#),
        (#"{"sampler": "session state", "version": 1, "command": "metronome", "options": {"colour": "red"}}"#,
         "options.colour: not an option `sampler metronome` keeps (it keeps accent-sound, accents, bars, beat-unit, count-in, label, map, meter, multiply, pan, sound, subdivide, tempo, timbre, volume)"),
        (#"{"sampler": "session state", "version": 1, "command": "play", "options": {}}"#,
         "holds the state of `sampler play`, not of `sampler metronome`"),
        ("tempo 120", "not a sampler session state (invalid JSON"),
    ])
    func aBadStateFileIsRefusedToTheServerAndNamed(file: String, message: String) throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let path = try temporaryDirectory().appendingPathComponent("sampler.nBAD").path
        try file.write(toFile: path + ".json", atomically: true, encoding: .utf8)
        let client = try SessionClientProcess(["metronome", "120", "--no-connect", "--quiet"], manager: manager, server: server)
        _ = try announceAndOpen(client, manager: manager, name: "sampler metronome", path: path, id: "sampler.nBAD")
        let error = try #require(manager.next("/error", first: "/nsm/client/open"), "no error for open: \(client.lines)")
        #expect(error.arguments.count == 3 && error.arguments[1] == .int(-9), "\(error)")
        #expect(error.arguments.last?.text?.hasPrefix("\(path).json: \(message)") == true, "\(error)")
        let output = client.rest()
        #expect(client.process.terminationStatus == 1)
        let errors = output.split(separator: "\n").filter { $0.hasPrefix("sampler: error:") }
        #expect(errors.count == 1 && errors[0].hasPrefix("sampler: error: \(path).json: \(message)"), "\(output)")
    }

    @Test func aRefusedAnnounceEndsTheClientWithTheServersReason() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let client = try SessionClientProcess(["play", "--no-connect", "--quiet"], manager: manager, server: server)
        let announce = try #require(manager.next("/nsm/server/announce"))
        manager.send("/error", [.string("/nsm/server/announce"), .int(-2), .string("incompatible API")], to: announce.source)
        let output = client.rest()
        #expect(client.process.terminationStatus == 1)
        #expect(output.contains("sampler: error: NSM_URL \(manager.url): the session manager refused the client (error -2: incompatible API)"), "\(output)")
    }

    @Test func sigtermWhileWaitingForOpenEndsAtOnce() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let manager = try FakeSessionManager()
        let client = try SessionClientProcess(["metronome", "--no-connect", "--quiet"], manager: manager, server: server)
        #expect(manager.next("/nsm/server/announce") != nil)
        #expect(client.terminate(timeout: 2) != nil, "still running 2 s after SIGTERM")
        #expect(client.process.terminationStatus == 0)
    }
}
