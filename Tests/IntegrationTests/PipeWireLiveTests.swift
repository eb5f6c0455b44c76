import Foundation
import JACKTestSupport
import Testing

/// PipeWire as a JACK server (issue 36): a private headless PipeWire (its Dummy-Driver, no
/// session manager) serving `sampler` and the witness through PipeWire's own libjack, as
/// `pw-jack` runs them. The device-timeline invariant is judged as on JACK2: every period the
/// witness captured equals the offline render, or is silent where a cycle was lost (PipeWire's
/// graph, like an asynchronous JACK2 server, skips a client that is late), never shifted.
@Suite(.serialized) struct PipeWireLiveTests {
    static var drums: URL { packageRoot.appendingPathComponent("Patches/drums.json") }

    @Test(arguments: [256, 1024])
    func everyPeriodEqualsTheRenderAtEachQuantum(quantum: Int) throws {
        let server = try JACKServer(pipewireQuantum: quantum)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 8)
        print("PipeWire, quantum \(quantum): \(run.check)")
        #expect(run.check.verdicts.count * quantum > 48000 * 7)
        #expect(Set(run.check.verdicts.map(\.count)) == [quantum], "periods of other sizes")
        DeviceTimelineLiveTests.expectExact(run)
    }

    @Test func theMetronomeEqualsItsRender() throws {
        let server = try JACKServer(pipewireQuantum: 128)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 6,
                                          command: ["metronome", "131", "--meter", "5/4", "--subdivide", "2"])
        print("PipeWire metronome, quantum 128: \(run.check)")
        DeviceTimelineLiveTests.expectExact(run)
    }

    @Test func quantumChangesWhilePlayingNeverShift() throws {
        let server = try JACKServer(pipewireQuantum: 256)
        defer { server.stop() }
        // The forced quantum changes while the sampler plays: 1024, 128, 512.
        let changer = Thread {
            for size in [1024, 128, 512] {
                Thread.sleep(forTimeInterval: 2)
                server.setPeriod(size)
            }
        }
        changer.start()
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 9)
        print("PipeWire quanta 256 → 1024 → 128 → 512: \(run.check)")
        let sizes = Set(run.check.verdicts.map(\.count))
        #expect(sizes.isSuperset(of: [256, 1024, 128, 512]), "the quantum did not change: \(sizes)")
        #expect(run.check.longestWrongRun <= 2, "\(run.check)")
        #expect(run.check.count(.wrong) <= 6, "\(run.check)")
        #expect(run.check.count(.exact) > run.check.verdicts.count * 9 / 10, "\(run.check)")
    }

    @Test func aClientThatDelaysTheGraphCostsSilentPeriodsNeverAShift() throws {
        let server = try JACKServer(pipewireQuantum: 256)
        defer { server.stop() }
        let run = try LiveTimelineRun.run(patch: Self.drums, server: server, seconds: 8, disturb: (1.5, 150))
        print("PipeWire disturbed \(run.disturbances)×, 1.5 periods every 150 cycles: \(run.check)")
        #expect(run.disturbances >= 5)
        #expect(run.check.longestWrongRun <= 2, "\(run.check)")
        #expect(run.check.longestInexactRun <= 3, "\(run.check)")
        #expect(run.check.count(.exact) > run.check.verdicts.count * 9 / 10, "\(run.check)")
    }
}
