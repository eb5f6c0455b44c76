import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// The `sampler` binary as a real JACK client, captured by another client.
@Suite(.serialized) struct CommandLinePlayTests {
    @Test func playedBeatsAreOnTheGridAndTheRecordingEqualsTheOfflineRender() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let patch = try clickPatch(bpm: 113)
        let dir = patch.deletingLastPathComponent()
        let record = dir.appendingPathComponent("live.wav").path
        // The capture client is up first, with its own input ports, and the sampler connects to
        // it: the capture holds everything from the first beat on.
        let capture = try CaptureProcess(server: server, ports: ["in"], frames: 48000 * 5, name: "cap", connect: false)
        let result = try runSampler(["play", "--patch", patch.path, "--server", server.name, "--name", "sbin",
                                     "--connect", "cap:in_0", "--duration", "6", "--record", record], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("0 late"))
        let origin = try #require(result.stdout.range(of: #"from device frame \d+"#, options: .regularExpression)
            .flatMap { Int64(result.stdout[$0].split(separator: " ").last!) })
        let recording = try capture.finish()
        let onsets = recording.onsets(channel: 0)
        #expect(onsets.count >= 8)
        // Every beat on its absolute frame: the first exactly where the program said it would be.
        let expected = (0..<onsets.count).map { origin + Int64((Double($0) * 60 * 48000 / 113).rounded()) }
        #expect(onsets == expected)

        // What --record wrote from the live engine is frame-identical to `sampler render`.
        let rendered = dir.appendingPathComponent("render.wav").path
        let r = try runSampler(["render", "--patch", patch.path, "--duration", "5", "--out", rendered])
        #expect(r.status == 0, "\(r.stderr)")
        let live = try SoundFileLoader().load(path: record).samples(channel: 0)
        let offline = try SoundFileLoader().load(path: rendered).samples(channel: 0)
        let start = try #require(live.firstIndex { $0 != 0 })
        let n = min(offline.count, live.count - start)
        #expect(n > 48000 * 4)
        // The server is synchronous (it never skips a client), so the recording is the render.
        #expect(Array(live[start..<(start + n)]) == Array(offline[0..<n]))
    }

    @Test func killingTheServerMidPlayStopsTheProgramWithAMessage() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let patch = try clickPatch(bpm: 120)
        let p = Process()
        p.executableURL = productsDirectory.appendingPathComponent("sampler")
        p.arguments = ["play", "--patch", patch.path, "--server", server.name, "--no-connect", "--duration", "60"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        // Wait until it plays (it prints a line when it starts).
        let firstLine = out.fileHandleForReading.readData(ofLength: 8)
        #expect(String(decoding: firstLine, as: UTF8.self).hasPrefix("playing"))
        let killedAt = Date()
        server.kill9()
        let exited = waitUntil(timeout: 5) { !p.isRunning }
        let seconds = Date().timeIntervalSince(killedAt)
        #expect(exited)
        #expect(seconds < 1.0, "took \(seconds) s to stop")
        #expect(p.terminationStatus == 1)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr.contains("sampler: error: the JACK server shut down"), "\(stderr)")
        server.clearAfterKill()
    }
}
