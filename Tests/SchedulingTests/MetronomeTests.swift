import Foundation
import SamplerCore
import Testing
@testable import Scheduling

/// Every click of a metronome on the frame its musical position says, rounded once.
@Suite struct MetronomeTests {
    /// Produces every trigger before `end`, asking in windows of `window` frames as a feeder does.
    func triggers(_ m: Metronome, until end: Frame, window: Frame = 4800, from start: Frame = 0) -> [Trigger] {
        var m = m, out: [Trigger] = []
        var horizon = start
        while horizon < end {
            horizon = min(end, horizon + window)
            m.produce(before: horizon) { out.append($0) }
        }
        return out
    }

    func metronome(_ text: String, rate: Double = 48000, origin: Frame = 0, subdivision: Int = 1) throws -> Metronome {
        Metronome(timing: TempoMapTiming(map: try TempoMap(parsing: text), sampleRate: rate), origin: origin, subdivision: subdivision)
    }

    @Test func anHourAt113HasAll6780ClicksOnTheirIdealFrames() throws {
        let m = Metronome(timing: TempoMapTiming(map: try .constant(bpm: 113), sampleRate: 48000), origin: 1000)
        let got = triggers(m, until: 1000 + 3600 * 48000, window: 256)
        #expect(got.count == 6780)
        let ideal = (0..<6780).map { 1000 + Frame((Double($0) * 60 * 48000 / 113).rounded()) }
        #expect(got.map(\.frame) == ideal)
        #expect(got.enumerated().allSatisfy { $0.element.player == ($0.offset % 4 == 0 ? 0 : 1) })
        #expect(Set(zip(ideal.dropFirst(), ideal).map { $0 - $1 }) == [25486, 25487])
    }

    @Test(arguments: [120.0, 97.3, 999])
    func constantTempoNeverDrifts(bpm: Double) throws {
        let m = Metronome(timing: TempoMapTiming(map: try .constant(bpm: bpm), sampleRate: 44100), origin: 77)
        let got = triggers(m, until: 77 + 600 * 44100)
        for (k, t) in got.enumerated() {
            #expect(t.frame == 77 + Frame((Double(k) * 60 * 44100 / bpm).rounded()))
        }
    }

    @Test func tempoCountsQuarterNotesWhateverTheMeter() throws {
        // klick: 7/8 at 200 plays eighths 0.15 s apart.
        let m = try metronome("100 7/8 200")
        let got = triggers(m, until: 48000 * 3)
        #expect(Array(got.prefix(8).map(\.frame)) == (0..<8).map { Frame($0 * 7200) })
        #expect(Array(got.prefix(8).map(\.player)) == [0, 1, 1, 1, 1, 1, 1, 0])
    }

    @Test func beatUnitDenominatorCountsTheMetersNotes() throws {
        let map = try TempoMap(parsing: "100 7/8 200").tempoCountingDenominators()
        let got = triggers(Metronome(timing: TempoMapTiming(map: map, sampleRate: 48000), origin: 0), until: 48000)
        #expect(got.map(\.frame) == [0, 14400, 28800, 43200])
    }

    @Test(arguments: [2, 3, 4])
    func subdivisionsAreExactFractionsOfTheBeatAndSofter(n: Int) throws {
        let m = try metronome("1000 113", subdivision: n)
        let got = triggers(m, until: 600 * 48000)
        for (k, t) in got.enumerated() {
            #expect(t.frame == Frame((Double(k) * 60 * 48000 / (113 * Double(n))).rounded()))
            #expect(t.player == (k % n != 0 ? 2 : (k / n) % 4 == 0 ? 0 : 1))
            #expect(t.velocity == (k % n != 0 ? 0.5 : 1))
        }
    }

    @Test func silentBeatsPlayNothingButTheirSubdivisions() throws {
        let got = triggers(try metronome("1 3/4 120 X.x", subdivision: 2), until: 48000 * 2)
        #expect(got.map(\.frame) == [0, 12000, 36000, 48000, 60000])
        #expect(got.map(\.player) == [0, 2, 2, 1, 2])
    }

    /// The closed form, computed independently: beat b of a ramp t1→t2 over N beats in n/d is at
    /// 240·rate/(d·k)·ln(1 + k·b/t1), k = (t2 − t1)/N.
    func rampFrame(_ b: Double, t1: Double, t2: Double, beats: Double, d: Double = 4, rate: Double = 48000) -> Double {
        let k = (t2 - t1) / beats
        return 240 * rate / (d * k) * Foundation.log(1 + k * b / t1)
    }

    @Test(arguments: [(120.0, 140.0), (140, 80), (60, 180)])
    func rampsLandOnTheClosedFormIntegral(t1: Double, t2: Double) throws {
        let m = try metronome("4 \(Int(t1))-\(Int(t2))", origin: 500)
        let got = triggers(m, until: 500 + 48000 * 30)
        #expect(got.count == 16)
        for (b, t) in got.enumerated() {
            let ideal = 500 + Frame(rampFrame(Double(b), t1: t1, t2: t2, beats: 16).rounded())
            #expect(abs(t.frame - ideal) == 0, "beat \(b): \(t.frame) vs \(ideal)")
        }
        // The map ends where the integral over all 16 beats says.
        #expect(m.endFrame == 500 + Frame(rampFrame(16, t1: t1, t2: t2, beats: 16).rounded()))
    }

    @Test func rampTempoIsLinearInTheBeatPosition() throws {
        let m = try metronome("4 120-140")
        let got = triggers(m, until: 48000 * 30).map(\.frame)
        // Each interval is the beat's length at the (logarithmic) mean of its tempo range; the
        // intervals shrink as the tempo rises.
        let intervals = zip(got.dropFirst(), got).map { $0 - $1 }
        #expect(zip(intervals.dropFirst(), intervals).allSatisfy { $0 < $1 })
        #expect(m.position(at: 0)?.tempo == 120)
        #expect(abs(m.position(at: got[8])!.tempo - 130) < 1e-3)  // within the half frame of rounding
    }

    @Test func mapSectionsStartAtExactSumsOfSectionLengths() throws {
        let text = """
        a: 2 120
           3 3/4 97.3 X.x 0.5
           2 90-150
           1 2/4 100,133.3
        b: 2 6/8 200
        """
        let m = try metronome(text, rate: 44100, origin: 10)
        // Section lengths, each exact, summed without rounding.
        let lengths: [Double] = [
            8 * 60 * 44100 / 120,
            9 * 60 * 44100 / 97.3,
            240 * 44100 / (4 * 60.0 / 8) * Foundation.log(150.0 / 90),
            60 * 44100 / 100 + 60 * 44100 / 133.3,
            12 * 240 * 44100 / (200 * 8),
        ]
        var starts = [0.0]
        for l in lengths { starts.append(starts.last! + l) }
        var ideal: [(Frame, Int, Float)] = []
        func add(_ position: Double, _ player: Int, _ v: Float = 1) { ideal.append((10 + Frame(position.rounded()), player, v)) }
        for b in 0..<8 { add(starts[0] + Double(b) * 60 * 44100 / 120, b % 4 == 0 ? 0 : 1) }
        for b in 0..<9 where b % 3 != 1 { add(starts[1] + Double(b) * 60 * 44100 / 97.3, b % 3 == 0 ? 0 : 1, 0.5) }
        for b in 0..<8 { add(starts[2] + 240 * 44100 / (4 * 7.5) * Foundation.log(1 + 7.5 * Double(b) / 90), b % 4 == 0 ? 0 : 1) }
        add(starts[3], 0)
        add(starts[3] + 60 * 44100 / 100, 1)
        for b in 0..<12 { add(starts[4] + Double(b) * 240 * 44100 / (200 * 8), b % 6 == 0 ? 0 : 1) }

        let got = triggers(m, until: 10 + 44100 * 60)
        #expect(got.count == ideal.count)
        for (t, i) in zip(got, ideal) {
            #expect(t.frame == i.0 && t.player == i.1 && t.velocity == i.2, "\(t) vs \(i)")
        }
        #expect(m.endFrame == 10 + Frame(starts[5].rounded()))
    }

    @Test func countInPlaysTheFirstSectionsBarsSofter() throws {
        let map = try TempoMap(parsing: "2 3/4 90 X.x\n2 120").withCountIn(bars: 1)
        let m = Metronome(timing: TempoMapTiming(map: map, sampleRate: 48000), origin: 0)
        let got = triggers(m, until: 48000 * 20)
        // The count-in bar plays the pattern X.x at 90 bpm, then the map starts on bar 1.
        #expect(got.prefix(3).map(\.frame) == [0, 64000, 96000])
        #expect(got.prefix(3).map(\.velocity) == [0.66, 0.66, 1])
        #expect(got.prefix(3).map(\.player) == [0, 1, 0])
        #expect(m.position(at: 0) == Metronome.Position(bar: 1, beat: 1, beatsPerBar: 3, tempo: 90, isCountIn: true, barIndex: 0))
        #expect(m.position(at: 96000)?.bar == 1)
        #expect(m.position(at: 96000)?.isCountIn == false)
        #expect(m.countInBars == 1)
    }

    @Test func barLimitAndStopFrameEndTheClicks() throws {
        let timing = TempoMapTiming(map: try .constant(bpm: 120), sampleRate: 48000)
        let bars = Metronome(timing: timing, origin: 0, barLimit: 2)
        #expect(bars.endFrame == 192_000)
        #expect(triggers(bars, until: 400_000).count == 8)
        var stopped = Metronome(timing: timing, origin: 0, stopFrame: 48000)
        #expect(triggers(stopped, until: 400_000).count == 2)
        stopped.stop(at: 24000)
        #expect(triggers(stopped, until: 400_000).count == 1)
    }

    @Test func trainerRampsOneBPMPerBarsThenStays() throws {
        let map = try TempoMap.trainer(from: 80, to: 120, barsPerBPM: 10)
        #expect(map.sections[0] == TempoSection(bars: 400, tempo: .ramp(from: 80, to: 120)))
        #expect(map.sections[1] == TempoSection(bars: nil, tempo: .constant(120)))
        let m = Metronome(timing: TempoMapTiming(map: map, sampleRate: 48000), origin: 0)
        #expect(abs(m.position(at: m.frame(ofBar: 10)!)!.tempo - 81) < 1e-3)
        #expect(m.position(at: m.frame(ofBar: 500)!)!.tempo == 120)
    }

    @Test func startingLaterSkipsToTheSameFrames() throws {
        let m = try metronome("4 100\n8 7/8 100-200\n4 100,110,120,130,140,150,160,170,180,190,200,210,220,230,240,250", subdivision: 3)
        let all = triggers(m, until: 48000 * 60)
        for first in [Frame(1), 100_000, 300_001, 523_456] {
            let late = Metronome(timing: m.timing, origin: 0, subdivision: 3, startingAt: first)
            #expect(triggers(late, until: 48000 * 60) == all.filter { $0.frame >= first })
        }
    }

    @Test func aTempoChangeStartsAtTheNextUnproducedBarOnItsFrame() throws {
        let m = Metronome(timing: TempoMapTiming(map: try .constant(bpm: 120), sampleRate: 48000), origin: 0)
        var track = MetronomeTrack(m)
        var got: [Trigger] = []
        track.produce(before: 100_000) { got.append($0) }
        // Bar 1 starts at 96,000 and is already produced: the change waits for bar 2 at 192,000.
        let (changed, bar, frame) = try #require(track.current!.changingTempo(to: 121, notBefore: 50_000))
        #expect(bar == 2 && frame == 192_000)
        track.hand(over: frame, to: changed)
        for h in stride(from: Frame(100_000), through: 2_000_000, by: 4800) { track.produce(before: h) { got.append($0) } }
        #expect(got.prefix(8).map(\.frame) == (0..<8).map { Frame($0) * 24000 })
        let after = got.filter { $0.frame >= 192_000 }
        #expect(got.count - after.count == 8)
        for (k, t) in after.enumerated() {
            #expect(t.frame == 192_000 + Frame((Double(k) * 60 * 48000 / 121).rounded()))
        }
        #expect(track.position(at: 191_999)?.tempo == 120)
        #expect(track.position(at: 192_000)?.bar == 3)
        #expect(track.position(at: 192_000)?.tempo == 121)
    }

    @Test func aTrackStopsAndRestartsOnExactFrames() throws {
        let timing = TempoMapTiming(map: try .constant(bpm: 120), sampleRate: 48000)
        var track = MetronomeTrack(Metronome(timing: timing, origin: 0))
        var got: [Frame] = []
        track.produce(before: 50_000) { got.append($0.frame) }
        track.stop(at: 60_000)
        track.produce(before: 200_000) { got.append($0.frame) }
        track.hand(over: 210_000, to: Metronome(timing: timing, origin: 210_000))
        track.produce(before: 260_000) { got.append($0.frame) }
        #expect(got == [0, 24000, 48000, 210_000, 234_000, 258_000])
    }

    @Test func nineHundredNinetyNineBPMInSixteenthsLosesNothingInBigPeriods() throws {
        let m = try metronome("1000 999", subdivision: 4)
        let got = triggers(m, until: 48000 * 60, window: 4096)
        #expect(got.count == 999 * 4)
        #expect(Set(got.map(\.frame)).count == got.count)
        #expect(got.map(\.frame) == (0..<3996).map { Frame((Double($0) * 60 * 48000 / 3996).rounded()) })
    }

    @Test func positionsGiveBarBeatAndTempo() throws {
        let m = try metronome("2 3/4 90\n2 120", origin: 1000)
        #expect(m.position(at: 999) == nil)
        #expect(m.position(at: 1000)?.bar == 1)
        #expect(m.position(at: 1000 + 32000)?.beat == 2)
        #expect(m.position(at: 1000 + 6 * 32000)?.bar == 3)
        #expect(m.position(at: 1000 + 6 * 32000)?.tempo == 120)
        #expect(m.position(at: 1000 + 6 * 32000 + 8 * 24000) == nil)
    }
}
