import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import Testing

/// Session behaviour around other programs: ducking, route changes, wanted connections.
@Suite(.serialized) struct SessionRoutingLiveTests {
    @Test func aDuckingPlayerLowersTheOthersWhileItPlays() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "duck")
        defer { s.close() }
        let capture = try CaptureProcess(server: server, ports: ["duck:out_L"], frames: 48000 * 2)
        let backing = try AudioPlayer(sound: Sound(channels: [[Float](repeating: 0.5, count: 4800)], sampleRate: 48000), session: s)
        backing.pan = -1
        backing.numberOfLoops = -1
        let prompt = try AudioPlayer(sound: Sound(channels: [[Float](repeating: 0.1, count: 24000)], sampleRate: 48000), session: s)
        prompt.pan = 1
        prompt.ducksOthers = (decibels: 12, fadeDuration: 0.01)
        let start = s.deviceCurrentFrame + 4800
        backing.play(atFrame: start)
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > start + 9600 })
        prompt.play()
        #expect(waitUntil(timeout: 3) { !prompt.isPlaying && s.engine.renderedFrame > start + 48000 })
        let recording = try capture.finish()
        let left = recording.channels[0].filter { $0 != 0 }
        let ducked = Float(Gain(decibels: -12).linear) * 0.5
        // Full level before, ducked level while the prompt plays (for most of its 0.5 s), full after.
        #expect(left.first == 0.5)
        #expect(left.filter { abs($0 - ducked) < 1e-4 }.count > 20_000)
        #expect(left.last == 0.5)
    }

    @Test func routeChangesAreReportedAndWantedConnectionsComeBack() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let sink = try CaptureProcess(server: server, ports: ["a", "b"], frames: 48000 * 30, name: "sink", connect: false)
        var configuration = AudioSession.Configuration()
        configuration.name = "routed"
        configuration.serverName = server.name
        configuration.connections = ["sink:in_0", "sink:in_1"]
        let s = try AudioSession(configuration: configuration)
        defer { s.close() }
        let changes = Calls()
        s.onRouteChange = { change in changes.add("\(change.source)>\(change.destination):\(change.connected)", 0) }
        // Another program connects a port: reported.
        try run("/usr/bin/jack_connect", ["routed:out_L", "sink:in_1"], environment: ["JACK_DEFAULT_SERVER": server.name])
        #expect(waitUntil(timeout: 2) { changes.names.contains("routed:out_L>sink:in_1:true") })
        // The sink goes away and comes back: the wanted connections are made again.
        sink.kill()
        #expect(waitUntil(timeout: 2) { changes.names.contains("routed:out_R>sink:in_1:false") })
        // Only what is reported from here on counts: the connections made when the session
        // opened may have been reported before the handler was set.
        let seen = changes.names.count
        let again = try CaptureProcess(server: server, ports: ["a", "b"], frames: 48000 * 30, name: "sink", connect: false)
        defer { again.kill() }
        #expect(waitUntil(timeout: 5) {
            let after = changes.names.dropFirst(seen)
            return after.contains("routed:out_L>sink:in_0:true") && after.contains("routed:out_R>sink:in_1:true")
        })
    }
}
