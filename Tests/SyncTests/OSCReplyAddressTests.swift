import Foundation
import Glibc
import Sync
import Testing

/// Reply addresses come from messages: only well-formed OSC UDP URLs and port numbers are used,
/// read by the program, never handed to liblo's URL parser (which reads past the end of a
/// malformed one: the OSC fuzz target's first find).
@Suite struct OSCReplyAddressTests {
    @Test func wellFormedAddressesAreAccepted() {
        #expect(OSCServer.replyURL("9000") == "osc.udp://127.0.0.1:9000/")
        #expect(OSCServer.replyURL("osc.udp://127.0.0.1:57120/") == "osc.udp://127.0.0.1:57120/")
        #expect(OSCServer.udpEndpoint("osc.udp://[::1]:9000/")! == ("::1", "9000"))
        #expect(OSCServer.udpEndpoint("osc.udp://studio-mac.local:9000")! == ("studio-mac.local", "9000"))
    }

    @Test func malformedAddressesAreRefused() {
        for address in ["osc.", "osc.udp://", "osc.udp://host", "osc.udp://:9000/", "osc.udp://host:0/", "osc.udp://host:70000/",
                        "osc.tcp://host:9000/", "osc.udp://ho st:9000/", "osc.udp://[::1/", "0", "99999", "", "/sampler/x",
                        "osc.udp://" + String(repeating: "a", count: 400) + ":9000/"] {
            #expect(OSCServer.replyURL(address) == nil, "\(address)")
        }
    }

    @Test func sendingToAMalformedAddressFailsQuietly() throws {
        let server = try OSCServer(port: "0", hostNow: { 0 })
        defer { server.close() }
        #expect(!server.send("/x", [], to: "osc."))
        #expect(!server.send("/x", [], to: "osc.udp://nohost"))
    }

    /// Replies go only to numeric addresses (issue 52: a name was resolved with getaddrinfo on
    /// the control thread, where a slow resolver stalls it): a name is refused before any lookup
    /// (these names would never resolve, so no query leaves the machine either way).
    @Test func replyAddressesNamingAHostAreRefusedBeforeAnyLookup() throws {
        #expect(OSCServer.replyURL("osc.udp://[::1]:9000") == "osc.udp://[::1]:9000/")
        // One form per endpoint: a registration and its unregistration match however written.
        #expect(OSCServer.replyURL("osc.udp://[0:0::1]:09000/") == "osc.udp://[::1]:9000/")
        for address in ["osc.udp://localhost:9000/", "osc.udp://studio-mac.local:9000/", "osc.udp://reply.invalid:9000/"] {
            #expect(OSCServer.replyURL(address) == nil, "\(address)")
            // A name (as liblo's servers give their URLs) means the sender's own address.
            #expect(OSCServer.replyURL(address, source: "osc.udp://127.0.0.1:41000/") == "osc.udp://127.0.0.1:9000/")
        }
        let server = try OSCServer(port: "0", hostNow: { 0 })
        defer { server.close() }
        let started = Date()
        #expect(!server.send("/x", [], to: "osc.udp://reply.invalid:9000/"))
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(server.send("/x", [], to: "osc.udp://127.0.0.1:9/"))
    }
}
