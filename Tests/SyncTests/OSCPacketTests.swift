import Foundation
import SamplerCore
import Sync
import Testing

/// OSC datagrams as `OSCServer` reads them: bundles walked with a depth limit, messages parsed by
/// liblo, timetags kept per bundle.
@Suite struct OSCPacketTests {
    /// An OSC string: the bytes, a NUL, padded to four.
    static func padded(_ s: String) -> [UInt8] {
        var b = Array(s.utf8) + [0]
        while b.count % 4 != 0 { b.append(0) }
        return b
    }
    static func message(_ path: String, int: Int32? = nil) -> [UInt8] {
        var b = padded(path) + padded(int == nil ? "," : ",i")
        if let int { b += withUnsafeBytes(of: int.bigEndian) { Array($0) } }
        return b
    }
    static func bundle(seconds: UInt32, fraction: UInt32 = 0, _ elements: [[UInt8]]) -> [UInt8] {
        var b = padded("#bundle") + withUnsafeBytes(of: seconds.bigEndian) { Array($0) } + withUnsafeBytes(of: fraction.bigEndian) { Array($0) }
        for e in elements { b += withUnsafeBytes(of: UInt32(e.count).bigEndian) { Array($0) } + e }
        return b
    }
    static func parse(_ bytes: [UInt8]) -> (elements: [OSCPacket.Element], dropped: String?) {
        bytes.withUnsafeBytes { OSCPacket.parse($0) }
    }

    @Test func aPlainMessageHasItsPathArgumentsAndNoTimetag() {
        let (elements, dropped) = Self.parse(Self.message("/sampler/trigger", int: 3))
        #expect(dropped == nil)
        #expect(elements.count == 1)
        #expect(elements.first?.path == "/sampler/trigger")
        #expect(elements.first?.arguments == [.int(3)])
        #expect(elements.first?.timetag == nil)
    }

    @Test func nestedBundlesGiveEachMessageItsOwnBundlesTimetag() {
        let inner = Self.bundle(seconds: 200, [Self.message("/b")])
        let packet = Self.bundle(seconds: 100, [Self.message("/a"), inner, Self.message("/c")])
        let (elements, dropped) = Self.parse(packet)
        #expect(dropped == nil)
        #expect(elements.map(\.path) == ["/a", "/b", "/c"])
        #expect(elements.map { $0.timetag?.seconds } == [100, 200, 100])
    }

    @Test func theImmediateTimetagMeansNone() {
        let (elements, _) = Self.parse(Self.bundle(seconds: 0, fraction: 1, [Self.message("/now")]))
        #expect(elements.count == 1 && elements[0].timetag == nil)
    }

    @Test func bundlesNestedTooDeepAreDropped() {
        var packet = Self.message("/deep")
        for _ in 0...OSCPacket.maximumDepth { packet = Self.bundle(seconds: 100, [packet]) }
        let (elements, dropped) = Self.parse(packet)
        #expect(elements.isEmpty)
        #expect(dropped?.contains("nested") == true)
    }

    @Test func aTruncatedOrOversizedElementIsDroppedAndWhatCameBeforeIsKept() {
        var packet = Self.bundle(seconds: 100, [Self.message("/first")])
        packet += withUnsafeBytes(of: UInt32(1 << 20).bigEndian) { Array($0) } + Self.message("/second")
        let (elements, dropped) = Self.parse(packet)
        #expect(elements.map(\.path) == ["/first"])
        #expect(dropped != nil)
        #expect(Self.parse(Array(Self.message("/x", int: 1).dropLast(2))).elements.isEmpty)
        #expect(Self.parse([0x2f, 0, 0]).elements.isEmpty)
        #expect(Self.parse([]).elements.isEmpty)
    }
}

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
