import NSM
import Sync
import Testing

/// The NSM API 1.1 messages: what is sent, and what the server's messages mean.
@Suite struct NSMProtocolTests {
    @Test func announceCarriesNameCapabilitiesExecutableAPIAndPid() {
        let (path, arguments) = NSMProtocol.announce(applicationName: "sampler metronome", capabilities: ["dirty"], executable: "sampler", pid: 4242)
        #expect(path == "/nsm/server/announce")
        #expect(arguments == [.string("sampler metronome"), .string(":dirty:"), .string("sampler"), .int(1), .int(1), .int(4242)])
    }

    @Test func serverMessagesAreRead() {
        #expect(NSMProtocol.event(OSCMessage(path: "/reply", arguments: [.string("/nsm/server/announce"), .string("hi"), .string("nsmd"), .string(":server-control:")]))
                == .announced(message: "hi", serverName: "nsmd", capabilities: ":server-control:"))
        #expect(NSMProtocol.event(OSCMessage(path: "/nsm/client/open", arguments: [.string("/s/c"), .string("Session"), .string("sampler.nABCD")]))
                == .open(NSMOpen(path: "/s/c", displayName: "Session", clientID: "sampler.nABCD")))
        #expect(NSMProtocol.event(OSCMessage(path: "/nsm/client/save")) == .save)
        #expect(NSMProtocol.event(OSCMessage(path: "/error", arguments: [.string("/nsm/server/announce"), .int(-2), .string("old API")]))
                == .failed(path: "/nsm/server/announce", code: -2, message: "old API"))
        #expect(NSMProtocol.event(OSCMessage(path: "/nsm/client/session_is_loaded")) == .sessionIsLoaded)
    }

    @Test func malformedMessagesAreIgnoredNotTrusted() {
        #expect(NSMProtocol.event(OSCMessage(path: "/nsm/client/open", arguments: [.string("/s/c"), .int(1), .string("x")])) == .ignored("/nsm/client/open ,sis"))
        #expect(NSMProtocol.event(OSCMessage(path: "/reply", arguments: [.string("/nsm/client/save")])) == .ignored("/reply ,s"))
        #expect(NSMProtocol.event(OSCMessage(path: "/error", arguments: [.string("/x")])) == .ignored("/error ,s"))
    }

    @Test func repliesErrorsAndDirtyState() {
        #expect(NSMProtocol.reply(to: "/nsm/client/save", "saved").arguments == [.string("/nsm/client/save"), .string("saved")])
        #expect(NSMProtocol.error(to: "/nsm/client/open", code: .badProject, "bad").arguments == [.string("/nsm/client/open"), .int(-9), .string("bad")])
        #expect(NSMProtocol.dirty(true).path == "/nsm/client/is_dirty")
        #expect(NSMProtocol.dirty(false).path == "/nsm/client/is_clean")
    }

    @Test func aBadNSMURLIsOneLineNamingIt() {
        #expect(throws: NSMError("NSM_URL must be an OSC UDP address such as osc.udp://localhost:12345/, got \"http://x\"")) {
            try NSMClient(url: "http://x")
        }
    }
}
