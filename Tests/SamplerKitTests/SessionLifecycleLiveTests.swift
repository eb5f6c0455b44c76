import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import Testing

/// A delegate that closes the session from inside its callback.
final class ClosingDelegate: AudioPlayerDelegate, @unchecked Sendable {
    // Contract: `closed` is written by the event thread and read by the test under `lock`.
    let lock = NSLock()
    var closed = false
    weak var session: AudioSession?
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
        session?.close()
        lock.withLock { closed = true }
    }
}

/// A session's and its players' lifecycle, each on a live session: queued starts forgotten on
/// stop or release, close from a callback, a dropped session's client, sounds given back, lost
/// audio reported, a start that cannot be queued (the findings of issue 14).
@Suite(.serialized) struct SessionLifecycleLiveTests {
    @Test func stopForgetsAStartStillWaitingForItsFrame() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "stopfuture")
        defer { s.close() }
        let player = try AudioPlayer(sound: markerSound(), session: s)
        let at = s.engine.renderedFrame + 4800
        #expect(player.play(atFrame: at))
        player.stop()
        #expect(!player.isPlaying)
        #expect(waitUntil(timeout: 3) { s.engine.renderedFrame > at + 4800 })
        #expect(s.engine.position(ofPlayer: 0) == 0 && !s.engine.isActive(player: 0), "the cancelled start played")
    }

    @Test func aReleasedPlayersQueuedStartNeverPlaysOnTheSlotsNextOwner() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "release")
        defer { s.close() }
        var first: AudioPlayer? = try AudioPlayer(sound: markerSound(), session: s)
        let at = s.engine.renderedFrame + 4800
        #expect(first!.play(atFrame: at))
        first = nil
        let second = try AudioPlayer(sound: markerSound(frames: 100), session: s)
        #expect(waitUntil(timeout: 3) { s.engine.renderedFrame > at + 4800 })
        #expect(!s.engine.isActive(player: 0), "the released player's start played on the slot")
        #expect(!second.isPlaying)
    }

    @Test func closeFromADelegateCallbackReturns() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "closecb")
        let player = try AudioPlayer(sound: markerSound(frames: 2000), session: s)
        let delegate = ClosingDelegate()
        delegate.session = s
        player.delegate = delegate
        player.play()
        #expect(waitUntil(timeout: 3) { delegate.lock.withLock { delegate.closed } }, "close() from the delegate did not return")
        #expect(waitUntil(timeout: 3) { (try? clientNames(on: server).contains("closecb")) == false })
    }

    @Test func aSessionDroppedWithoutCloseGoesAwayWithItsClient() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        weak var weakSession: AudioSession?
        do {
            let s = try session(on: server, name: "dropped")
            weakSession = s
            let player = try AudioPlayer(sound: markerSound(frames: 2000), session: s)
            player.play()
            #expect(try clientNames(on: server).contains("dropped"))
        }
        #expect(waitUntil(timeout: 3) { weakSession == nil }, "the session was not deinitialized")
        #expect(waitUntil(timeout: 3) { (try? clientNames(on: server).contains("dropped")) == false })
    }

    /// A program that makes and drops players (reloading a patch, say) does not keep their sounds
    /// registered: more players than the engine's 1,024 sound slots come and go.
    @Test func droppedPlayersGiveTheirSoundsBack() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "dropsounds")
        defer { s.close() }
        for round in 0..<6 {
            for _ in 0..<250 {
                let player = try AudioPlayer(sound: markerSound(frames: 64), session: s)
                #expect(player.prepareToPlay(), "round \(round): the sound could not be registered")
            }
            // Slots are reused two periods after their release.
            let periods = s.engine.periodCount
            #expect(waitUntil(timeout: 2) { s.engine.periodCount > periods + 2 })
        }
        #expect(s.engine.registeredSoundCount < 300)
    }

    @Test func aSessionReportsLostAudio() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "lost")
        defer { s.close() }
        // A synchronous server loses nothing.
        #expect(waitUntil(timeout: 2) { s.engine.periodCount > 20 })
        let lost = s.lostAudio
        #expect(lost.lostPeriods == 0 && lost.lostFrames == 0 && lost.repeatedFrames == 0)
    }

    /// A start that cannot be queued says so: with the server stopped (SIGSTOP: no period
    /// drains the command queue) the queue fills, and `play()` then returns false and the player
    /// does not read as playing. (Issue 14: send results were ignored.)
    @Test func aStartThatCannotBeQueuedReturnsFalse() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "queuefull")
        defer { s.close() }
        let player = try AudioPlayer(sound: markerSound(), session: s)
        let other = try AudioPlayer(sound: markerSound(), session: s)
        #expect(player.prepareToPlay())
        kill(server.pid, SIGSTOP)
        defer { kill(server.pid, SIGCONT) }
        // The signal takes effect when the kernel next schedules the server (late on a busy
        // machine), and a cycle already under way in our client still ends: wait until the
        // server is stopped and no period has ended for 100 ms (20 periods' time).
        #expect(waitUntil(timeout: 5) { processState(server.pid) == "T" })
        var periods = s.engine.periodCount
        var still = Date()
        #expect(waitUntil(timeout: 5) {
            let now = s.engine.periodCount
            if now != periods { periods = now; still = Date() }
            return Date().timeIntervalSince(still) > 0.1
        })
        // Fill the queue until a command is dropped (4,096 fill it).
        let dropped = s.engine.droppedCommandCount
        for _ in 0..<100_000 where s.engine.droppedCommandCount == dropped {
            other.setVolume(0.5, fadeDuration: 0)
        }
        #expect(s.engine.droppedCommandCount > dropped)
        #expect(player.play() == false)
        #expect(!player.isPlaying)
        kill(server.pid, SIGCONT)
        #expect(waitUntil(timeout: 3) { player.play() })
        #expect(player.isPlaying)
    }
}

/// The state letter of process `pid` (`R`, `S`, `T` for stopped, ...) from /proc, or nil.
func processState(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    return stat[close...].dropFirst(2).first
}
