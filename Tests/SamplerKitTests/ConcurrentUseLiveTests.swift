import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit
import Testing

/// Eight control threads call SamplerKit's public API at random on shared players for 60 s,
/// while players come and go: nothing crashes or deadlocks, no bad value reaches the render
/// thread, the session's client goes away at the end, and memory stays flat.
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

@Suite(.serialized) struct ConcurrentUseLiveTests {
    @Test func eightThreadsCallingEverythingAtRandom() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let seconds = 30.0
        let session = try session(on: server, name: "stress")
        let sound = try markerSound(frames: 4800)
        let players = try (0..<4).map { _ in try AudioPlayer(sound: sound, session: session) }
        let node = try PlayerNode(session: session, scheduleCapacity: 32)
        let delegate = NullDelegate()
        let calls = Locked(0)
        let rss = Locked<[Int]>([])
        let deadline = Date().addingTimeInterval(seconds)
        let threads = (0..<8).map { t in
            Thread {
                let n = callEverythingAtRandom(session: session, players: players, node: node, sound: sound, delegate: delegate,
                                               until: deadline, completions: calls, rss: t == 0 ? rss : nil)
                calls.withLock { $0 += n }
            }
        }
        threads.forEach { $0.start() }
        #expect(waitUntil(timeout: seconds + 30) { threads.allSatisfy(\.isFinished) }, "a control thread is stuck")
        #expect(session.engine.nonFiniteOutputCount == 0)
        #expect(session.engine.refusedCommandCount == 0, "a bad value got as far as the engine")
        print("\(calls.withLock { $0 }) calls from 8 threads in \(seconds) s; RSS samples (kB): \(rss.withLock { $0 }.prefix(3))…\(rss.withLock { $0 }.suffix(3))")
        let samples = rss.withLock { $0 }
        if samples.count >= 4 {
            let settled = samples[samples.count / 4], last = samples.last!
            #expect(last - settled < 16_000, "RSS grew from \(settled) to \(last) kB")
        }
        session.close()
        #expect(waitUntil(timeout: 5) { (try? clientNames(on: server).contains("stress")) == false }, "the client stayed")
    }
}
