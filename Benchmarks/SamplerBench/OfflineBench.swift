import Foundation
import SamplerCore
import SamplerKit
import DrumPlayer
import ProgramHost
import Scheduling
import SoundFiles

/// Renders `seconds` through `OfflineRenderer` (the path `sampler render` uses) into a sink that
/// discards the blocks; returns the wall time in seconds.
func renderOffline(engine: Engine, feeder: CommandFeeder, seconds: Double) -> Double {
    var feeder: CommandFeeder? = feeder
    let renderer = OfflineRenderer(engine: engine, sampleRate: 48_000)
    var checksum: Float = 0
    let t0 = nowNanoseconds()
    renderer.render(frameCount: Int(seconds * 48_000), feeder: &feeder) { l, _, _ in checksum += l[0] }
    let elapsed = Double(nowNanoseconds() - t0) / 1e9
    precondition(checksum.isFinite)
    return elapsed
}

/// Runs the sampler command line with `arguments` and returns its wall time in seconds and what
/// it printed, or nil when it failed.
func timeSampler(_ path: String, _ arguments: [String]) -> (seconds: Double, output: String)? {
    let t0 = nowNanoseconds()
    let result = capture(path, arguments)
    guard result.status == 0 else { return nil }
    return (Double(nowNanoseconds() - t0) / 1e9, result.output)
}

/// 4: offline render speed for the demo patch and a one-hour metronome: the command line a user
/// runs (`sampler render`, `sampler metronome --render`, writing a float WAV file), and the
/// engine alone (OfflineRenderer, blocks discarded) for the metronome.
func benchOffline(root: String, samplerPath: String, report: Report) throws {
    report.section("4. Offline render speed at 48 kHz")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-bench-render-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var json: [String: Any] = [:]

    // The demo patch through `sampler render` (best of 3); the command reports its own rate (the
    // rendering and writing, without start-up and loading).
    let demoSeconds = 600.0
    var demoTimes: [Double] = [], reported: [Double] = []
    for _ in 0..<3 {
        guard let run = timeSampler(samplerPath, ["render", "--patch", root + "/Patches/drums.json", "--duration", String(Int(demoSeconds)),
                                                  "--out", directory + "/demo.wav"]) else { break }
        demoTimes.append(run.seconds)
        // "rendered 600.00 s to … in 0.424 s (1415× real time)"
        if let end = run.output.range(of: "× real time)"), let open = run.output[..<end.lowerBound].lastIndex(of: "("),
           let x = Double(run.output[run.output.index(after: open)..<end.lowerBound]) {
            reported.append(x)
        }
        try? FileManager.default.removeItem(atPath: directory + "/demo.wav")
    }
    if let wall = demoTimes.min() {
        let demo = reported.max() ?? demoSeconds / wall
        report.line("  demo patch, `sampler render` 600 s to a float WAV file: " + String(format: "%.0f× real time", demo)
            + String(format: " as the command reports it (%.0f× counting start-up and loading, %.2f s)", demoSeconds / wall, wall))
        json["demoPatchTimesRealTime"] = round(demo, 0)
        json["demoPatchWallTimesRealTime"] = round(demoSeconds / wall, 0)
        report.target("offline render, demo patch", value: String(format: "%.0f× real time", demo), target: "≥ 500×", met: demo >= 500)
    } else {
        report.fail("`sampler render --patch Patches/drums.json` failed")
    }

    // A one-hour metronome: the command line if it exists, and the engine alone.
    let hour = 3600.0
    if let run = timeSampler(samplerPath, ["metronome", "120", "--render", directory + "/click.wav", "--duration", "3600"]) {
        report.line("  metronome, `sampler metronome 120 --render` 1 hour to a float WAV file: "
            + String(format: "%.0f× real time (%.2f s, 1.4 GB written)", hour / run.seconds, run.seconds))
        json["metronomeHourCommandTimesRealTime"] = round(hour / run.seconds, 0)
        try? FileManager.default.removeItem(atPath: directory + "/click.wav")
    } else {
        report.line("  metronome, `sampler metronome --render`: n/a (metronome not built)")
    }
    let loader = SoundFileLoader(targetSampleRate: 48_000)
    let clicks = [try loader.load(path: root + "/Samples/click-high.wav"), try loader.load(path: root + "/Samples/click-low.wav")]
    var metronomeTimes: [Double] = []
    for _ in 0..<2 {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let ids = try clicks.map { try engine.register($0) }
        let sequencer = StepSequencer(steps: [[0], [1], [1], [1]], bpm: 120, stepsPerBeat: 1, sampleRate: 48_000, origin: 0)
        let feeder = CommandFeeder(source: sequencer) { .start(player: $0.player, sound: ids[$0.player], at: $0.frame) }
        metronomeTimes.append(renderOffline(engine: engine, feeder: feeder, seconds: hour))
    }
    let metronome = hour / Sample(metronomeTimes).min
    report.line("  metronome, engine alone (OfflineRenderer, 256-frame blocks discarded), 1 hour: "
        + String(format: "%.0f× real time (%.3f s)", metronome, Sample(metronomeTimes).min))
    json["metronomeHourEngineTimesRealTime"] = round(metronome, 0)
    report.set("offline", json)
}

/// 5: the same mix as `sox -m`: K stereo files with per-file gains into one float WAV file.
func benchSox(report: Report) throws {
    report.section("5. Mixing files: sampler vs sox -m (16 stereo 20 s float WAV files → one float WAV)")
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else {
        report.line("  n/a (sox is not installed)")
        report.target("offline vs sox -m per voice-frame", value: "n/a", target: "≥ 10×", met: nil)
        return
    }
    let count = 16, seconds = 20.0, frames = Int(seconds * 48_000)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-bench-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var paths: [String] = [], gains: [Float] = []
    var random = SplitMix(state: 5)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: frames), right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    defer { left.deallocate(); right.deallocate() }
    for i in 0..<count {
        for f in 0..<frames {
            left[f] = (random.unit() - 0.5) * 0.5
            right[f] = (random.unit() - 0.5) * 0.5
        }
        let path = "\(directory)/in\(i).wav"
        let writer = try WAVFileWriter(path: path, sampleRate: 48_000, channelCount: 2, format: .float32)
        try writer.write(left: left, right: right, frameCount: frames)
        writer.close()
        paths.append(path)
        gains.append(0.1 + 0.05 * Float(i % 4))
    }
    let voiceFrames = Double(count * frames)

    // sox: reads, mixes with the gains, writes. `-v` before an input sets its gain (and stops sox
    // from scaling the inputs by 1/K itself).
    var soxArguments = ["-m"]
    for (path, gain) in zip(paths, gains) { soxArguments += ["-v", String(gain), path] }
    soxArguments += ["-e", "floating-point", "-b", "32", "\(directory)/sox.wav"]
    var soxTimes: [Double] = []
    for _ in 0..<3 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        p.arguments = soxArguments
        p.standardError = FileHandle.nullDevice
        let t0 = nowNanoseconds()
        try p.run()
        p.waitUntilExit()
        soxTimes.append(Double(nowNanoseconds() - t0) / 1e9)
        guard p.terminationStatus == 0 else { throw SamplerError("sox -m failed with status \(p.terminationStatus)") }
    }
    let sox = Sample(soxTimes).min

    // The sampler: decode the same files, start them all on frame 0, render to a float WAV file.
    var endToEnd: [Double] = [], mixOnly: [Double] = []
    for _ in 0..<3 {
        let t0 = nowNanoseconds()
        let engine = Engine(configuration: .init(maxPlayers: count))
        let loader = SoundFileLoader(targetSampleRate: 48_000)
        let ids = try paths.map { try engine.register(loader.load(path: $0)) }
        let t1 = nowNanoseconds()
        var feeder: CommandFeeder? = CommandFeeder(source: OneShot(players: count, frame: 0)) {
            .start(player: $0.player, sound: ids[$0.player], at: $0.frame, gain: Gain(linear: gains[$0.player]))
        }
        try OfflineRenderer(engine: engine, sampleRate: 48_000)
            .renderToFile(path: "\(directory)/sampler.wav", frameCount: frames, feeder: &feeder)
        let t2 = nowNanoseconds()
        endToEnd.append(Double(t2 - t0) / 1e9)
        // The mixing alone, same voices, blocks discarded.
        let engine2 = Engine(configuration: .init(maxPlayers: count))
        for s in ids { _ = try engine2.register(engine.sound(s)) }
        mixOnly.append(renderOffline(engine: engine2, feeder: CommandFeeder(source: OneShot(players: count, frame: 0)) {
            .start(player: $0.player, sound: ids[$0.player], at: $0.frame, gain: Gain(linear: gains[$0.player]))
        }, seconds: seconds))
        _ = t1
    }
    let sampler = Sample(endToEnd).min, mix = Sample(mixOnly).min
    let soxNs = sox * 1e9 / voiceFrames, samplerNs = sampler * 1e9 / voiceFrames, mixNs = mix * 1e9 / voiceFrames
    report.line("                                     seconds   ns/voice-frame   vs sox")
    report.line("  sox -m (decode, mix, write)       \(col(sox, 3))\(col(soxNs, 2, width: 16))\(col(1, 2, width: 9))×")
    report.line("  sampler (decode, mix, write)      \(col(sampler, 3))\(col(samplerNs, 2, width: 16))\(col(sox / sampler, 1, width: 9))×")
    report.line("  sampler (mix only, render path)   \(col(mix, 3))\(col(mixNs, 2, width: 16))\(col(sox / mix, 1, width: 9))×")
    report.set("sox", ["files": count, "secondsEach": seconds, "soxSeconds": round(sox, 4), "samplerEndToEndSeconds": round(sampler, 4),
                       "samplerMixOnlySeconds": round(mix, 4), "soxNsPerVoiceFrame": round(soxNs, 3),
                       "samplerEndToEndNsPerVoiceFrame": round(samplerNs, 3), "samplerMixOnlyNsPerVoiceFrame": round(mixNs, 3),
                       "speedupEndToEnd": round(sox / sampler, 2), "speedupMixOnly": round(sox / mix, 2)])
    report.target("offline render vs sox -m per voice-frame (mix)", value: String(format: "%.0f× faster (end to end %.1f×)", sox / mix, sox / sampler),
                  target: "≥ 10×", met: sox / mix >= 10)
}
