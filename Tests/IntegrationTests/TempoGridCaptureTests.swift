import Foundation
import JACKBackend
import JACKTestSupport
import SamplerCore
import SamplerKit
import ProgramHost
import Scheduling
import Testing

/// A minute of beats at 120, 113 and 97.3 bpm, each on its own client of one dummy server, all
/// captured by one external client: every onset is at round(k × 60 × rate / bpm) frames from the
/// first, with no drift.
@Suite(.serialized) struct TempoGridCaptureTests {
    final class GridPlayer: @unchecked Sendable {
        let engine = Engine()
        let client: JACKClient
        let bpm: Double
        var origin: Frame = 0
        private var feeder: CommandFeeder?
        private var thread: Thread?
        private let stop = NSCondition()
        private var stopped = false

        init(server: JACKServer, bpm: Double) throws {
            self.bpm = bpm
            client = try JACKClient(name: "grid\(Int(bpm * 10))", serverName: server.name, engine: engine)
            try client.activate()
        }

        func start(at origin: Frame) throws {
            self.origin = origin
            let click = try engine.register(shortClick())
            let sequencer = StepSequencer(steps: [[0]], bpm: bpm, stepsPerBeat: 1, sampleRate: 48000, origin: origin)
            feeder = CommandFeeder(source: sequencer) { .start(player: $0.player, sound: click, at: $0.frame, pan: PanGains(pan: -1)) }
            let t = Thread { [self] in
                while true {
                    feeder!.feed(engine, before: engine.renderedFrame + 9600)
                    engine.drainEvents { _ in }
                    stop.lock()
                    // Wake every 10 ms to feed, or at once when told to stop.
                    let done = stopped || stop.wait(until: Date().addingTimeInterval(0.01)) && stopped
                    stop.unlock()
                    if done { return }
                }
            }
            thread = t
            t.start()
        }

        func finish() {
            stop.lock(); stopped = true; stop.signal(); stop.unlock()
            client.close()
        }
    }

    /// 20 s at each tempo: a grid built by adding rounded intervals is off by a frame within a
    /// few clicks (jack_metro's truncated period: one frame a click), so length adds nothing.
    @Test func twentySecondsAtThreeTemposHaveNoOnsetError() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let players = try [120.0, 113.0, 97.3].map { try GridPlayer(server: server, bpm: $0) }
        defer { players.forEach { $0.finish() } }
        let seconds = 21
        let capture = try CaptureProcess(server: server, ports: players.map { $0.client.outputPortNames[0] },
                                         frames: 48000 * seconds)
        #expect(waitUntil(timeout: 5) { players.allSatisfy { $0.engine.periodCount > 0 } })
        let origin = players[0].client.currentFrame() + 9600
        for p in players { try p.start(at: origin) }

        let recording = try capture.finish()
        let end = recording.firstFrame + Int64(recording.channels[0].count) - 16
        for (c, p) in players.enumerated() {
            let onsets = recording.onsets(channel: c)
            var expected: [Int64] = []
            var k: Int64 = 0
            while true {
                let f = origin + Int64((Double(k) * 60 * 48000 / p.bpm).rounded())
                if f >= end { break }
                expected.append(f)
                k += 1
            }
            #expect(expected.count >= Int(p.bpm / 3 * 0.98))
            #expect(onsets == expected, "\(p.bpm) bpm: \(onsets.count) onsets captured, \(expected.count) expected")
            let errors = zip(onsets, expected).map { abs($0 - $1) }
            #expect(errors.max() ?? 0 == 0, "\(p.bpm) bpm: largest onset error \(errors.max() ?? -1) frames")
        }
    }
}
