import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// The device-timeline invariant on real JACK servers, judged by the independent witness
/// (`sampler-capture`, which stamps each period from JACK's frame time alone): every captured
/// period of `sampler play` equals `sampler render` of the same patch at its device frames, or
/// is silent where a cycle was lost.
struct LiveTimelineRun {
    let check: TimelineCheck
    let output: String
    let origin: Int64
    let disturbances: Int

    /// The number after `label` in the program's exit line ("3 lost periods").
    func number(before label: String) -> Int? {
        output.range(of: #"\d+ "# + label, options: .regularExpression).flatMap { Int(output[$0].split(separator: " ")[0]) }
    }

    /// Plays `patch` on `server` for about `seconds`, witnessed; with `disturb`, a client
    /// upstream of the sampler sleeps `sleep` periods every `every` cycles.
    static func run(patch: URL, server: JACKServer, seconds: Double, disturb: (sleep: Double, every: Int)? = nil,
                    command: [String] = []) throws -> LiveTimelineRun {
        let frames = Int(seconds * Double(server.sampleRate))
        let witness = try CaptureProcess(server: server, ports: ["a", "b"], frames: frames, name: "wit", connect: false)
        let args = command.isEmpty ? ["play", "--patch", patch.path] : command
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            args + ["--server", server.name, "--name", "sbin", "--connect", "wit:in_0,wit:in_1",
                                                    "--duration", "\(seconds + 30)", "--quiet"], timeout: seconds + 40,
                                            environment: server.environment)
        var disturber: BackgroundProgram?
        if let disturb {
            disturber = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler-disturb"),
                                              ["--server", server.name, "--to", "sbin:midi_in",
                                               "--sleep", "\(disturb.sleep)", "--every", "\(disturb.every)"], timeout: seconds + 40,
                                              environment: server.environment)
        }
        let recording = try witness.finish()
        sampler.terminate()
        let played = sampler.finish()
        disturber?.terminate()
        let disturbed = disturber?.finish().output ?? ""
        #expect(played.status == 0, "\(played.output)")
        let origin = try #require(played.output.range(of: #"(from device frame|first beat at device frame) \d+"#, options: .regularExpression)
            .flatMap { Int64(played.output[$0].split(separator: " ").last!) }, "\(played.output)")

        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("render.wav").path
        let renderArgs = command.isEmpty ? ["render", "--patch", patch.path] : ["metronome"] + command.dropFirst() + ["--render", wav]
        let r = try runSampler(renderArgs + (command.isEmpty ? ["--out", wav] : []) + ["--duration", "\(seconds + 5)"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try SoundFileLoader().load(path: wav)
        let render = [rendered.samples(channel: 0), rendered.samples(channel: rendered.channelCount > 1 ? 1 : 0)]
        let check = TimelineCheck(capture: recording, render: render, origin: origin)

        // Cross-check the program's own origin: the witness's first onset is the render's first
        // onset placed at that origin.
        let first = Capture(firstFrame: 0, sampleRate: 48000, channels: [render[0]]).onsets(channel: 0).first
        let heard = recording.onsets(channel: 0).first
        if let first, let heard, check.count(.wrong) == 0 {
            #expect(heard >= origin + first, "an onset before the program's first beat")
        }
        let count = disturbed.split(separator: "\n").last.flatMap { $0.hasPrefix("disturbed ") ? Int($0.split(separator: " ")[1]) : nil } ?? 0
        return LiveTimelineRun(check: check, output: played.output, origin: origin, disturbances: count)
    }
}
