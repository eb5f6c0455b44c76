import Foundation
import JACKTestSupport
import Testing

/// `sampler metronome --midi-clock` (issue 17, MIDI clock out): every message on its frame,
/// captured by an independent MIDI client on a server that cannot skip a client.
@Suite struct MIDIClockLiveTests {
    /// "first beat at device frame N" from the metronome's exit line.
    func origin(_ output: String) throws -> Int64 {
        let range = try #require(output.range(of: #"first beat at device frame \d+"#, options: .regularExpression))
        return try #require(Int64(output[range].split(separator: " ").last!))
    }

    @Test func twoBarsOfClockStartTickAndStopOnTheirFrames() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let capture = try MIDICaptureProcess(server: server, frames: 48000 * 6)
        // 133 bpm: a tick every 902.26 frames, so every rounding shows.
        let metronome = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                              ["metronome", "133", "--bars", "2", "--midi-clock",
                                               "--midi-connect", "midicap:midi_in", "--server", server.name, "--name", "clk",
                                               "--no-connect", "--quiet"], timeout: 30)
        let played = metronome.finish()
        #expect(played.status == 0, "\(played.output)")
        let recorded = try capture.finish()
        #expect(recorded.lostFrames == 0)
        let first = try origin(played.output)
        let perTick = 48000.0 * 60 / (133 * 24)
        var expected = [MIDICaptureProcess.Event(frame: first, bytes: [0xF2, 0, 0]), .init(frame: first, bytes: [0xFA])]
        for k in 0..<(8 * 24) { expected.append(.init(frame: first + Int64((Double(k) * perTick).rounded()), bytes: [0xF8])) }
        expected.append(.init(frame: first + Int64((Double(8 * 24) * perTick).rounded()), bytes: [0xFC]))
        #expect(recorded.events.count == expected.count)
        let wrong = zip(recorded.events, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(wrong == nil, "event \(wrong?.offset ?? -1): got \(wrong.map { "\($0.element.0)" } ?? ""), expected \(wrong.map { "\($0.element.1)" } ?? "")")
        #expect(played.output.contains("\(expected.count) MIDI clock messages, 0 deferred"), "\(played.output)")
    }

    @Test func aMeterInEighthsTicksTwelveTimesABeat() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let capture = try MIDICaptureProcess(server: server, frames: 48000 * 5)
        // 7/8 at 120 quarter notes a minute: a bar is 3.5 quarter notes, 84 ticks.
        let metronome = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                              ["metronome", "120", "--meter", "7/8", "--bars", "2",
                                               "--midi-clock", "--midi-connect", "midicap:midi_in", "--server", server.name,
                                               "--name", "clk", "--no-connect", "--quiet"], timeout: 30)
        let played = metronome.finish()
        #expect(played.status == 0, "\(played.output)")
        let recorded = try capture.finish()
        let first = try origin(played.output)
        let ticks = recorded.events.filter { $0.bytes == [0xF8] }.map { $0.frame - first }
        #expect(ticks == (0..<168).map { Int64($0) * 1000 })
        #expect(recorded.events.last == .init(frame: first + 168_000, bytes: [0xFC]))
    }

    /// Space stops the clock with Stop (no tick after it) and starts it again from the top with
    /// song position 0 and Start; the end of --duration says Stop too. Each part on the grid.
    @Test func theSpaceKeyStopsAndRestartsTheClockAndTheEndSaysStop() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let capture = try MIDICaptureProcess(server: server, frames: 48000 * 7)
        let keys = Pipe(), out = Pipe()
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("sampler")
        process.arguments = ["metronome", "120", "--midi-clock", "--midi-connect", "midicap:midi_in", "--keys-from-stdin",
                             "--duration", "5", "--server", server.name, "--name", "clk", "--no-connect"]
        process.standardInput = keys
        process.standardOutput = out
        process.standardError = out
        try process.run()
        // A user at the keys: stop after about 1.5 s, start again a second later.
        usleep(1_500_000)
        keys.fileHandleForWriting.write(Data(" ".utf8))
        usleep(1_000_000)
        keys.fileHandleForWriting.write(Data(" ".utf8))
        process.waitUntilExit()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(output)")
        let events = try capture.finish().events
        let first = try origin(output)
        // Start, ticks every 1000 frames, Stop; song position 0, Start, ticks every 1000 frames
        // from the restart, Stop.
        let stops = events.indices.filter { events[$0].bytes == [0xFC] }
        try #require(stops.count == 2, "\(events.filter { $0.bytes != [0xF8] })")
        let starts = events.indices.filter { events[$0].bytes == [0xFA] }
        try #require(starts.count == 2)
        #expect(starts[0] == 1 && starts[1] == stops[0] + 2)
        #expect(events[0] == .init(frame: first, bytes: [0xF2, 0, 0]) && events[1].frame == first)
        let firstRun = events[2..<stops[0]].map(\.frame)
        #expect(!firstRun.isEmpty && firstRun == (0..<firstRun.count).map { first + Int64($0) * 1000 })
        let restart = events[starts[1]].frame
        #expect(events[stops[0] + 1] == .init(frame: restart, bytes: [0xF2, 0, 0]))
        #expect(restart >= events[stops[0]].frame && events[stops[0]].frame > firstRun.last!)
        let secondRun = events[(starts[1] + 1)..<stops[1]].map(\.frame)
        #expect(!secondRun.isEmpty && secondRun == (0..<secondRun.count).map { restart + Int64($0) * 1000 })
        #expect(stops[1] == events.count - 1 && events[stops[1]].frame > secondRun.last!)
        #expect(events.allSatisfy { [[0xF8], [0xFA], [0xFC], [0xF2, 0, 0]].contains($0.bytes) })
    }

    @Test func clockOptionsThatCannotWorkAreRefused() throws {
        let both = try runSampler(["metronome", "--midi-clock", "--transport", "follow"])
        #expect(both.status == 64 && both.stderr.contains("--midi-clock starts and stops with the metronome itself: leave out --transport"))
        let render = try runSampler(["metronome", "--midi-clock", "--render", "/tmp/x.wav", "--bars", "1"])
        #expect(render.status == 64 && render.stderr.contains("--midi-clock sends on a JACK port"))
        let connect = try runSampler(["metronome", "--midi-connect", "a:b"])
        #expect(connect.status == 64 && connect.stderr.contains("--midi-connect needs --midi-clock"))
        // A port that is not there is named, with exit status 1 (on a running server).
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let missing = try runSampler(["metronome", "--midi-clock", "--midi-connect", "nobody:midi_in", "--server", server.name,
                                      "--no-connect", "--quiet", "--duration", "1"], timeout: 20)
        #expect(missing.status == 1 && missing.stderr.hasPrefix("sampler: error: --midi-connect:")
                && missing.stderr.contains("nobody:midi_in") && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
    }
}
