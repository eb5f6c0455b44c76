import Foundation
import Glibc
import JACKTestSupport
import Locking
import SoundFiles
import Sync
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

    /// From another host: `sampler` in a network namespace of its own, a sender in a second one
    /// joined to it by a veth pair (10.77.0.1 here, 10.77.0.2 there). By default the port
    /// answers on loopback and not from the other host; with `--osc-host 0.0.0.0` the other
    /// host is answered too (the same path, so the first "no" is the port's, not the network's).
    @Test func theOSCPortIsNotReachableFromAnotherHostUnlessAskedFor() throws {
        let here = try LinkNamespace()
        defer { here.stop() }
        let other = try here.joined(address: "10.77.0.1/24", peerAddress: "10.77.0.2/24")
        defer { other.stop() }
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        /// Whether a ping from inside `namespace` to `host` is answered within `timeout` seconds.
        func pinged(from namespace: LinkNamespace, host: String, port: String, timeout: Double) throws -> Bool {
            let (tool, args) = namespace.command(productsDirectory.appendingPathComponent("sampler-osc-send"),
                                                 ["--host", host, "--port", port, "--replies", "1", "--timeout", "\(timeout)", "/klick/ping"])
            let result = try runTool(tool, args, timeout: timeout + 10)
            return result.status == 0 && result.stdout.contains("reply /klick/pong")
        }
        for (extra, reachable) in [([String](), false), (["--osc-host", "0.0.0.0"], true)] {
            let (process, _, port) = try osc.startWithOSC(["metronome", "120", "--osc-port", "0", "--duration", "20", "--server", server.name,
                                                           "--name", "oscremote", "--no-connect", "--quiet"] + extra, namespace: here)
            defer { if process.isRunning { process.terminate() } }
            #expect(try pinged(from: here, host: "127.0.0.1", port: port, timeout: 5), "\(extra): not answered on loopback")
            // Unanswered is a wait: one second, after the answered pings above came in milliseconds.
            #expect(try pinged(from: other, host: "10.77.0.1", port: port, timeout: reachable ? 5 : 1) == reachable,
                    "--osc-port with \(extra): another host's ping was \(reachable ? "not " : "")answered")
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

    /// A patch under --osc-root whose samples lie outside it (`../x.wav`, an absolute path) is
    /// refused with one text whether the sample exists or not (issue 52: it loaded); one whose
    /// samples are under the root loads.
    @Test func aLoadedPatchsSamplesAreHeldToTheRoot() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let dir = try temporaryDirectory()
        let root = dir.appendingPathComponent("patches")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try WAVFileWriter.write(path: dir.appendingPathComponent("outside.wav").path, channels: [[0.5, 0.25]], sampleRate: 48000)
        try WAVFileWriter.write(path: root.appendingPathComponent("inside.wav").path, channels: [[0.5, 0.25]], sampleRate: 48000)
        func patch(_ name: String, _ sample: String) throws -> String {
            let path = root.appendingPathComponent(name).path
            try #"{"version": 2, "tempo": 120, "instruments": [{"id": "k", "layers": [{"samples": ["\#(sample)"]}]}]}"#
                .write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let up = try patch("up.json", "../outside.wav"), absolute = try patch("abs.json", dir.appendingPathComponent("outside.wav").path)
        let missing = try patch("missing.json", "../gone.wav"), good = try patch("good.json", "inside.wav")
        let (process, _, port) = try osc.startWithOSC(["play", "--patch", good, "--osc-port", "0", "--osc-root", root.path, "--duration", "20",
                                                       "--server", server.name, "--name", "oscsamples", "--no-connect", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        for path in [up, absolute, missing] {
            let reply = try osc.send(["--port", port, "--replies", "1", "/sampler/load", "s:\(path)"])
            #expect(reply.contains("reply /sampler/error ,ss \(path) \(path): a sample it names is not under \(root.path)"), "\(reply)")
        }
        let loaded = try osc.send(["--port", port, "--replies", "1", "/sampler/load", "s:\(good)"])
        #expect(loaded.contains("reply /sampler/loaded ,si \(good) 1"), "\(loaded)")
        // SFZ files alike: samples outside the root refused with the same text whether they
        // exist or not, an include outside it as a file outside it is, and one within it loads.
        func sfz(_ name: String, _ text: String) throws -> String {
            let path = root.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        try "<region> sample=inside.wav key=40".write(toFile: dir.appendingPathComponent("outside.sfzh").path, atomically: true, encoding: .utf8)
        let sfzUp = try sfz("up.sfz", "<region> sample=../outside.wav key=36"), sfzGone = try sfz("gone.sfz", "<region> sample=../gone.wav key=36")
        let sfzAbs = try sfz("abs.sfz", "<region> sample=\(dir.appendingPathComponent("outside.wav").path) key=36")
        // Through a link in the root to a directory outside it: the same, file there or not
        // (nothing outside is looked at, so an SFZ file's regions cannot probe it).
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("out").path, withDestinationPath: dir.path)
        let sfzLinked = try sfz("linked.sfz", "<region> sample=inside.wav key=35\n<region> sample=out/outside.wav key=36")
        let sfzLinkedGone = try sfz("linkedgone.sfz", "<region> sample=inside.wav key=35\n<region> sample=out/gone.wav key=36")
        for path in [sfzUp, sfzGone, sfzAbs, sfzLinked, sfzLinkedGone] {
            let reply = try osc.send(["--port", port, "--replies", "1", "/sampler/load", "s:\(path)"])
            #expect(reply.contains("reply /sampler/error ,ss \(path) \(path): a sample it names is not under \(root.path)"), "\(reply)")
        }
        let sfzInclude = try sfz("include.sfz", "<region> sample=inside.wav key=36\n#include \"../outside.sfzh\"")
        let included = try osc.send(["--port", port, "--replies", "1", "/sampler/load", "s:\(sfzInclude)"])
        #expect(included.contains { $0.hasPrefix("reply /sampler/error ,ss \(sfzInclude) \(sfzInclude): not a valid SFZ instrument") }, "\(included)")
        let sfzGood = try sfz("good.sfz", "<region> sample=inside.wav key=36\n<region> sample=INSIDE.WAV key=38")
        let sfzLoaded = try osc.send(["--port", port, "--replies", "1", "/sampler/load", "s:\(sfzGood)"])
        #expect(sfzLoaded.contains("reply /sampler/loaded ,si \(sfzGood) 2"), "\(sfzLoaded)")
    }

    /// Loads of a 15 MB file that is not a patch, flooded: each is refused after its first
    /// bytes, one load a tick, and pings are answered within 100 ms meanwhile (issue 52: each
    /// was read whole on the control thread, and a ping waited 120 s).
    @Test func aFloodOfLoadsOfANonPatchLeavesPingsAnswered() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let dir = try temporaryDirectory()
        try WAVFileWriter.write(path: dir.appendingPathComponent("k.wav").path, channels: [[0.5, 0.25]], sampleRate: 48000)
        let patch = dir.appendingPathComponent("p.json").path
        try #"{"version": 2, "tempo": 120, "instruments": [{"id": "k", "layers": [{"samples": ["k.wav"]}]}]}"#
            .write(toFile: patch, atomically: true, encoding: .utf8)
        let junk = dir.appendingPathComponent("junk.json").path
        try Data(repeating: UInt8(ascii: "x"), count: 15 << 20).write(to: URL(fileURLWithPath: junk))
        let (process, _, port) = try osc.startWithOSC(["play", "--patch", patch, "--osc-port", "0", "--osc-root", dir.path, "--duration", "30",
                                                       "--server", server.name, "--name", "oscflood", "--no-connect", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        let me = try OSCServer(port: "0", hostNow: { 0 })
        defer { me.close() }
        let player = "osc.udp://127.0.0.1:\(port)/"
        let one = try osc.send(["--port", port, "--replies", "1", "/sampler/load", "s:\(junk)"])
        #expect(one.contains("reply /sampler/error ,ss \(junk) \(junk): not a patch (a patch is a JSON object)"), "\(one)")
        var latencies: [Double] = []
        for _ in 0..<5 {
            for _ in 0..<200 { me.send("/sampler/load", [.string(junk)], to: player) }
            let sent = Date()
            me.send("/sampler/ping", [], to: player)
            var answered = false
            while !answered, Date().timeIntervalSince(sent) < 10 {
                answered = me.take().contains { $0.path == "/sampler/pong" }
                if !answered { usleep(1_000) }
            }
            #expect(answered, "no pong within 10 s")
            latencies.append(Date().timeIntervalSince(sent))
        }
        let median = latencies.sorted()[2]
        print(String(format: "pong after a flood of loads: median %.1f ms, slowest %.1f ms", median * 1000, latencies.max()! * 1000))
        #expect(median < 0.1, "\(latencies)")
    }

    /// A timetag 13 hours ahead is refused with an error reply, not run at once; the program plays on.
    @Test func aTimetag13HoursAheadIsRefusedWithAnErrorReply() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let kit = try osc.clickKit(#"[{"id": "kick", "layers": [{"samples": ["click.wav"]}]}]"#)
        let (process, out, port) = try osc.startWithOSC(["play", "--patch", kit.path, "--osc-port", "0", "--duration", "20",
                                                         "--server", server.name, "--name", "oschorizon", "--no-connect", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        // 13 hours: beyond 2^31 frames at 48 kHz, where JACK's 32-bit conversion would wrap.
        let reply = try osc.send(["--port", port, "--in-ms", "46800000", "--replies", "1", "/sampler/trigger", "s:kick"])
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

    /// `/klick/map/load_file` naming /dev/zero, a FIFO, a 5 MB file, a directory and a missing
    /// file: each an error reply at once, and the clicks stay on their grid meanwhile.
    @Test func loadsOfWhatIsNotATempoMapAreErrorRepliesAndTheClicksStayOnTheGrid() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let dir = try temporaryDirectory()
        let fifo = dir.appendingPathComponent("fifo.map").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let big = dir.appendingPathComponent("big.map").path
        try String(repeating: "8 120\n", count: 5 << 20 / 6).write(toFile: big, atomically: true, encoding: .utf8)
        let (process, out, port) = try osc.startWithOSC(["metronome", "120", "--osc-port", "0", "--duration", "20", "--server", server.name,
                                                         "--name", "oscgrid", "--no-connect", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        // Drained meanwhile, so that the program never waits on a full pipe.
        let reader = Thread { _ = out.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        _ = try osc.send(["--port", port, "/klick/metro/start"])
        let capture = try CaptureProcess(server: server, ports: ["oscgrid:out_L"], frames: 48000 * 4)
        for (path, reason) in [("/dev/zero", "device"), (fifo, "FIFO"), (big, "at most 1 MB"), (dir.path, "directory"),
                               (dir.appendingPathComponent("none.map").path, "no such file")] {
            let started = Date()
            let reply = try osc.send(["--port", port, "--replies", "1", "/klick/map/load_file", "s:\(path)"])
            let seconds = Date().timeIntervalSince(started)
            print(String(format: "load_file %@: replied in %.3f s (the sender's start included)", path, seconds))
            #expect(reply.contains { $0.contains("/klick/error") && $0.contains(reason) }, "\(path): \(reply)")
            #expect(seconds < 3, "\(path): \(seconds) s")
        }
        let recording = try capture.finish()
        process.terminate()
        process.waitUntilExit()
        let onsets = recording.onsets(channel: 0, threshold: 0.02, quietGap: 1000)
        #expect(onsets.count >= 7, "\(onsets)")
        let intervals = zip(onsets, onsets.dropFirst()).map { $1 - $0 }
        #expect(intervals.allSatisfy { $0 == 24000 }, "the clicks left their grid: \(intervals)")
    }

    /// 100,000 timed triggers sent as fast as a socket can: past 1,024 waiting the sender hears
    /// "the queue is full", MIDI notes sent meanwhile play on their frames, memory stays flat.
    @Test func aFloodOfTimedTriggersIsRefusedPastTheBoundAndMIDIStillPlays() throws {
        let period: Int64 = 256
        let server = try JACKServer(period: Int(period))
        defer { server.stop() }
        let kit = try osc.clickKit(#"[{"id": "kick", "layers": [{"samples": ["click.wav"]}], "midiNote": 36}]"#)
        let capture = try CaptureProcess(server: server, ports: ["l", "r"], frames: 48000 * 4, name: "floodcap", connect: false)
        let (process, out, port) = try osc.startWithOSC(["play", "--patch", kit.path, "--osc-port", "0", "--duration", "30", "--server", server.name,
                                                         "--name", "flood", "--connect", "floodcap:in_0,floodcap:in_1", "--quiet"])
        defer { if process.isRunning { process.terminate() } }
        let output = Locked<Data?>(nil)
        let reader = Thread { let d = out.fileHandleForReading.readDataToEndOfFile(); output.withLock { $0 = d } }
        reader.start()
        func rss() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        let rssBefore = rss()

        // A socket of the test's own: sends the flood, hears the replies.
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        var target = local
        target.sin_port = UInt16(Int(port)!).bigEndian
        let tag = OSCTime.timetag(unixMicroseconds: OSCTime.realtimeMicroseconds() + 600_000_000)  // ten minutes ahead
        let packet = OSCPacketBytes.bundle(seconds: tag.seconds, fraction: tag.fraction, [OSCPacketBytes.message("/sampler/trigger", int: 0)])
        var full = 0
        var buffer = [UInt8](repeating: 0, count: 2048)
        func readReplies() {
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { return }
                if String(decoding: buffer[0..<n], as: UTF8.self).contains("the queue is full") { full += 1 }
            }
        }
        for k in 0..<100_000 {
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, packet, packet.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if k % 500 == 0 { readReplies() }
        }
        #expect(waitUntil(timeout: 10) { readReplies(); return full > 0 }, "no \"queue is full\" reply")

        // MIDI notes after the flood: the engine's schedule holds the 1,024 admitted triggers,
        // and still has room for them.
        let sender = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler-midi-send"),
                                           ["--server", server.name, "--to", "flood:midi_in", "--offsets", "0,100,255", "--notes", "36,36,36",
                                            "--velocity", "127"], timeout: 20)
        let sent = sender.finish()
        #expect(sent.status == 0, "\(sent.output)")
        let recording = try capture.finish()
        let rssAfter = rss()
        process.terminate()
        process.waitUntilExit()
        #expect(waitUntil(timeout: 10) { output.withLock { $0 != nil } })
        let text = String(decoding: output.withLock { $0 } ?? Data(), as: UTF8.self)
        print("flood: \(full) \"queue is full\" replies heard; RSS \(rssBefore) → \(rssAfter) kB")
        #expect(text.contains("more messages refused"), "\(text.suffix(2000))")
        let notes = sent.output.split(separator: "\n").filter { $0.hasPrefix("sent ") }.map { Int64($0.split(separator: " ")[3])! }
        #expect(notes.count == 3)
        #expect(recording.onsets(channel: 0) == notes.map { $0 + period }, "MIDI notes left their frames")
        #expect(rssAfter - rssBefore < 4096, "RSS grew from \(rssBefore) to \(rssAfter) kB")
    }
}
