// sampler-soak: the control side of `make soak`. Plays on the JACK server named by
// JACK_DEFAULT_SERVER for --seconds while four control threads drive a session at random
// (starts at chosen frames, stops, pauses, seeks, fades, pans, loops, rates, PlayerNode buffers
// generated and scheduled endlessly) and every --reload seconds the patch's sounds are loaded
// anew and the old players dropped. Prints "ready" once its JACK client is open; at the end, what
// it measured, exiting 1 on growth:
//   rss-start KB, rss-end KB, fds-start N, fds-end N, lost periods/frames, calls.
//   sampler-soak --seconds S --patch FILE [--reload S] [--max-rss-growth KB] [--reload-log FILE]
// --reload-log FILE: one line per reload, "START END" in seconds since 1970 (the wall clock, as
// bash's EPOCHREALTIME), so the soak can tell which missed cycles fell during a reload.
import Foundation
import SamplerKit
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sampler-soak: \(message)\n".utf8))
    exit(2)
}

func residentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

var seconds = 120.0, reload = 10.0, maxGrowth = 1024
var patchPath = "", reloadLog = ""
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--seconds": seconds = Double(args.next() ?? "") ?? -1
    case "--patch": patchPath = args.next() ?? ""
    case "--reload": reload = Double(args.next() ?? "") ?? -1
    case "--max-rss-growth": maxGrowth = Int(args.next() ?? "") ?? -1
    case "--reload-log": reloadLog = args.next() ?? ""
    default: fail("unknown option \(a)")
    }
}
guard seconds > 0, reload > 0, maxGrowth >= 0, !patchPath.isEmpty else {
    fail("usage: --seconds S --patch FILE [--reload S] [--max-rss-growth KB] [--reload-log FILE]")
}
// The reload log is written at the end; a path that cannot be written is refused now, not an
// hour later.
if !reloadLog.isEmpty && !FileManager.default.createFile(atPath: reloadLog, contents: Data()) {
    fail("\(reloadLog): cannot write the reload log")
}

/// The sample files a patch names (every string ending in a sound-file extension, relative to it).
func samplesOf(_ path: String) -> [URL] {
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return [] }
    let base = URL(fileURLWithPath: path).deletingLastPathComponent()
    let pattern = try! NSRegularExpression(pattern: #""([^"]+\.(wav|flac|aif|aiff|ogg))""#)
    let matches = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
    return Set(matches.compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
        .sorted().map { base.appendingPathComponent($0).standardizedFileURL }
}

/// `@unchecked Sendable` by contract: `list` is only touched under `lock` (by the control threads
/// and the main thread's reloads); the `AudioPlayer`s in it are themselves thread-safe.
final class Players: @unchecked Sendable {
    let lock = NSLock()
    var list: [AudioPlayer] = []
    func random() -> AudioPlayer? { lock.withLock { list.randomElement() } }
    func replace(with new: [AudioPlayer]) { lock.withLock { list = new } }
}

do {
    var configuration = AudioSession.Configuration()
    configuration.name = "soak"
    configuration.connections = []
    configuration.maxPlayers = 64
    let session = try AudioSession(configuration: configuration)
    // Its JACK client is open: the soak starts the next client only after this line.
    print("ready"); fflush(nil)
    let files = samplesOf(patchPath)
    guard !files.isEmpty else { fail("\(patchPath): no sample files found") }
    let players = Players()
    func loadPatch() throws { players.replace(with: try files.map { try AudioPlayer(contentsOf: $0, session: session) }) }
    try loadPatch()
    let node = try PlayerNode(session: session, scheduleCapacity: 64)
    let stop = Date().addingTimeInterval(seconds)
    let callCount = Atomic<Int>(0)

    let threads = (0..<4).map { t in
        Thread {
            var rng = SystemRandomNumberGenerator()
            var n = 0
            var block = 0
            while Date() < stop {
                if t == 3 {
                    // The PlayerNode feeder: generated buffers, endlessly, as a synth would.
                    let tone = (0..<512).map { i in Float(sin(Double(block * 512 + i) * 0.03)) * 0.05 }
                    do {
                        try node.scheduleBuffer(AudioBuffer(channels: [tone], sampleRate: session.sampleRate))
                        block += 1
                        if block == 8 { node.play() }
                    } catch { Thread.sleep(forTimeInterval: 0.005) }
                    n += 1
                    continue
                }
                guard let p = players.random() else { continue }
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: p.play()
                case 1: p.play(atFrame: session.lastRenderTime.sampleTime.map { $0 + Int64.random(in: 256...9600, using: &rng) } ?? 0)
                case 2: p.stop()
                case 3: p.pause()
                case 4: p.currentTime = Double.random(in: 0...max(0, p.duration), using: &rng)
                case 5: p.setVolume(Float.random(in: 0...1, using: &rng), fadeDuration: Double.random(in: 0...0.2, using: &rng))
                case 6: p.pan = Float.random(in: -1...1, using: &rng)
                case 7: p.numberOfLoops = Int.random(in: -1...2, using: &rng)
                case 8: p.enableRate = true; p.rate = Float.random(in: 0.5...2, using: &rng)
                default: p.updateMeters()
                }
                n += 1
                Thread.sleep(forTimeInterval: 0.001)
            }
            callCount.add(n, ordering: .relaxed)
        }
    }
    threads.forEach { $0.start() }
    // Warm up before the first measurement: sounds decoded, arenas mapped, caches filled.
    Thread.sleep(forTimeInterval: min(20, seconds / 4))
    let rssStart = residentKilobytes(), fdsStart = openDescriptors()
    var nextReload = Date().addingTimeInterval(reload)
    var reloads = ""
    while Date() < stop {
        Thread.sleep(forTimeInterval: 0.1)
        if Date() > nextReload {
            let started = Date()
            try loadPatch()
            reloads += String(format: "%.6f %.6f\n", started.timeIntervalSince1970, Date().timeIntervalSince1970)
            nextReload = Date().addingTimeInterval(reload)
        }
    }
    if !reloadLog.isEmpty && !FileManager.default.createFile(atPath: reloadLog, contents: Data(reloads.utf8)) {
        fail("\(reloadLog): cannot write the reload log")
    }
    while !threads.allSatisfy(\.isFinished) { Thread.sleep(forTimeInterval: 0.01) }
    node.stop()
    players.replace(with: [])
    Thread.sleep(forTimeInterval: 0.2)  // two periods for the engine to release what was dropped
    let rssEnd = residentKilobytes(), fdsEnd = openDescriptors()
    let lost = session.lostAudio
    session.close()
    print("calls \(callCount.load(ordering: .relaxed))")
    print("rss-start \(rssStart) kB, rss-end \(rssEnd) kB, growth \(rssEnd - rssStart) kB")
    print("fds-start \(fdsStart), fds-end \(fdsEnd)")
    print("lost \(lost.lostPeriods) periods (\(lost.lostFrames) frames), \(lost.repeatedFrames) frames repeated, \(lost.xruns) xruns, \(lost.lateStarts) late starts")
    var failed = false
    if rssEnd - rssStart > maxGrowth { print("FAIL: RSS grew by more than \(maxGrowth) kB"); failed = true }
    if fdsEnd > fdsStart { print("FAIL: open file descriptors grew"); failed = true }
    exit(failed ? 1 : 0)
} catch {
    fail("\(error)")
}
