import Foundation
import JACKBackend
import SamplerCore
import JACKTestSupport
import Testing

/// Starts requested on device frames are captured, by an independent JACK client, on exactly
/// those frames, for several period sizes.
@Suite(.serialized) struct ExactStartTests {
    @Test(arguments: [256, 64, 1024])
    func startsLandOnTheRequestedFramesInTheCapture(period: Int) throws {
        let server = try JACKServer(period: period)
        defer { server.stop() }
        let engine = Engine()
        let click = try engine.register(shortClick())
        // For the late start: sample i is (i + 1) / 4096, so the captured value names the sample.
        let ramp = try engine.register(Sound(channels: [(0..<6000).map { Float($0 + 1) / 16384 }], sampleRate: 48000))
        let client = try JACKClient(name: "exact", serverName: server.name, engine: engine)
        defer { client.close() }
        try client.activate()
        let capture = try CaptureProcess(server: server, ports: client.outputPortNames, frames: 48000 * 3)
        #expect(waitUntil(timeout: 5) { engine.periodCount > 0 })

        let p = Int64(period)
        let spacing = max(4 * p, 4096)
        let base = ((client.currentFrame() + 14_400) / p + 1) * p
        let left = PanGains(pan: -1), right = PanGains(pan: 1)
        var expectedLeft: [Int64] = []

        // One start per block of `spacing` frames, at offsets inside a period: first frame, second,
        // last, the next period's first and second, and a few random ones.
        var rng = SystemRandomNumberGenerator()
        let offsets = [0, 1, p - 1, p, p + 1] + (0..<5).map { _ in Int64.random(in: 0..<p, using: &rng) }
        for (k, offset) in offsets.enumerated() {
            let frame = base + Int64(k) * spacing + offset
            engine.send(.start(player: 0, sound: click, at: frame, pan: left))
            expectedLeft.append(frame)
        }
        // Several starts inside one period, on several players.
        let inOne = base + 11 * spacing
        for (i, offset) in [3, p / 4, p / 2, p - 1].enumerated() {
            engine.send(.start(player: 1 + i, sound: click, at: inOne + offset, pan: left))
            expectedLeft.append(inOne + offset)
        }
        // Two players on the same frame sum there.
        let together = base + 12 * spacing + p / 2
        engine.send(.start(player: 5, sound: click, at: together, gain: Gain(linear: 0.3), pan: left))
        engine.send(.start(player: 6, sound: click, at: together, gain: Gain(linear: 0.4), pan: left))
        expectedLeft.append(together)
        // Gain and pan show in the captured levels.
        let panned = base + 13 * spacing + 7
        engine.send(.start(player: 7, sound: click, at: panned, gain: Gain(linear: 0.5), pan: PanGains(pan: 0.5)))
        expectedLeft.append(panned)

        // A start whose frame has already passed plays at once, from the sample it would have
        // reached, and is reported late. Sent 16 periods after the capture is recording, so its
        // first audible frame and the one before are both in the recording.
        let recordingBy = engine.periodCount
        #expect(waitUntil(timeout: 2) { engine.periodCount >= recordingBy + 16 })
        let asked = engine.renderedFrame - 100
        engine.send(.start(player: 8, sound: ramp, at: asked, pan: right))
        var late: Event?, lateStart: Event?
        #expect(waitUntil(timeout: 2) {
            engine.drainEvents { e in
                if e.kind == .lateStart { late = e }
                if e.kind == .started && e.player == 8 { lateStart = e }
            }
            return late != nil
        })

        let recording = try capture.finish()
        #expect(recording.sampleRate == 48000)
        #expect(recording.onsets(channel: 0, quietGap: 4) == expectedLeft.sorted())

        let both = recording.sample(channel: 0, at: together)
        #expect(abs(both - 0.7) < 1e-6)
        let theta = 0.75 * Double.pi / 2
        let dBLeft = 20 * log10(Double(recording.sample(channel: 0, at: panned)) / (0.5 * cos(theta)))
        let dBRight = 20 * log10(Double(recording.sample(channel: 1, at: panned)) / (0.5 * sin(theta)))
        #expect(abs(dBLeft) < 0.1 && abs(dBRight) < 0.1)

        #expect(lateStart?.frame == asked)
        let lateBy = try #require(late?.value)
        #expect(lateBy >= 100 && lateBy < 6000)
        let heard = asked + lateBy
        let span = recording.firstFrame..<(recording.firstFrame + Int64(recording.channels[1].count))
        try #require(span.contains(heard - 1) && span.contains(heard), "late start heard at \(heard), capture \(span)")
        #expect(recording.onsets(channel: 1, threshold: 1e-6, quietGap: 4) == [heard, panned].sorted())
        #expect(recording.sample(channel: 1, at: heard) == Float(lateBy + 1) / 16384)
        #expect(recording.sample(channel: 1, at: heard - 1) == 0)
    }
}
