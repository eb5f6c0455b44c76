import Foundation
import JACKTestSupport
import SamplerCore
@testable import SamplerKit
import Testing

/// Records the engine's rendered frame at each `audioPlayerDidFinishPlaying`.
final class FinishFrames: AudioPlayerDelegate, @unchecked Sendable {
    // Contract: `frames` is appended to by the session's event thread and read by the test, both
    // under `lock`.
    let lock = NSLock()
    var frames: [Frame] = []
    let engine: Engine
    init(engine: Engine) { self.engine = engine }
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
        lock.withLock { frames.append(engine.renderedFrame) }
    }
    var recorded: [Frame] { lock.withLock { frames } }
}

/// A player slot passed from one owner to the next (issue 14: generations).
@Suite(.serialized) struct SlotReuseLiveTests {
    /// The first owner's sound ends and its `finished` event waits in the queue (the test holds
    /// the session's event thread, so it cannot drain it) while the slot is released and
    /// taken by a new player that starts a long sound. The old event must not end the new
    /// player: with per-player tags both starts had tag 1, and the new player was reported
    /// finished at once, a second before its sound ended.
    @Test func aSlotsNewOwnerNeverTakesItsPreviousOwnersEvents() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "slotreuse")
        defer { s.close() }
        s.eventsHeld.store(true, ordering: .releasing)
        var first: AudioPlayer? = try AudioPlayer(sound: markerSound(frames: 64), session: s)
        let firstStart = s.earliestStartFrame
        #expect(first!.play(atFrame: firstStart))
        let ended = waitUntil(timeout: 3) { s.engine.renderedFrame > firstStart + 64 + 256 }
        first = nil
        let second = try AudioPlayer(sound: markerSound(frames: 48000), session: s)
        let log = FinishFrames(engine: s.engine)
        second.delegate = log
        let secondStart = s.earliestStartFrame
        #expect(second.play(atFrame: secondStart))
        s.eventsHeld.store(false, ordering: .releasing)
        #expect(ended)
        #expect(waitUntil(timeout: 4) { !log.recorded.isEmpty })
        let frames = log.recorded
        #expect(frames.count == 1)
        #expect((frames.first ?? 0) >= secondStart + 48000, "finished at \(frames.first ?? 0), its sound ends at \(secondStart + 48000)")
    }
}
