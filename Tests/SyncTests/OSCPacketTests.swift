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
