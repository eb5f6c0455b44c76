import Foundation
import SamplerCore
import Testing
@testable import Scheduling

/// A metronome's MIDI clock: 24 ticks per quarter note from the clicks' own timing, Start and
/// song position first, Stop at the music's end, no restart across a tempo change.
@Suite struct MIDIClockTests {
    func produce(_ m: inout Metronome, until end: Frame, window: Frame = 1000) -> [Trigger] {
        var out: [Trigger] = []
        var horizon = m.producedBefore == .min ? Frame(0) : m.producedBefore
        while horizon < end {
            horizon = min(end, horizon + window)
            m.produce(before: horizon) { out.append($0) }
        }
        return out
    }

    func clock(_ triggers: [Trigger]) -> [(Frame, MIDIClockMessage)] {
        triggers.filter { $0.player == Metronome.clockPlayer }.map { ($0.frame, MIDIClockMessage(velocity: $0.velocity)!) }
    }

    @Test func theMessagesEncodeAndDecode() {
        for message: MIDIClockMessage in [.tick, .start, .continue, .stop, .songPosition(0), .songPosition(129), .songPosition(16383)] {
            #expect(MIDIClockMessage(velocity: message.velocity) == message)
        }
        #expect(MIDIClockMessage.songPosition(129).bytes == [0xF2, 1, 1])
        #expect(MIDIClockMessage(velocity: 0.5) == nil)
    }

    @Test func twoBarsAt113TickOnTheirRoundedFramesThenStop() throws {
        let map = try TempoMap(parsing: "2 4/4 113")
        var m = Metronome(timing: TempoMapTiming(map: map, sampleRate: 48000), origin: 500, midiClock: .start)
        let all = produce(&m, until: 500 + 48000 * 10)
        let got = clock(all)
        // The clicks are still there: 8 beats.
        #expect(all.filter { $0.player != Metronome.clockPlayer }.count == 8)
        let perTick = 48000.0 * 60 / (113 * 24)
        var expected: [(Frame, MIDIClockMessage)] = [(500, .songPosition(0)), (500, .start)]
        expected += (0..<192).map { (500 + Frame((Double($0) * perTick).rounded()), .tick) }
        expected.append((500 + Frame((192 * perTick).rounded()), .stop))
        #expect(got.count == expected.count)
        #expect(zip(got, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
    }

    @Test func aTempoChangeCarriesTheClockOnWithoutAStart() throws {
        var m = Metronome(timing: TempoMapTiming(map: try .constant(bpm: 120), sampleRate: 48000), origin: 0, midiClock: .start)
        var got = produce(&m, until: 30000)
        let (next, _, at) = try #require(m.changingTempo(to: 150, notBefore: 30000))
        #expect(at == 96000)
        var track = MetronomeTrack(m)
        track.hand(over: at, to: next)
        var horizon: Frame = 30000
        while horizon < 200_000 {
            horizon += 1000
            track.produce(before: horizon) { got.append($0) }
        }
        let c = clock(got)
        #expect(c.filter { $0.1 == .start }.count == 1 && !c.contains { $0.1 == .stop || $0.1 == .continue })
        let ticks = c.filter { $0.1 == .tick }.map(\.0)
        // 1000 frames a tick at 120 bpm up to the bar at 96000, then 800.
        let before: [Frame] = (0..<96).map { Frame($0) * 1000 }
        let after: [Frame] = (0..<130).map { 96000 + Frame($0) * 800 }
        #expect(ticks.count >= 226)
        #expect(Array(ticks.prefix(96)) == before)
        #expect(Array(ticks.dropFirst(96).prefix(130)) == after)
    }

    @Test func aStartLaterInTheMusicSaysWhereWithASongPositionAndContinue() throws {
        // Joining at frame 30500: the first sixteenth (6 ticks, 6000 frames at 120 bpm) from there.
        let m0 = Metronome(timing: TempoMapTiming(map: try .constant(bpm: 120), sampleRate: 48000), origin: 0,
                           startingAt: 30500, midiClock: .start)
        var m = m0
        let c = clock(produce(&m, until: 50000))
        #expect(c.first?.0 == 36000 && c.first?.1 == .songPosition(6))
        #expect(c[1].1 == .continue && c[2].0 == 36000 && c[2].1 == .tick)
    }
}
