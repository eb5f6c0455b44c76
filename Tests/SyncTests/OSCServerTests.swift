import Foundation
import Glibc
import Sync
import Testing

/// `OSCServer`'s receiving thread and the control side, with a plain UDP socket as the sender
/// (run under ThreadSanitizer by `make tsan`).
@Suite(.serialized) struct OSCServerTests {
    /// Sends `bytes` to 127.0.0.1:`port` from a socket of its own.
    func send(_ bytes: [UInt8], to port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    func waitFor(_ server: OSCServer, count: Int) -> [OSCMessage] {
        var got: [OSCMessage] = []
        let deadline = Date().addingTimeInterval(10)
        while got.count < count && Date() < deadline {
            got += server.take()
            if got.count < count { usleep(2000) }
        }
        return got
    }

    @Test func datagramsAreTakenInOrderWithTheirSenderAndTimetags() throws {
        let server = try OSCServer(port: "0", hostNow: { 5_000_000 })
        defer { server.close() }
        #expect(server.host == "127.0.0.1" && server.port > 0)
        send(OSCPacketTests.message("/a", int: 1), to: server.port)
        send(OSCPacketTests.bundle(seconds: 3_900_000_000, [OSCPacketTests.message("/b"), OSCPacketTests.message("/c")]), to: server.port)
        let got = waitFor(server, count: 3)
        #expect(got.map(\.path) == ["/a", "/b", "/c"])
        #expect(got.first?.hostTime == nil)
        #expect(got.dropFirst().allSatisfy { $0.hostTime != nil && $0.unixMicroseconds != nil })
        #expect(got.allSatisfy { $0.source.hasPrefix("osc.udp://127.0.0.1:") })
    }

    @Test func aFloodBeyondTheQueueIsDroppedAndCounted() throws {
        let server = try OSCServer(port: "0", hostNow: { 0 })
        defer { server.close() }
        // One datagram holding more messages than the queue keeps.
        let messages = (0..<(OSCServer.maximumQueued + 50)).map { _ in OSCPacketTests.message("/m") }
        send(OSCPacketTests.bundle(seconds: 0, fraction: 1, messages), to: server.port)
        let got = waitFor(server, count: OSCServer.maximumQueued)
        #expect(got.count == OSCServer.maximumQueued)
        // The receiving thread may still be handing over the bundle's last messages.
        var flooded = 0
        let floodDeadline = Date().addingTimeInterval(10)
        while flooded < 50 && Date() < floodDeadline {
            flooded += server.takeDroppedCount()
            if flooded < 50 { usleep(2000) }
        }
        #expect(flooded == 50)
        send([0x2f, 0x78], to: server.port)  // not an OSC message
        let deadline = Date().addingTimeInterval(10)
        var dropped = 0
        while dropped == 0 && Date() < deadline { dropped = server.takeDroppedCount(); usleep(2000) }
        #expect(dropped == 1)
    }

    @Test func closingTwiceAndFromDeinitIsSafe() throws {
        var server: OSCServer? = try OSCServer(port: "0", hostNow: { 0 })
        server?.close()
        server?.close()
        server = try OSCServer(port: "0", hostNow: { 0 })
        server = nil
        #expect(server == nil)
    }
}
