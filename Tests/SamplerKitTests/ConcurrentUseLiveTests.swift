import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit
import Testing

/// Eight control threads call SamplerKit's public API at random on shared players for 60 s,
/// while players come and go: nothing crashes or deadlocks, no bad value reaches the render
/// thread, the session's client goes away at the end, and memory stays flat.
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
