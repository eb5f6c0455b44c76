import Foundation
import JACKTestSupport
import Locking
import SamplerKit
import Testing

/// JACK stops running a session's client while its server runs on (here the client feeding its
/// midi_in hangs, on purpose; JACK2's bug jackaudio/jack2#721 leaves a client the same way): after
/// `stallTimeout` the session treats it as an interruption and, with `reconnect`, opens a new
/// client, which JACK runs again.
@Suite(.serialized) struct SessionStallLiveTests {
    @Test func aClientJACKStopsRunningIsAnInterruptionAndReconnectingResumes() throws {
        let server = try JACKServer(period: 256, synchronous: false)
        defer { server.stop() }
        var configuration = AudioSession.Configuration()
        configuration.name = "stallsession"
        configuration.serverName = server.name
        configuration.connections = []
        configuration.reconnect = true
        configuration.stallTimeout = 2
        let session = try AudioSession(configuration: configuration)
        defer { session.close() }
        let events = Locked<[String]>([])
        session.onInterruptionBegan = { events.withLock { $0.append("began") } }
        session.onInterruptionEnded = { events.withLock { $0.append("ended") } }
        let hanging = try BackgroundProgram.hangingClient(server: server, to: "stallsession:midi_in", afterCycle: 200)
        defer {
            hanging.terminate()
            _ = hanging.finish()
        }
        #expect(waitUntil(timeout: 30) { events.withLock { $0 } == ["began", "ended"] }, "\(events.withLock { $0 })")
        // The new client is run: the session's render time moves on by a tenth of a second.
        let before = session.lastRenderTime.sampleTime ?? 0
        #expect(waitUntil(timeout: 10) { (session.lastRenderTime.sampleTime ?? 0) > before + 4800 })
        #expect(!session.isInterrupted)
    }
}
