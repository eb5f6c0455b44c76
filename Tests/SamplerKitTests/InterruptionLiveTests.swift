import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import Locking
import Synchronization
import Testing

/// The server going away and coming back.
@Suite(.serialized) struct InterruptionLiveTests {
    @Test func killingTheServerInterruptsAndRestartingItRecovers() throws {
        let name = "sampler-test-\(getpid())-interrupt"
        var server = try JACKServer(period: 256, name: name)
        defer { server.stop() }
        let s = try session(on: server, name: "interrupt", reconnect: true)
        defer { s.close() }
        let events = Calls()
        s.onInterruptionBegan = { events.add("began", 0) }
        s.onInterruptionEnded = { events.add("ended", 0) }
        let player = try AudioPlayer(sound: markerSound(), session: s)
        let recorder = FinishRecorder()
        player.delegate = recorder
        player.numberOfLoops = -1
        player.play()
        #expect(waitUntil(timeout: 2) { player.currentTime > 0.05 })
        // Scheduled on the old server's clock, 0.5 s ahead: the new server's clock starts afresh
        // and will pass that frame number soon, but nothing scheduled on the old one may play.
        let pending = try AudioPlayer(sound: markerSound(), session: s)
        let oldFrame = s.engine.renderedFrame + 24_000
        pending.play(atFrame: oldFrame)
        server.kill9()
        #expect(waitUntil(timeout: 3) { events.names == ["began"] })
        #expect(recorder.lock.withLock { recorder.finishes } == [false])
        #expect(!player.isPlaying)
        server = try JACKServer(period: 256, name: name)
        #expect(waitUntil(timeout: 5) { events.names == ["began", "ended"] })
        #expect(recorder.lock.withLock { recorder.interruptions } == ["began", "ended"])
        // Plays again on the new server's clock.
        player.play()
        let before = s.engine.renderedFrame
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > before + 4800 && player.isPlaying && s.engine.isActive(player: 0) })
        #expect(waitUntil(timeout: 5) { s.engine.renderedFrame > oldFrame + 4800 })
        #expect(!s.engine.isActive(player: 1), "a start scheduled on the old server's clock played on the new one")
    }
}
