import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// The sampler on a netjack2 slave, witnessed on the master (issue 53): the master's witness
/// captures the slave's `system:playback` ports as they arrive (`netslave:from_slave_N`), and
/// every period equals the offline render at one constant offset on the master's timeline (the
/// two servers' frame counters plus the network's latency, measured from the first click), or is
/// silent. `NetJackRig` builds the two servers in network namespaces of their own.
@Suite(.serialized) struct NetJackLiveTests {
    struct Run {
        let check: TimelineCheck
        let recording: Capture
        let renderOnsets: [Int64]
        let render: [[Float]]
        let output: String
        /// Where the render's frame 0 lies on the master's timeline, and on the slave's.
        let masterOrigin: Int64, slaveOrigin: Int64
        /// After a stall: whether the slave's net driver restarted (the master made a new client).
        var restarted = false
    }

    /// `sampler metronome 150` on the slave for `seconds`; the witness records the master for
    /// `seconds − 1.5` from before the sampler starts (so that it ends while the sampler still
    /// plays). With `stall`, the slave's server is stopped (SIGSTOP) for `stall.length` seconds
    /// `stall.after` seconds after the sampler started.
    func play(on rig: NetJackRig, seconds: Double, stall: (after: Double, length: Double)? = nil) throws -> Run {
        let rate = rig.master.sampleRate
        let witness = try CaptureProcess(server: rig.master, ports: ["\(rig.netClient):from_slave_1", "\(rig.netClient):from_slave_2"],
                                         frames: Int((seconds - 1.5) * Double(rate)), name: "netwit")
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["metronome", "150", "--server", rig.slave.name, "--name", "netsampler",
                                             "--connect", "system:playback_1,system:playback_2", "--duration", "\(seconds)"],
                                            timeout: seconds + 30)
        var restarted = false
        if let stall {
            // The fault itself is timed: a busy slave host, `after` seconds in.
            usleep(UInt32(stall.after * 1e6))
            kill(rig.slave.pid, SIGSTOP)
            usleep(UInt32(stall.length * 1e6))
            kill(rig.slave.pid, SIGCONT)
            // The slave's net driver restarts after a stop (its blocked recv fails with EINTR);
            // the master's netmanager makes a new client for it, "netslave-01", whose ports
            // nothing is connected to. Connect them as a user (or session manager) would.
            let lsp = URL(fileURLWithPath: "/usr/bin/jack_lsp"), env = ["JACK_DEFAULT_SERVER": rig.master.name]
            let again = "\(rig.netClient)-01"
            restarted = waitUntil(timeout: 2.5) { (try? runTool(lsp, [], environment: env, timeout: 5))?.stdout.contains("\(again):from_slave_2") == true }
            print("netjack2: after the stall the master has \(restarted ? again : "no new client")")
            if restarted {
                for i in 1...2 {
                    _ = try runTool(URL(fileURLWithPath: "/usr/bin/jack_connect"), ["\(again):from_slave_\(i)", "netwit:in_\(i - 1)"], environment: env, timeout: 5)
                }
            }
        }
        let recording = try witness.finish()
        let played = sampler.finish()
        #expect(played.status == 0, "\(played.output)")
        let slaveOrigin = try #require(played.output.range(of: #"first beat at device frame \d+"#, options: .regularExpression)
            .flatMap { Int64(played.output[$0].split(separator: " ").last!) }, "\(played.output)")

        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("render.wav").path
        let r = try runSampler(["metronome", "150", "--render", wav, "--duration", "\(seconds + 5)"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try SoundFileLoader().load(path: wav)
        let render = [rendered.samples(channel: 0), rendered.samples(channel: 1)]
        // The offset is measured: the first click heard on the master against the render's.
        let renderFirst = try #require(Capture(firstFrame: 0, sampleRate: Double(rate), channels: [render[0]]).onsets(channel: 0).first)
        let heardFirst = try #require(recording.onsets(channel: 0).first, "the master heard nothing from the slave")
        let origin = heardFirst - renderFirst
        let renderOnsets = Capture(firstFrame: 0, sampleRate: Double(rate), channels: [render[0]]).onsets(channel: 0)
        return Run(check: TimelineCheck(capture: recording, render: render, origin: origin), recording: recording,
                   renderOnsets: renderOnsets, render: render, output: played.output,
                   masterOrigin: origin, slaveOrigin: slaveOrigin, restarted: restarted)
    }

    @Test func aMetronomeOnANetSlaveIsExactOnTheMastersTimeline() throws {
        let rig = try NetJackRig(period: 256)
        defer { rig.stop() }
        let run = try play(on: rig, seconds: 6)
        print("netjack2, plain: \(run.check); master origin \(run.masterOrigin), slave origin \(run.slaveOrigin)")
        #expect(run.check.count(.wrong) == 0, "\(run.check) first wrong at \(run.check.firstWrong)")
        // Every period from the first click on is exact (a cycle the master skipped is silent).
        let judged = run.check.verdicts.filter { $0.start >= run.masterOrigin }
        #expect(judged.count > 500)
        #expect(judged.filter { $0.verdict == .exact }.count >= judged.count - 4, "\(run.check)")
    }

    /// A slave stalled for 50 ms (its server stopped: a busy slave host). Mostly JACK2's net
    /// driver restarts after a stop (its blocked `recv` fails with EINTR): the slave's `system`
    /// ports are registered again, the master makes a new client for the slave ("netslave-01")
    /// that nothing is connected to, and the slave's frame time resumes where it stopped, behind
    /// the master by the cycles it missed. The sampler connects its outputs again, says so, and
    /// moves its timeline past the missed cycles that the host clock counted (a silent gap).
    /// Once the new client is connected on the master, every period is exact again at one
    /// offset: the first one plus what the master's new client added to the network's latency
    /// (JACK2's master side, which the slave cannot see: docs/netjack.md), never earlier. When
    /// the driver was not in `recv` as the server stopped (seen beside two busy loops), it does
    /// not restart: the slave runs the master's cycles queued meanwhile, and is heard again at
    /// once, at an offset the same or a few periods later.
    @Test func aStalledSlaveIsReportedAndExactOnceReconnected() throws {
        let rig = try NetJackRig(period: 256)
        defer { rig.stop() }
        let rate = Double(rig.master.sampleRate), period = rig.master.period
        let run = try play(on: rig, seconds: 7, stall: (after: 2.5, length: 0.05))
        let tail = run.output.split(separator: "\n").filter { $0.contains("went away") || $0.contains("missed") || $0.hasPrefix("played") }
        print("netjack2, slave stalled 50 ms (\(run.restarted ? "its net driver restarted" : "no restart")): \(run.check); sampler: \(tail.joined(separator: " | "))")
        // Before the stall (the sampler starts within half a second of its launch): exact.
        let before = run.check.verdicts.filter { $0.start < run.masterOrigin + Int64(1.5 * rate) }
        #expect(before.count > 100 && before.allSatisfy { $0.verdict == .exact }, "\(run.check)")
        if run.restarted {
            #expect(run.output.contains("went away and came back"), "\(run.output)")
            #expect(run.output.contains("1 connection(s) lost") || run.output.contains("2 connection(s) lost"), "\(run.output)")
            #expect(run.output.contains("frames the server did not count"), "\(run.output)")
        } else {
            #expect(!run.output.contains("went away"), "\(run.output)")
        }
        // Heard again at the end: the last click against the render's click before it gives the
        // new offset, whole periods later (or none), and every period there is exact at it.
        let last = try #require(run.recording.onsets(channel: 0).last)
        let expected = try #require(run.renderOnsets.map { $0 + run.masterOrigin }.last { $0 <= last })
        let later = last - expected
        print("netjack2: after the stall the slave is heard \(later) frames (\(Double(later) / Double(period)) periods) later than before")
        #expect(later >= 0 && later % Int64(period) == 0, "\(later)")
        let again = TimelineCheck(capture: run.recording, render: run.render, origin: run.masterOrigin + later)
        // The last second up to the last click (the master skips its clients' cycles while its old
        // client for the slave times out, so the captured periods are not a count of time).
        let end = again.verdicts.filter { $0.start > last - Int64(rate) && $0.start <= last }
        #expect(end.count > 100 && end.filter { $0.verdict == .exact }.count > end.count / 2 && !end.contains { $0.verdict == .wrong },
                "the slave was not heard again after reconnecting, or not exactly: \(again); wrong at \(end.filter { $0.verdict == .wrong }.map(\.start)), last click \(last)")
    }

    /// Two samplers, one clock (issue 53): a metronome on the master sends MIDI clock (its Start
    /// on the first click) through netjack2's MIDI port to the slave, where a kit follows the
    /// Start (`--follow-midi-start`, its first bar one bar after it). Both are heard on the
    /// master, and every hit of the kit lands the same number of frames after a click of the
    /// metronome, to the frame: the slave runs on the master's cycles, and netjack2 carries a
    /// MIDI message's frame within its cycle.
    @Test func aKitOnTheSlaveFollowsTheMastersMetronomeOnOneClock() throws {
        let rig = try NetJackRig(period: 256, slaveMIDIInputs: 1)
        defer { rig.stop() }
        let toSlave = try #require(rig.ports(of: rig.master).first { $0.hasPrefix("\(rig.netClient):") && $0.contains("midi") && $0.contains("to_slave") },
                                   "the master has no MIDI port to the slave: \(rig.ports(of: rig.master))")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let patch = try kickOnEveryBeat(in: dir, tempo: 120)
        let sampler = productsDirectory.appendingPathComponent("sampler")
        let kit = try BackgroundProgram(sampler, ["play", "--patch", patch.path, "--server", rig.slave.name, "--name", "netkit",
                                                  "--connect", "system:playback_1,system:playback_2", "--follow-midi-start",
                                                  "--quiet", "--duration", "10"], timeout: 40)
        #expect(waitUntil(timeout: 10) { rig.ports(of: rig.slave).contains("netkit:midi_in") }, "\(rig.ports(of: rig.slave))")
        let capture = try #require(rig.ports(of: rig.slave).first { $0.hasPrefix("system:midi_capture") })
        try rig.connect(capture, "netkit:midi_in", on: rig.slave)
        let click = try BackgroundProgram(sampler, ["metronome", "120", "--server", rig.master.name, "--name", "click", "--no-connect",
                                                    "--midi-clock", "--midi-connect", toSlave, "--duration", "8"], timeout: 40)
        #expect(waitUntil(timeout: 10) { rig.ports(of: rig.master).contains("click:out_L") })
        let rate = rig.master.sampleRate
        let witness = try CaptureProcess(server: rig.master, ports: ["click:out_L", "\(rig.netClient):from_slave_1"],
                                         frames: Int(6.5 * Double(rate)), name: "netwit")
        let recording = try witness.finish()
        let clicked = click.finish(), played = kit.finish()
        #expect(clicked.status == 0, "\(clicked.output)")
        #expect(played.status == 0, "\(played.output)")
        // A click's sound crosses the threshold twice: one onset per click.
        let clicks = recording.onsets(channel: 0, quietGap: 4000), hits = recording.onsets(channel: 1)
        // Each hit against the click before it (the metronome clicks on every beat; the kit plays
        // every beat from its first bar on).
        let offsets = hits.compactMap { hit in clicks.last(where: { $0 <= hit }).map { hit - $0 } }
        print("netjack2, one clock: \(clicks.count) clicks, \(hits.count) hits, each hit after a click by \(Set(offsets).sorted()) frames")
        #expect(hits.count >= 6, "the kit on the slave was not heard: \(played.output)")
        #expect(Set(offsets).count == 1, "hits land at different offsets from the clicks: \(offsets)")
        // The MIDI Start keeps its frame within the cycle across the network, so the offset is
        // whole cycles: the MIDI's way to the slave, the input's period, the audio's way back.
        #expect(offsets.allSatisfy { $0 % Int64(rig.master.period) == 0 }, "\(offsets)")
    }
}
