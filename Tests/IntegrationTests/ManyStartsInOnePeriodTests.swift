import Foundation
import JACKBackend
import SamplerCore
import JACKTestSupport
import Testing

@Suite(.serialized) struct ManyStartsInOnePeriodTests {
    /// 256 starts, one on every frame of one 256-frame period, each on its own player, each a
    /// one-frame impulse: the capture shows exactly one impulse on every frame of that period.
    @Test func everyFrameOfAPeriodCanHoldAStart() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let engine = Engine(configuration: .init(maxPlayers: 256))
        let impulse = try engine.register(Sound(channels: [[1]], sampleRate: 48000))
        let client = try JACKClient(name: "many", serverName: server.name, engine: engine)
        defer { client.close() }
        try client.activate()
        let capture = try CaptureProcess(server: server, ports: ["many:out_L"], frames: 48000)
        #expect(waitUntil(timeout: 5) { engine.periodCount > 0 })
        let base = (client.currentFrame() / 256 + 40) * 256
        for i in 0..<256 { engine.send(.start(player: i, sound: impulse, at: base + Frame(i), pan: PanGains(pan: -1))) }
        let recording = try capture.finish()
        let period = (0..<256).map { recording.sample(channel: 0, at: base + Frame($0)) }
        #expect(period == [Float](repeating: 1, count: 256))
        #expect(recording.sample(channel: 0, at: base - 1) == 0)
        #expect(recording.sample(channel: 0, at: base + 256) == 0)
        #expect(engine.lateStartCount == 0)
    }
}
