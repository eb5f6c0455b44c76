import Sync
import Testing

/// Refused OSC messages print at most ten lines a second; the rest are counted and summed up
/// (issue 52: each refusal printed a line, so a flood of bad messages was a flood of lines).
@Suite struct OSCWarningsTests {
    @Test func aFloodIsTenLinesASecondAndACount() {
        var lines: [String] = []
        var clock = 0.0
        let warnings = OSCWarnings(write: { lines.append($0) }, now: { clock })
        for k in 0..<5000 {
            clock = Double(k) / 2000          // 5,000 refusals over 2.5 s
            warnings.line("osc: /x ,i: refused \(k)")
        }
        clock = 10
        warnings.line("osc: /x ,i: the last")
        let shown = lines.filter { $0.hasPrefix("osc: /x ,i: refused") }
        #expect(shown.count == 30)            // ten in each of the three seconds begun
        #expect(lines.filter { $0 == "osc: 1990 more refused messages not shown" }.count == 2)
        #expect(lines.contains("osc: 990 more refused messages not shown"))
        #expect(lines.last == "osc: /x ,i: the last")
        #expect(lines.count == 30 + 3 + 1)
    }

    /// A burst, then silence: the count comes with the next tick after the second is over.
    @Test func aBurstThenSilenceIsCountedAtTheNextTick() {
        var lines: [String] = []
        var clock = 0.0
        let warnings = OSCWarnings(write: { lines.append($0) }, now: { clock })
        for _ in 0..<50 { warnings.line("osc: /x ,i: refused") }
        warnings.flush()
        #expect(lines.count == 10)
        clock = 1.5
        warnings.flush()
        #expect(lines.last == "osc: 40 more refused messages not shown" && lines.count == 11)
        warnings.flush()
        #expect(lines.count == 11)
    }
}
