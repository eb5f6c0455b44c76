import Foundation
import JACKTestSupport
import SamplerCore
import SoundFiles
import Testing
@testable import MetronomeKit
import ProgramHost
import Sync
@testable import Scheduling

let klickPath = "/usr/bin/klick"

/// The same music exported by klick (`klick -W`, offline, no JACK needed) and rendered here: the
/// onsets agree within one frame (klick truncates its frame positions and adds beat lengths; ours
/// are rounded once from the closed form), and ours are exactly on the closed-form frames.
/// Needs Debian's `klick` (`make test` installs it): without it the test fails, naming klick and
/// `make test-deps`. klick's export runs bounded in time (60 s) and disk (100 MB): some of its
/// option combinations export for ever.
@Suite struct MetronomeKlickTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var klickArguments: [String]
        var map: String?
        var configure: @Sendable (inout MetronomeRequest) -> Void
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "klick's manual example", klickArguments: [], map: MetronomeKlickTests.manualExample) { _ in },
        Case(name: "meters, patterns, volumes, tempo per beat", klickArguments: [], map: """
            a: 3 7/8 200 X.x.x.. 0.5
               2 5/4 96.5-150.25
            b: 1 3/4 100,120,140
               2 6/8 90 X..x..
               1 2/2 60-240
            """) { _ in },
        // (klick 0.12.2's export ignores -c and never ends with -l, so count-in and labels are
        // checked against the closed form only, in MetronomeRenderTests.)
        Case(name: "tempo multiplier", klickArguments: ["-x", "1.25"], map: """
            a: 2 100
            b: 4 3/4 120-90
               4 140
            """) { $0.multiply = 1.25 },
        Case(name: "speed trainer on the command line", klickArguments: ["20", "80-120/10"]) { $0.tempo = "80-120/10"; $0.bars = 20 },
        Case(name: "meter and pattern on the command line", klickArguments: ["8", "7/8", "200", "X.x.x.."]) {
            $0.tempo = "200"; $0.meter = "7/8"; $0.accents = "X.x.x.."; $0.bars = 8
        },
    ]

    static let manualExample = """
    intro:    8 120           # play 8 measures at 120 bpm (4/4)
    verse1:   12 120 X.x.     # 12 measures at 120 bpm, playing only the 1st and 3rd beat
              4 120-140 X.x.  # gradually increase tempo to 140 bpm
    chorus1:  16 140
    bridge:   8 3/4 140 0.5   # change to 3/4 time, reduce volume
              8 3/4 140       # normal volume again
    verse2:   12 120          # back to 4/4 (implied)
    chorus2:  16 140          # jump to 140 bpm
    outro:    6 140
              2 140-80        # ritardando over the last 2 bars
    """

    /// Runs klick's export and returns its samples. klick runs under a time limit and a file-size
    /// limit: some of its option combinations export for ever.
    func klickExport(_ arguments: [String], map: String?, in dir: URL) throws -> [Float] {
        let out = dir.appendingPathComponent("klick.wav").path
        var args = ["-W", out] + arguments
        if let map {
            let file = dir.appendingPathComponent("klick.map")
            try map.write(to: file, atomically: true, encoding: .utf8)
            args += ["-f", file.path]
        }
        // ulimit -f counts 512-byte blocks in sh: 100 MB at most.
        let command = "ulimit -f 200000; exec timeout -s KILL 60 \(klickPath) " + args.map { "'\($0)'" }.joined(separator: " ")
        #expect(try run("/bin/sh", ["-c", command]) == 0, "klick \(args)")
        return try SoundFileLoader().load(path: out).samples(channel: 0)
    }

    func onsets(_ x: [Float]) -> [Frame] {
        var d = OnsetDetector(quietGap: 300)
        x.withUnsafeBufferPointer { d.scan($0.baseAddress!, count: $0.count, at: 0) }
        return d.onsets
    }

    @Test(arguments: cases)
    func agreesWithKlicksExportWithinOneFrame(_ c: Case) throws {
        try requireTestTool(klickPath, "Debian's klick")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let klick = try klickExport(c.klickArguments, map: c.map, in: dir)
        var request = MetronomeRequest()
        if let map = c.map {
            let file = dir.appendingPathComponent("ours.map")
            try map.write(to: file, atomically: true, encoding: .utf8)
            request.mapFile = file.path
        }
        c.configure(&request)
        let settings = try request.makeSettings()
        let program = MetronomeProgram(settings: settings)
        let end = try #require(program.endFrame(sampleRate: 48000))
        // Same length: both end where the music ends.
        #expect(abs(Int(end) - klick.count) <= 1, "\(c.name): \(end) frames here, \(klick.count) in klick's export")

        let (ours, _, engine) = try renderOnsets(settings, frames: Int(end))
        let theirs = onsets(klick)
        #expect(ours.count == theirs.count, "\(c.name): \(ours.count) onsets here, \(theirs.count) in klick's export")
        let differences = zip(ours, theirs).map { $0 - $1 }
        #expect(differences.allSatisfy { (0...1).contains($0) }, "\(c.name): differences \(Set(differences).sorted())")
        #expect(engine.lateStartCount == 0)

        // Ours are the closed-form frames, rounded once.
        var m = Metronome(timing: TempoMapTiming(map: settings.map, sampleRate: 48000), origin: 0,
                          barLimit: settings.bars.map { $0 + settings.map.sections.prefix { $0.isCountIn }.compactMap(\.bars).reduce(0, +) })
        var scheduled: [Frame] = []
        m.produce(before: end) { scheduled.append($0.frame) }
        #expect(ours == scheduled)
    }
}

/// klick's client list is bounded: a flood of registrations from as many reply addresses as it
/// likes leaves at most `KlickOSC.maximumClients`, so that one tempo change never multiplies into
/// thousands of datagrams (issue 52: 367,200 registrations made one change send 40,712).
@Suite struct KlickClientLimitTests {
    @Test func registeredClientsAreBounded() throws {
        var request = MetronomeRequest()
        request.tempo = "120"
        let controller = MetronomeController(settings: try request.makeSettings(), transportMode: .off, serverName: nil, clientName: "",
                                             interactive: false)
        let engine = Engine(configuration: .init(maxPlayers: Metronome.playerCount))
        try controller.prepare(engine: engine, sampleRate: 48000)
        let server = try OSCServer(port: "0", hostNow: { 1_000_000_000 })
        var lines: [String] = []
        let klick = KlickOSC(server: server, controller: controller, mapFile: nil) { lines.append($0) }
        // Reply addresses on this machine's discard port range: nothing is sent by registering.
        let messages = (0..<5000).map { k in
            OSCMessage(path: "/klick/register_client", arguments: [.string("osc.udp://127.0.0.1:\(20_000 + k % 40_000)/")])
        }
        _ = klick.dispatch(messages, controller: controller, engine: engine, frame: 0, sampleRate: 48000, hostNow: 1_000_000_000,
                           frameAt: { _ in 0 })
        #expect(klick.registeredClientCount == KlickOSC.maximumClients)
        // One address registers once.
        let again = Array(repeating: OSCMessage(path: "/klick/unregister_client", arguments: [.string("osc.udp://127.0.0.1:20000/")]), count: 1)
            + Array(repeating: OSCMessage(path: "/klick/register_client", arguments: [.string("osc.udp://127.0.0.1:20001/")]), count: 50)
        _ = klick.dispatch(again, controller: controller, engine: engine, frame: 0, sampleRate: 48000, hostNow: 1_000_000_000,
                           frameAt: { _ in 0 })
        #expect(klick.registeredClientCount == KlickOSC.maximumClients - 1)
        _ = lines
    }
}
