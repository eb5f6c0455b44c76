import Foundation
import JACKTestSupport
import SoundFiles
import Testing

@Suite(.serialized) struct DeviceTimelineLiveTests {
    static var drums: URL { packageRoot.appendingPathComponent("Patches/drums.json") }

    /// A patch with a streamed backing track (a 30 s signal that changes every frame) and a
    /// click on every beat: any shift of either against the timeline shows.
    static func backingTrackPatch() throws -> URL {
        let dir = try temporaryDirectory()
        let n = 48000 * 30
        let backing = (0..<n).map { i in Float((i &* 2_654_435_761) % 2001) / 4000 - 0.25 }
        try WAVFileWriter.write(path: dir.appendingPathComponent("backing.wav").path, channels: [backing], sampleRate: 48000)
        try WAVFileWriter.write(path: dir.appendingPathComponent("click.wav").path,
                                channels: [[1, 0.5, 0.25, 0.125, 0.0625, 0.03]], sampleRate: 48000)
        let patch = dir.appendingPathComponent("backing.json")
        try """
        {"version": 1, "tempo": 113, "sounds": {"backing": "backing.wav", "click": "click.wav"},
         "players": [{"id": "b", "sound": "backing", "stream": true, "pan": 1},
                     {"id": "c", "sound": "click", "pan": -1}],
         "pattern": {"stepsPerBeat": 1, "steps": [["b", "c"], ["c"], ["c"], ["c"]]}}
        """.write(to: patch, atomically: true, encoding: .utf8)
        return patch
    }

    @Test(arguments: [64, 256, 1024])
    func onASynchronousServerEveryPeriodEqualsTheRender(period: Int) throws {
        let server = try JACKServer(period: period)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 10)
        #expect(run.check.verdicts.count * period > 48000 * 9)
        Self.expectExact(run)
    }

    @Test func aSkippedCycleIsASilentGapNeverAShift() throws {
        let server = try JACKServer(period: 256, synchronous: false)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 10, disturb: (1.5, 150))
        print("disturbed \(run.disturbances)×, 1.5 periods every 150 cycles: \(run.check)")
        #expect(run.disturbances >= 5)
        #expect(run.check.longestWrongRun <= 2, "\(run.check)")
        #expect(run.check.longestInexactRun <= 3, "\(run.check)")
        #expect(run.check.count(.exact) > run.check.verdicts.count * 9 / 10, "\(run.check)")
        // Every disturbance lost the sampler a cycle, and it says so.
        #expect((run.number(before: "lost periods") ?? 0) > 0, "\(run.output)")
    }

    @Test func aStreamedBackingTrackStaysOnTheClickGridThroughLongDisturbances() throws {
        let server = try JACKServer(period: 256, synchronous: false)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: try Self.backingTrackPatch(), server: server, seconds: 10, disturb: (3, 50))
        print("disturbed \(run.disturbances)×, 3 periods every 50 cycles: \(run.check)")
        #expect(run.disturbances >= 20)
        #expect(run.check.longestWrongRun <= 2, "\(run.check)")
        // After the last disturbance, the backing track and the clicks are where the render has
        // them: the periods of the last second are exact.
        let tail = run.check.verdicts.suffix(150)
        #expect(tail.filter { $0.verdict == .exact }.count >= 140, "\(run.check)")
    }

    @Test(arguments: [64, 256, 1024])
    func theMetronomeOnASynchronousServerEqualsItsRenderInEveryPeriod(period: Int) throws {
        let server = try JACKServer(period: period)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 10,
                                          command: ["metronome", "113", "--meter", "7/8", "--subdivide", "2"])
        #expect(run.check.verdicts.count * period > 48000 * 9)
        Self.expectExact(run)
    }

    /// On a synchronous server every period is exact, except where a cycle was lost: even a -S
    /// server gives up on a client that is very late, on a loaded machine. Where the witness
    /// itself saw the timeline jump the invariant allows at most 2 inexact periods; where only
    /// the sampler lost its cycle (the witness ran on), its period is silent, and the sampler
    /// reports the loss: "N lost periods" when JACK skipped it, "N overrun periods" when its
    /// render ended after the server had stopped waiting for it. A wrong period (a shift) is
    /// never allowed.
    static func expectExact(_ run: LiveTimelineRun, sourceLocation: SourceLocation = #_sourceLocation) {
        let check = run.check
        let lostBySampler = (run.number(before: "lost periods") ?? 0) + (run.number(before: "overrun periods") ?? 0)
        #expect(check.count(.wrong, awayFromDiscontinuities: true) == 0, "\(check)", sourceLocation: sourceLocation)
        #expect(check.count(.silent, awayFromDiscontinuities: true) <= 2 * lostBySampler,
                "\(check); the sampler said: \(run.output)", sourceLocation: sourceLocation)
        #expect(check.longestInexactRun <= 2, "\(check)", sourceLocation: sourceLocation)
        if check.discontinuities.isEmpty && lostBySampler == 0 {
            #expect(check.count(.exact) == check.verdicts.count, "\(check)", sourceLocation: sourceLocation)
        }
    }

    @Test func theMetronomeThroughDisturbancesLosesPeriodsButNeverShifts() throws {
        let server = try JACKServer(period: 128, synchronous: false)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 8, disturb: (3, 50),
                                          command: ["metronome", "97.3", "--subdivide", "3"])
        print("metronome disturbed \(run.disturbances)×: \(run.check)")
        #expect(run.disturbances >= 20)
        #expect(run.check.longestWrongRun <= 2, "\(run.check)")
        #expect(run.check.count(.exact) > run.check.verdicts.count * 9 / 10, "\(run.check)")
    }

    @Test func bufferSizeChangesWhilePlayingNeverShift() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        // jack_bufsize changes the server's period while the sampler plays: 1024, 128, 512.
        let changer = Thread {
            for size in [1024, 128, 512] {
                Thread.sleep(forTimeInterval: 2)
                _ = try? JACKTestSupport.run("/usr/bin/jack_bufsize", ["\(size)"], environment: ["JACK_DEFAULT_SERVER": server.name])
            }
        }
        changer.start()
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 9)
        print("buffer sizes 256 → 1024 → 128 → 512: \(run.check)")
        let sizes = Set(run.check.verdicts.map(\.count))
        #expect(sizes.count >= 3, "the period size did not change: \(sizes)")
        #expect(run.check.longestWrongRun <= 2, "\(run.check)")
        #expect(run.check.count(.wrong) <= 6, "\(run.check)")
    }
}
