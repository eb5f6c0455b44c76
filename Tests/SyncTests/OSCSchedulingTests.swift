import Foundation
import SamplerCore
import Sync
import Testing

/// Timed OSC messages are bounded: an hour ahead at most, and a fixed number waiting at a time.
@Suite struct OSCSchedulingTests {
    @Test func theLimitAdmitsUpToItsCapacityAndFreesWhatWasRendered() {
        let limit = OSCTimedQueue(capacity: 3)
        #expect(limit.admit(100, rendered: 0))
        #expect(limit.admit(300, rendered: 0))
        #expect(limit.admit(200, rendered: 0))
        #expect(!limit.admit(400, rendered: 0))
        #expect(limit.admit(400, rendered: 150))
        #expect(limit.waiting == 3)
        #expect(limit.admit(500, rendered: 1000))
        #expect(limit.waiting == 1)
    }

    @Test func aTimetagMoreThanAnHourAheadIsRefusedBeforeAnyFrameArithmetic() {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let now: UInt64 = 1_000_000_000
        var m = OSCMessage(path: "/sampler/stop")
        m.hostTime = now + UInt64(3601 * 1e6)
        var converted = false
        let refused = m.placement(engine: engine, sampleRate: 48000, hostNow: now, frameAt: { _ in converted = true; return 0 })
        guard case .refused(let why) = refused else { Issue.record("placed: \(refused)"); return }
        #expect(why.contains("one hour"))
        #expect(!converted)
        // Far ahead of any 32-bit frame count: refused the same way.
        m.hostTime = .max
        #expect(m.placement(engine: engine, sampleRate: 48000, hostNow: now, frameAt: { _ in 0 }) != .at(frame: 0, when: ""))
    }

    @Test func aTimedMessageIsRefusedWhileTheLimitIsFullAndAnUntimedOneIsNot() {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let limit = OSCTimedQueue(capacity: 2)
        var m = OSCMessage(path: "/sampler/stop")
        m.hostTime = 1_050_000
        #expect(m.placement(engine: engine, sampleRate: 48000, hostNow: 1_000_000, frameAt: { _ in 48000 }, limit: limit)
                == .at(frame: 48000, when: "on its timetag"))
        // Held (a second ahead), counted against the same limit.
        m.hostTime = 2_000_000
        #expect(m.placement(engine: engine, sampleRate: 48000, hostNow: 1_000_000, frameAt: { _ in 96000 }, limit: limit) == .held)
        guard case .refused(let why) = m.placement(engine: engine, sampleRate: 48000, hostNow: 1_000_000, frameAt: { _ in 48000 }, limit: limit) else {
            Issue.record("a third timed message was admitted"); return
        }
        #expect(why.contains("queue is full"))
        m.hostTime = nil
        if case .refused = m.placement(engine: engine, sampleRate: 48000, hostNow: 1_000_000, frameAt: { _ in 0 }, limit: limit) {
            Issue.record("an untimed message was refused")
        }
    }

    /// A message due beyond the horizon is mapped to its frame only when it comes near: the
    /// mapping then in force decides its frame, not the one when it arrived.
    @Test func aHeldMessageIsMappedWhenItComesNearWithTheTimetagConvertedAfresh() {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let queue = OSCTimedQueue()
        let unix = OSCTime.realtimeMicroseconds() + 1_000_000
        let late = OSCMessage(path: "/b", hostTime: 5_000_000, unixMicroseconds: unix)
        let early = OSCMessage(path: "/a", hostTime: 3_000_000, unixMicroseconds: unix - 2_000_000)
        var mapped = 0
        #expect(late.placement(engine: engine, sampleRate: 48000, hostNow: 1_000_000, frameAt: { _ in mapped += 1; return 0 }, limit: queue) == .held)
        #expect(early.placement(engine: engine, sampleRate: 48000, hostNow: 1_000_000, frameAt: { _ in mapped += 1; return 0 }, limit: queue) == .held)
        #expect(mapped == 0)
        #expect(queue.heldCount == 2)
        #expect(queue.due(engine: engine, sampleRate: 48000, hostNow: 2_800_000, clock: { 7_000_000 }).isEmpty)
        // Within 100 ms of the earlier one: it alone is released, its host time converted from
        // its timetag by the clock as it reads now (7 s of host time at wall time `unix`).
        let released = queue.due(engine: engine, sampleRate: 48000, hostNow: 2_950_000, clock: { 7_000_000 })
        #expect(released.map(\.path) == ["/a"])
        let host = released.first?.hostTime ?? 0
        #expect(host > 5_900_000 && host < 6_100_000, "\(host)")
        #expect(queue.heldCount == 1)
        #expect(queue.due(engine: engine, sampleRate: 48000, hostNow: 4_950_000, clock: { 7_000_000 }).map(\.path) == ["/b"])
        #expect(queue.waiting == 0)
    }
}
