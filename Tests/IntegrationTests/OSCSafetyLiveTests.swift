import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// The OSC ports are safe by default (issue 35): loopback unless asked, files through the gate,
/// timetags bounded. Messages come from `sampler-osc-send` (liblo only).
@Suite(.serialized) struct OSCSafetyLiveTests {
    let osc = OSCLiveTests()

    /// The local address of the UDP socket on `port`, as /proc/net/udp shows it ("0100007F" is
    /// 127.0.0.1, "00000000" every interface), or nil.
    func udpAddress(port: String) -> String? {
        guard let table = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8), let p = Int(port) else { return nil }
        let hexPort = String(format: "%04X", p)
        for line in table.split(separator: "\n").dropFirst() {
            let local = line.split(separator: " ", omittingEmptySubsequences: true)[1].split(separator: ":")
            if local.count == 2 && local[1] == hexPort { return String(local[0]) }
        }
        return nil
    }

    @Test func theOSCPortListensOnLoopbackUnlessANetworkIsAskedFor() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        for (extra, expected) in [([String](), "0100007F"), (["--osc-host", "0.0.0.0"], "00000000")] {
            let (process, out, port) = try osc.startWithOSC(["metronome", "120", "--osc-port", "0", "--duration", "20", "--server", server.name,
                                                             "--name", "osclisten", "--no-connect", "--quiet"] + extra)
            defer { if process.isRunning { process.terminate() } }
            _ = out
            #expect(udpAddress(port: port) == expected, "--osc-port with \(extra): /proc/net/udp shows \(udpAddress(port: port) ?? "nothing")")
            #expect(try osc.send(["--port", port, "--replies", "1", "/klick/ping"]).contains("reply /klick/pong , "))
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// `/klick/map/load_file` reads through the gate: a FIFO is refused at once (the metronome
    /// still answers), a file that is not a tempo map is named by its line, never quoted, and a
    /// file outside --osc-root is refused.
    @Test func aMapLoadedOverOSCIsGatedAndNeverQuoted() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let dir = try temporaryDirectory()
        let root = dir.appendingPathComponent("maps")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let secret = root.appendingPathComponent("secret.txt").path
        try "x:0:0:root:/root:/bin/bash\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let outside = dir.appendingPathComponent("outside.map").path
        try "8 120\n".write(toFile: outside, atomically: true, encoding: .utf8)
        let fifo = root.appendingPathComponent("fifo.map").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let (process, out, port) = try osc.startWithOSC(["metronome", "120", "--osc-port", "0", "--osc-root", root.path, "--duration", "20",
                                                         "--server", server.name, "--name", "oscgate", "--no-connect", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        let started = Date()
        let fifoReply = try osc.send(["--port", port, "--replies", "1", "/klick/map/load_file", "s:\(fifo)"])
        #expect(fifoReply.contains { $0.contains("/klick/error") && $0.contains("FIFO") }, "\(fifoReply)")
        #expect(Date().timeIntervalSince(started) < 10)
        let secretReply = try osc.send(["--port", port, "--replies", "1", "/klick/map/load_file", "s:\(secret)"])
        #expect(secretReply.contains { $0.contains("/klick/error") && $0.contains("secret.txt:1:") }, "\(secretReply)")
        let outsideReply = try osc.send(["--port", port, "--replies", "1", "/klick/map/load_file", "s:\(outside)"])
        #expect(outsideReply.contains { $0.contains("/klick/error") && $0.contains("not under") }, "\(outsideReply)")
        #expect(try osc.send(["--port", port, "--replies", "1", "/klick/ping"]).contains("reply /klick/pong , "))
        process.terminate()
        process.waitUntilExit()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        for text in [output] + secretReply where text.contains("root:/root") || text.contains("/bin/bash") {
            Issue.record("the file's contents were quoted: \(text)")
        }
    }

    /// A timetag two hours ahead is refused with an error reply; the program plays on.
    @Test func aTimetagHoursAheadIsRefusedWithAnErrorReply() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let kit = try osc.clickKit(#"[{"id": "kick", "layers": [{"samples": ["click.wav"]}]}]"#)
        let (process, out, port) = try osc.startWithOSC(["play", "--patch", kit.path, "--osc-port", "0", "--duration", "20",
                                                         "--server", server.name, "--name", "oschorizon", "--no-connect", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        let reply = try osc.send(["--port", port, "--in-ms", "7200000", "--replies", "1", "/sampler/trigger", "s:kick"])
        #expect(reply.contains { $0.hasPrefix("reply /sampler/error ,ss /sampler/trigger") && $0.contains("one hour") }, "\(reply)")
        #expect(try osc.send(["--port", port, "--replies", "1", "/sampler/ping"]).contains("reply /sampler/pong , "))
        process.terminate()
        process.waitUntilExit()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!output.contains("osc: /sampler/trigger kick"), "\(output)")
    }

    @Test func aBadOSCHostOrRootIsOneLine() throws {
        let sampler = productsDirectory.appendingPathComponent("sampler")
        let host = try BackgroundProgram(sampler, ["metronome", "120", "--osc-port", "0", "--osc-host", "example.com"], timeout: 10).finish()
        #expect(host.status == 64)
        #expect(host.output.contains("--osc-host must be a numeric IPv4 or IPv6 address"), "\(host.output)")
        let root = try BackgroundProgram(sampler, ["play", "--osc-port", "0", "--osc-root", "/nonexistent-dir"], timeout: 10).finish()
        #expect(root.status == 64)
        #expect(root.output.contains("--osc-root must be an existing directory"), "\(root.output)")
        let alone = try BackgroundProgram(sampler, ["metronome", "120", "--osc-host", "0.0.0.0"], timeout: 10).finish()
        #expect(alone.output.contains("--osc-host and --osc-root need --osc-port"), "\(alone.output)")
    }
}
