import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit
import SoundFiles
import Testing

/// The SamplerKit rows of the README that no other test covered, each played on a dummy server
/// and captured by an independent client (issue 14, item 6).
@Suite(.serialized) struct ReadmeRowsLiveTests {
    let centre = PanGains.center.monoLeft

    /// `play(atTime:)` in device seconds plays on the frame of that time; `init(data:fileTypeHint:)`
    /// plays the bytes of a file.
    @Test func playAtTimeAndPlayersFromBytesStartOnTheirFrames() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "attime")
        defer { s.close() }
        let dir = try temporaryDirectory()
        let marker = try markerSound(frames: 2000)
        let path = dir.appendingPathComponent("marker.wav").path
        try WAVFileWriter.write(path: path, channels: [marker.samples(channel: 0)], sampleRate: 48000)
        let fromBytes = try AudioPlayer(data: Data(contentsOf: URL(fileURLWithPath: path)), fileTypeHint: "wav", session: s)
        let atTime = try AudioPlayer(sound: marker, session: s)
        let capture = try CaptureProcess(server: server, ports: ["attime:out_L"], frames: 48000)
        let first = s.earliestStartFrame + 4800
        let second = first + 3001
        #expect(atTime.play(atTime: Double(first) / 48000))
        #expect(fromBytes.play(atFrame: second))
        let recording = try capture.finish()
        let expected = marker.samples(channel: 0).map { $0 * centre }
        #expect((0..<2000).map { recording.sample(channel: 0, at: first + Frame($0)) } == expected)
        #expect((0..<2000).map { recording.sample(channel: 0, at: second + Frame($0)) } == expected)
        #expect(recording.sample(channel: 0, at: first - 1) == 0)
        #expect(recording.sample(channel: 0, at: second + 2000) == 0)
    }

    /// `setVolume(0, fadeDuration: 0.1)` is a straight ramp of 4,800 frames, sample by sample.
    @Test func setVolumeFadesSampleBySampleOverItsDuration() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "fade")
        defer { s.close() }
        let player = try AudioPlayer(sound: Sound(channels: [[Float](repeating: 0.5, count: 48000)], sampleRate: 48000), session: s)
        let capture = try CaptureProcess(server: server, ports: ["fade:out_L"], frames: 48000)
        let start = s.earliestStartFrame + 2400
        #expect(player.play(atFrame: start))
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > start + 2400 })
        player.setVolume(0, fadeDuration: 0.1)
        let recording = try capture.finish()
        let full = 0.5 * centre
        let samples = recording.channels[0]
        let onset = try #require(samples.firstIndex(where: { $0 != 0 }), "nothing played")
        let rampStart = try #require(samples[onset...].firstIndex(where: { abs($0 - full) > 1e-6 }), "no fade")
        let ramp = Array(samples[rampStart...].prefix { $0 > 0 })
        // 4,800 frames from full to silence (the last step reaches 0 on frame 4,800).
        #expect(abs(ramp.count - 4799) <= 1, "the fade lasted \(ramp.count + 1) frames")
        let steps = zip(ramp, ramp.dropFirst()).map { $0 - $1 }
        let step = full / 4800
        #expect(steps.allSatisfy { abs($0 - step) < 1e-6 }, "not a straight ramp")
        #expect(samples[(rampStart + ramp.count)...].prefix(4800).allSatisfy { $0 == 0 })
    }

    /// A host time (JACK's microseconds) from `hostTime(forFrame:)` names that frame again; a
    /// PlayerNode started at it plays there. `latency` is the output ports' latency as JACK
    /// reports it to anyone (`jack_lsp -l`).
    @Test func hostTimesNameFramesAndLatencyIsJACKs() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        var configuration = AudioSession.Configuration()
        configuration.name = "hosttime"
        configuration.serverName = server.name
        configuration.connections = ["system:playback_1", "system:playback_2"]
        let s = try AudioSession(configuration: configuration)
        defer { s.close() }
        let node = try PlayerNode(session: s)
        try node.scheduleBuffer(markerSound(frames: 1000))
        let capture = try CaptureProcess(server: server, ports: ["hosttime:out_L"], frames: 48000)
        // JACK maps frames and host times from its estimate of the latest cycle's timing, which
        // moves from one cycle to the next when the server's wakeups jitter (a busy machine):
        // 200 ms ahead, a 0.02% change of the period's length is two frames. A round trip taken
        // within one estimate names its frame again; one that straddles a new cycle is taken
        // again.
        var frame: Frame = 0, host: UInt64 = 0, back: Frame = 0
        for _ in 0..<20 {
            frame = s.earliestStartFrame + 9600
            host = s.hostTime(forFrame: frame)
            back = s.frame(for: AudioTime(hostTime: host))
            if abs(back - frame) <= 1 { break }
        }
        #expect(host > s.hostTimeNow)
        #expect(abs(back - frame) <= 1, "frame \(frame) → host time \(host) → frame \(back)")
        // The start plays on the frame the host time names when it is asked for (the estimate
        // of that moment).
        let before = s.frame(for: AudioTime(hostTime: host))
        node.play(at: AudioTime(hostTime: host))
        let after = s.frame(for: AudioTime(hostTime: host))
        let recording = try capture.finish()
        let onset = recording.onsets(channel: 0, threshold: 0.000001).first
        #expect(onset.map { $0 - 1 >= min(before, after) - 1 && $0 - 1 <= max(before, after) + 1 } == true,
                "onset \(onset ?? -1), host time's frame \(before)…\(after) (asked for \(frame))")
        #expect(abs(before - frame) < 256 && abs(after - frame) < 256, "\(frame): \(before)…\(after)")

        // JACK's own report of the port's playback latency.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/jack_lsp")
        p.arguments = ["-l", "hosttime:out_L"]
        p.environment = ProcessInfo.processInfo.environment.merging(["JACK_DEFAULT_SERVER": server.name]) { $1 }
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        // "port playback latency = [ 256 256 ] frames"
        let line = text.split(separator: "\n").first { $0.contains("port playback latency") } ?? ""
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count == 2, "jack_lsp said: \(text)")
        #expect(s.outputLatencyFrames == numbers.max() ?? -1)
        #expect(node.latency == Double(numbers.max() ?? -1) / 48000)
        #expect(s.outputLatencyFrames > 0, "connected to the dummy's playback ports, the output has latency")
    }

    /// `.loops` repeats a buffer back to back; `.interrupts` replaces it on the earliest frame
    /// possible; `.interruptsAtLoop` lets the loop pass under way finish first.
    @Test func loopsInterruptsAndInterruptsAtLoop() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "options")
        defer { s.close() }
        let node = try PlayerNode(session: s)
        // A loop of 500 frames whose samples say their index; the replacements are negative.
        let loop = try markerSound(frames: 500)
        let loopSamples = loop.samples(channel: 0).map { $0 * centre }
        let atLoop = try Sound(channels: [(0..<300).map { -Float($0 + 1) / 100_000 }], sampleRate: 48000)
        let now = try Sound(channels: [(0..<300).map { -Float($0 + 1) / 10_000 }], sampleRate: 48000)
        let capture = try CaptureProcess(server: server, ports: ["options:out_L"], frames: 48000 * 2)
        try node.scheduleBuffer(loop, options: .loops)
        let start = s.earliestStartFrame + 2400
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > start + 1700 })
        try node.scheduleBuffer(atLoop, options: .interruptsAtLoop)
        let done = Locked(false)
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > start + 5000 })
        try node.scheduleBuffer(loop, options: [.loops, .interrupts])
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > start + 8000 })
        try node.scheduleBuffer(now, options: .interrupts) { done.withLock { $0 = true } }
        #expect(waitUntil(timeout: 3) { done.withLock { $0 } })
        let recording = try capture.finish()
        let played = (0..<Int(recording.firstFrame + Frame(recording.channels[0].count) - start)).map {
            recording.sample(channel: 0, at: start + Frame($0))
        }
        // The loop, whole passes only, until the atLoop buffer: its first sample is on a pass boundary.
        let a = try #require(played.firstIndex(where: { $0 < 0 }), "the interruptsAtLoop buffer never played")
        #expect(a % 500 == 0 && a >= 1500, "it started at \(a) frames into the loop")
        #expect((0..<a).allSatisfy { played[$0] == loopSamples[$0 % 500] }, "the loop did not repeat back to back")
        #expect(Array(played[a..<(a + 300)]) == atLoop.samples(channel: 0).map { $0 * centre })
        // Then (after silence: nothing was scheduled) the loop again from the earliest frame,
        // seamless, until the .interrupts buffer replaces it with no gap: its first sample is
        // on the frame after the loop's last.
        let b = a + 300
        // (The loop's first sample is 0: it starts one frame before its first non-zero one.)
        let firstSound = try #require(played[b...].firstIndex(where: { $0 != 0 }), "the second loop or the interrupting buffer never played")
        let c = try #require(played[firstSound...].firstIndex(where: { $0 < 0 }), "the second loop or the interrupting buffer never played")
        let loopStart = firstSound - 1
        #expect(c - loopStart > 500, "the second loop played less than one pass")
        #expect((loopStart..<c).allSatisfy { played[$0] == loopSamples[($0 - loopStart) % 500] }, "the second loop was not seamless")
        #expect(Array(played[c..<(c + 300)]) == now.samples(channel: 0).map { $0 * centre })
        #expect(played[(c + 300)...].prefix(2000).allSatisfy { $0 == 0 })
    }
}
