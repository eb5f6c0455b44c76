import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit

// Helpers shared by the suites of SamplerKitTests.

/// A mono sound whose frame i is i / 100000: any captured sample tells which frame played.
func markerSound(frames: Int = 48000) throws -> Sound {
    try Sound(channels: [(0..<frames).map { Float($0) / 100_000 }], sampleRate: 48000)
}

func position(of sample: Float) -> Int { Int((sample * 100_000).rounded()) }

func session(on server: JACKServer, name: String, reconnect: Bool = false) throws -> AudioSession {
    var configuration = AudioSession.Configuration()
    configuration.name = name
    configuration.serverName = server.name
    configuration.connections = []
    configuration.reconnect = reconnect
    return try AudioSession(configuration: configuration)
}

final class FinishRecorder: AudioPlayerDelegate, @unchecked Sendable {
    let lock = NSLock()
    var finishes: [Bool] = []
    var interruptions: [String] = []
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { lock.withLock { finishes.append(flag) } }
    func audioPlayerBeginInterruption(_ player: AudioPlayer) { lock.withLock { interruptions.append("began") } }
    func audioPlayerEndInterruption(_ player: AudioPlayer) { lock.withLock { interruptions.append("ended") } }
}

final class Calls: @unchecked Sendable {
    let lock = NSLock()
    var log: [(String, Frame)] = []
    func add(_ name: String, _ frame: Frame) { lock.withLock { log.append((name, frame)) } }
    var names: [String] { lock.withLock { log.map(\.0) } }
}

/// This process's resident memory in kB (VmRSS).
func residentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

/// A delegate that ignores every call (the stress tests').
/// `@unchecked Sendable` by contract: stateless.
final class NullDelegate: AudioPlayerDelegate, @unchecked Sendable {}

/// One control thread's share of the stress tests: calls SamplerKit's public API at random on
/// shared players (and a player of its own that comes and goes) until `deadline`. Returns the
/// number of calls; samples RSS into `rss` every 2,000 calls when given one.
func callEverythingAtRandom(session: AudioSession, players: [AudioPlayer], node: PlayerNode, sound: Sound,
                            delegate: AudioPlayerDelegate, until deadline: Date, completions: Locked<Int>,
                            rss: Locked<[Int]>?) -> Int {
    var rng = SystemRandomNumberGenerator()
    var own: AudioPlayer?
    var n = 0
    while Date() < deadline {
        let p = players[Int.random(in: 0..<players.count, using: &rng)]
        switch Int.random(in: 0..<24, using: &rng) {
        case 0: p.play()
        case 1: p.play(atFrame: session.engine.renderedFrame + Frame.random(in: -2000...4000, using: &rng))
        case 2: p.stop()
        case 3: p.pause()
        case 4: p.volume = Float.random(in: 0...1.5, using: &rng)
        case 5: p.setVolume(Float.random(in: 0...1, using: &rng), fadeDuration: Double.random(in: 0...0.1, using: &rng))
        case 6: p.pan = [Float.nan, -2, -1, 0, 0.3, 1, 5][Int.random(in: 0..<7, using: &rng)]
        case 7: p.numberOfLoops = Int.random(in: -1...3, using: &rng)
        case 8: p.enableRate = Bool.random(using: &rng)
        case 9: p.rate = [Float.nan, 0, 0.5, 1, 1.7, 9][Int.random(in: 0..<6, using: &rng)]
        case 10: p.isMeteringEnabled = Bool.random(using: &rng)
        case 11: p.updateMeters(); _ = p.averagePower(forChannel: 0) + p.peakPower(forChannel: 1)
        case 12: p.currentTime = Double.random(in: -1...0.2, using: &rng)
        case 13: _ = p.currentTime + p.duration; _ = p.isPlaying
        case 14: p.ducksOthers = Bool.random(using: &rng) ? (decibels: -12, fadeDuration: 0.05) : nil
        case 15: p.delegate = Bool.random(using: &rng) ? delegate : nil
        case 16: _ = try? node.scheduleBuffer(sound, completionHandler: { completions.withLock { $0 += 1 } })
        case 17: node.play()
        case 18: node.pause()
        case 19: node.stop()
        case 20: own = try? AudioPlayer(sound: sound, session: session); own?.play()
        case 21: own = nil
        case 22: _ = session.lostAudio; _ = session.deviceCurrentTime; session.onRouteChange = Bool.random(using: &rng) ? { _ in } : nil
        default: _ = node.playerTime(forNodeTime: session.lastRenderTime)
        }
        n += 1
        if let rss, n % 2000 == 0 { rss.withLock { $0.append(residentKilobytes()) } }
    }
    return n
}

/// Names of the clients on `server` (from `jack_lsp`).
func clientNames(on server: JACKServer) throws -> Set<String> {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/jack_lsp")
    p.environment = ProcessInfo.processInfo.environment.merging(["JACK_DEFAULT_SERVER": server.name]) { $1 }
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return Set(String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { $0.split(separator: ":").first.map(String.init) })
}
