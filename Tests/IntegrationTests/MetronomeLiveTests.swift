import Foundation
import JACKBackend
import JACKTestSupport
import SamplerCore
import Testing

/// A running `sampler metronome` process: its output is read after it exits; `waitUntilPlaying`
/// reads its first line ("playing … as NAME"), printed once its ports exist.
final class MetronomeProcess {
    let process = Process()
    private let out = Pipe(), err = Pipe()
    private var head = ""

    init(_ arguments: [String]) throws {
        process.executableURL = productsDirectory.appendingPathComponent("sampler")
        process.arguments = ["metronome"] + arguments + ["--quiet"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// Reads the first line of output; true when it says the metronome plays.
    func waitUntilPlaying() -> Bool {
        var bytes: [UInt8] = []
        while true {
            let chunk = out.fileHandleForReading.readData(ofLength: 1)
            if chunk.isEmpty || chunk[0] == UInt8(ascii: "\n") { break }
            bytes.append(chunk[0])
        }
        head = String(decoding: bytes, as: UTF8.self)
        return head.hasPrefix("playing")
    }

    /// Waits for the process to end; returns its status, output and errors.
    func finish() -> (status: Int32, stdout: String, stderr: String) {
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, head + "\n" + String(decoding: rest, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    deinit { if process.isRunning { process.terminate() } }
}

/// The device frame in "first beat at device frame N".
func firstBeatFrame(_ output: String) -> Frame? {
    guard let range = output.range(of: "first beat at device frame ") else { return nil }
    return Frame(output[range.upperBound...].prefix { $0.isNumber })
}

/// The expected onsets of a grid from `first` at `bpm`, inside `window`.
func grid(from first: Frame, bpm: Double, in window: Range<Frame>, rate: Double = 48000) -> [Frame] {
    var frames: [Frame] = []
    var k: Int64 = 0
    while true {
        let f = first + Frame((Double(k) * 60 * rate / bpm).rounded())
        if f >= window.upperBound { break }
        if f >= window.lowerBound { frames.append(f) }
        k += 1
    }
    return frames
}

/// `sampler metronome` as real JACK clients, recorded by an independent capture client.
@Suite(.serialized) struct MetronomeLiveTests {
    /// Onsets of `channel` inside `window` (a click already sounding when the capture began is
    /// left out by starting the window after its tail).
    func onsets(_ c: Capture, channel: Int, in window: Range<Frame>) -> [Frame] {
        c.onsets(channel: channel, threshold: 0.02, quietGap: 1000).filter { window.contains($0) }
    }

    /// 20 s each: a metronome that adds rounded intervals is a frame off within a few clicks
    /// (jack_metro repeats a truncated period), so a longer capture adds nothing.
    @Test func threeMetronomesFor20SecondsHaveNoOnsetError() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let tempos = [113.0, 120.0, 97.3]
        let metronomes = try tempos.enumerated().map { i, bpm in
            try MetronomeProcess(["\(bpm)", "--server", server.name, "--name", "metro\(i)", "--no-connect", "--duration", "23"])
        }
        for m in metronomes { #expect(m.waitUntilPlaying()) }
        let seconds = 20
        let capture = try CaptureProcess(server: server, ports: (0..<3).map { "metro\($0):out_L" }, frames: 48000 * seconds)
        let recording = try capture.finish()
        let window = (recording.firstFrame + 2000)..<(recording.firstFrame + Frame(recording.channels[0].count) - 16)
        for (i, m) in metronomes.enumerated() {
            let result = m.finish()
            #expect(result.status == 0, "\(result.stderr)")
            // Xruns while clients join are counted but harmless; one during the capture would
            // show as misplaced onsets below.
            #expect(result.stdout.contains(" 0 late, "), "\(result.stdout)")
            let first = try #require(firstBeatFrame(result.stdout), "\(result.stdout)")
            let expected = grid(from: first, bpm: tempos[i], in: window)
            let got = onsets(recording, channel: i, in: window)
            #expect(expected.count >= Int(tempos[i] / 3 * 0.98))
            #expect(got == expected, "\(tempos[i]) bpm: \(got.count) onsets captured, \(expected.count) expected")
            let errors = zip(got, expected).map { abs($0 - $1) }
            #expect(errors.max() == 0, "\(tempos[i]) bpm: largest onset error \(errors.max() ?? -1) frames")
            print("metronome at \(tempos[i]) bpm: \(got.count) onsets captured over \(seconds) s, largest error \(errors.max() ?? -1) frames")
        }
    }

    /// Watches the transport from a test client: the device frame of the first rolling cycle.
    func rollingFrame(_ client: TransportClient, timeout: Double = 5) -> TransportSnapshot? {
        var rolled: TransportSnapshot?
        _ = waitUntil(timeout: timeout) {
            client.poll { if $0.kind == .change && $0.state == .rolling && rolled == nil { rolled = $0 } }
            return rolled != nil
        }
        return rolled
    }

    func stoppedFrame(_ client: TransportClient, timeout: Double = 5) -> Frame? {
        var stopped: Frame?
        _ = waitUntil(timeout: timeout) {
            client.poll { if $0.kind == .change && $0.state == .stopped && stopped == nil { stopped = $0.deviceFrame } }
            return stopped != nil
        }
        return stopped
    }

    /// Waits until the transport has rolled past `frame`.
    func waitForTransport(_ client: TransportClient, pastFrame frame: Int64) -> Bool {
        waitUntil(timeout: 10) { (client.query()?.frame ?? 0) > frame }
    }

    @Test func followingTheTransportPlacesTheFirstBeatOnTheStartFrame() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let metronome = try MetronomeProcess(["120", "--transport", "follow", "--server", server.name, "--name", "follower",
                                              "--no-connect", "--duration", "30"])
        #expect(metronome.waitUntilPlaying())
        let control = try TransportClient(name: "control", serverName: server.name)
        try control.activate()
        defer { control.close() }
        #expect(waitUntil(timeout: 5) { control.cycleCount > 0 })
        let capture = try CaptureProcess(server: server, ports: ["follower:out_L"], frames: 48000 * 5)

        // From transport frame 0: beats on the rolling frame and every 24,000 frames after it.
        control.poll { _ in }
        control.locate(0)
        control.start()
        let first = try #require(rollingFrame(control))
        #expect(first.frame == 0)
        #expect(waitForTransport(control, pastFrame: 54_000))
        control.stop()
        let stop = try #require(stoppedFrame(control))

        // From the middle of a beat (transport frame 12,000): the next beat, at 24,000.
        control.locate(12_000)
        control.start()
        let second = try #require(rollingFrame(control))
        #expect(second.frame == 12_000)

        let recording = try capture.finish()
        let end = recording.firstFrame + Frame(recording.channels[0].count) - 16
        let got = onsets(recording, channel: 0, in: recording.firstFrame..<end)
        let expected = grid(from: first.deviceFrame, bpm: 120, in: first.deviceFrame..<stop)
            + grid(from: second.deviceFrame + 12_000, bpm: 120, in: second.deviceFrame..<end)
        #expect(expected.count >= 6)
        #expect(got == expected, "onsets \(got.map { $0 - first.deviceFrame }) expected \(expected.map { $0 - first.deviceFrame })")
        // The metronome held the start (slow sync) only briefly.
        #expect(second.deviceFrame - stop < 48000 * 2)
        control.stop()
        // Ctrl-C ends it cleanly.
        metronome.process.interrupt()
        let result = metronome.finish()
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func asTimebaseMasterItPublishesBarBeatTickAndAFollowerClicksWithIt() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        // The master plays 90 bpm in 3/4; the follower's own 200 bpm gives way to the master's.
        let master = try MetronomeProcess(["90", "--meter", "3/4", "--transport", "master", "--server", server.name,
                                           "--name", "master", "--no-connect", "--duration", "30"])
        let follower = try MetronomeProcess(["200", "--transport", "follow", "--server", server.name, "--name", "follower",
                                             "--no-connect", "--duration", "30"])
        #expect(master.waitUntilPlaying())
        #expect(follower.waitUntilPlaying())
        let control = try TransportClient(name: "control", serverName: server.name)
        try control.activate()
        defer { control.close() }
        #expect(waitUntil(timeout: 5) { control.cycleCount > 0 })
        let capture = try CaptureProcess(server: server, ports: ["master:out_L", "follower:out_L"], frames: 48000 * 4)
        control.poll { _ in }
        control.locate(0)
        control.start()
        let rolled = try #require(rollingFrame(control))
        #expect(waitForTransport(control, pastFrame: 100_000))
        // Bar/beat/tick from the master: 32,000 frames a beat, three beats a bar.
        let now = try #require(control.query())
        #expect(now.hasBBT && now.beatsPerMinute == 90 && now.beatsPerBar == 3 && now.beatType == 4)
        let beats = Double(now.frame) / 32000
        #expect(Int(now.bar) == Int(beats) / 3 + 1 && Int(now.beat) == Int(beats) % 3 + 1)
        #expect(abs(now.tick - (beats - beats.rounded(.down)) * now.ticksPerBeat) < 1)

        let recording = try capture.finish()
        let end = recording.firstFrame + Frame(recording.channels[0].count) - 16
        let expected = grid(from: rolled.deviceFrame, bpm: 90, in: rolled.deviceFrame..<end)
        #expect(expected.count >= 5)
        for channel in 0..<2 {
            let got = onsets(recording, channel: channel, in: recording.firstFrame..<end)
            #expect(got == expected, "channel \(channel): \(got.map { $0 - rolled.deviceFrame })")
            // Accents every three beats.
            let levels = got.map { recording.sample(channel: channel, at: $0) }
            for (k, level) in levels.enumerated() { #expect((level > 0.6) == (k % 3 == 0), "channel \(channel) beat \(k): \(level)") }
        }
        control.stop()
        master.process.interrupt()
        follower.process.interrupt()
        #expect(master.finish().status == 0)
        #expect(follower.finish().status == 0)
    }
}
