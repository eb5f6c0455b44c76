import Foundation
import JACKTestSupport
import Testing

/// When JACK stops running `sampler play` while its server goes on, the program says so and exits
/// (status 1) instead of playing silence unnoticed. Here the fault is injected on purpose: the
/// client feeding its midi_in hangs, so an asynchronous server skips the sampler in every cycle.
/// JACK2's bug jackaudio/jack2#721 leaves a client in the same state (seen in the soak).
@Suite(.serialized) struct ClientStallLiveTests {
    @Test func aClientJACKStopsRunningSaysSoAndExits() throws {
        let server = try JACKServer(period: 256, synchronous: false)
        defer { server.stop() }
        let started = Date()
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["play", "--patch", packageRoot.appendingPathComponent("Patches/drums.json").path,
                                             "--loop", "--server", server.name, "--name", "stalled", "--no-connect",
                                             "--duration", "60", "--quiet"], timeout: 90)
        // It hangs in its 375th cycle (2 s at 48 kHz, 256 frames), long after it has connected.
        let hanging = try BackgroundProgram.hangingClient(server: server, to: "stalled:midi_in", afterCycle: 375)
        let played = sampler.finish()
        let took = Date().timeIntervalSince(started)
        hanging.terminate()
        let hung = hanging.finish()
        #expect(hung.output.contains("ready"), "\(hung.output)")
        #expect(played.status == 1, "\(played.output)")
        #expect(played.output.contains("sampler: error: JACK has stopped running this client (stalled) for 5 s while its server ran on"),
                "\(played.output)")
        // 2 s until the hang, 5 s of watching, a little to start and stop; far from the 60 s asked.
        #expect(took < 30, "took \(took) s")
    }

    /// A server that itself stops cycling mid-run (SIGSTOP here: a stopped server, a suspended
    /// machine) is waited for, longer than the watchdog's 5 s: the program plays on when it
    /// resumes and ends as asked.
    @Test func aServerThatPausesMidRunIsWaitedFor() throws {
        let server = try JACKServer(period: 256, synchronous: false)
        defer { server.stop() }
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["play", "--patch", packageRoot.appendingPathComponent("Patches/drums.json").path,
                                             "--loop", "--server", server.name, "--name", "paused", "--no-connect",
                                             "--duration", "4", "--quiet"], timeout: 90)
        // Returns once it has connected to the sampler's ports: the sampler is playing.
        let witness = try CaptureProcess(server: server, ports: ["paused:out_L", "paused:out_R"], frames: 48000, name: "wit")
        _ = try witness.finish()
        kill(server.pid, SIGSTOP)
        Thread.sleep(forTimeInterval: 7)  // the fault itself: 7 s without a cycle
        kill(server.pid, SIGCONT)
        let played = sampler.finish()
        #expect(played.status == 0, "\(played.output)")
        #expect(played.output.contains("played 4.0"), "\(played.output)")
    }
}
