import Foundation
import SamplerCore
import Testing
@testable import MetronomeKit
import ProgramHost
import Sync
@testable import Scheduling

/// The live metronome's keys, driven period by period through the real engine as LivePlayback
/// drives it (feed ~0.1 s ahead, then tick), without JACK.
@Suite struct MetronomeControllerTests {
    /// A live loop in miniature: feeds `lookahead` frames ahead of the rendered frame, presses
    /// `keys[frame]` when the rendered frame reaches it, renders and returns the onsets.
    func play(_ settings: MetronomeSettings, frames: Int, keys: [Frame: MetronomeKey]) throws -> (onsets: [Frame], engine: Engine) {
        let engine = Engine(configuration: .init(maxPlayers: Metronome.playerCount))
        let controller = MetronomeController(settings: settings, transportMode: .off, serverName: nil, clientName: "", interactive: false)
        try controller.prepare(engine: engine, sampleRate: 48000)
        controller.start(origin: 0)
        var feeder = controller.makeFeeder()
        let period = 256, lookahead = Frame(4800 + 2 * period)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: period), right = UnsafeMutablePointer<Float>.allocate(capacity: period)
        defer { left.deallocate(); right.deallocate() }
        var detector = OnsetDetector(quietGap: 300)
        var pending = keys
        var start: Frame = 0
        while start < Frame(frames) {
            feeder.feed(engine, before: start + lookahead)
            for (at, key) in pending where at <= start {
                _ = controller.handle(key, engine: engine, feeder: &feeder, frame: start)
                pending[at] = nil
            }
            _ = controller.tick(engine: engine, feeder: &feeder, frame: start)
            engine.render(frameCount: period, periodStart: start, left: left, right: right)
            engine.drainEvents { _ in }
            detector.scan(left, count: period, at: start)
            start += Frame(period)
        }
        return (detector.onsets, engine)
    }

    @Test func plusChangesTheTempoFromTheNextBarNotYetSentOnItsExactFrame() throws {
        let s = try settings { $0.tempo = "120" }
        // At frame 100,096 the clicks are sent up to ~105,400: bar 1 (96,000) is gone, so the
        // new tempo starts with bar 2, at 192,000.
        let (onsets, engine) = try play(s, frames: 480_000, keys: [100_000: .tempo(1)])
        let before = onsets.filter { $0 < 192_000 }
        let eight: [Frame] = (0..<8).map { Frame($0) * 24000 }
        #expect(before == eight)
        let after = onsets.filter { $0 >= 192_000 }
        let grid: [Frame] = (0..<after.count).map { k in 192_000 + Frame((Double(k) * 60 * 48000 / 121).rounded()) }
        #expect(after == grid)
        #expect(after.count >= 12)
        #expect(engine.lateStartCount == 0)
    }

    @Test func spaceStopsAtOnceCancellingClicksAlreadySentAndRestartsFromBarOne() throws {
        let s = try settings { $0.tempo = "120" }
        // The click at 312,000 has been sent when space is pressed at 310,016: it must not sound.
        let (onsets, _) = try play(s, frames: 600_000, keys: [310_000: .startStop, 400_000: .startStop])
        let first: [Frame] = (0..<13).map { Frame($0) * 24000 }
        #expect(onsets.filter { $0 < 310_016 } == first)
        #expect(!onsets.contains { $0 >= 310_016 && $0 < 400_128 })
        // Restarted on the first frame not yet sent, from the first beat of the music.
        let restart = try #require(onsets.first { $0 >= 400_128 })
        #expect(restart > 400_128 && restart < 406_128)
        let again = onsets.filter { $0 >= restart }
        let grid: [Frame] = (0..<again.count).map { restart + Frame($0) * 24000 }
        #expect(again == grid)
    }

    @Test func tempoKeysAreOffWithATempoMap() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("metro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("m.map")
        try "20 120\n".write(to: file, atomically: true, encoding: .utf8)
        let s = try settings { $0.mapFile = file.path }
        let (onsets, _) = try play(s, frames: 300_000, keys: [50_000: .tempo(10)])
        let grid: [Frame] = (0..<13).map { Frame($0) * 24000 }
        #expect(onsets == grid)
    }
}
