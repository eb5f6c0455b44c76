import SamplerCore
@testable import Scheduling
import Testing

/// Every trigger of `source` before `end`, asked in windows of `window` frames.
func collect(_ source: SongSequencer, until end: Frame, window: Frame = 256) -> [Trigger] {
    var s = source
    var out: [Trigger] = []
    var horizon = window
    while horizon < end + window {
        s.produce(before: min(horizon, end)) { out.append($0) }
        horizon += window
    }
    return out
}

@Suite struct SongSequencerTests {
    // 4 steps of one instrument, 120 bpm, 4 steps per beat at 48 kHz: 6000 frames per step.
    func pattern(_ name: String = "p", velocities: [Int] = [100, 100, 100, 100], swing: Double = 0,
                 probabilities: [Double]? = nil, humanize: (seed: UInt64, frames: Int, velocity: Int)? = nil,
                 instrument: Int = 0) -> SequencePattern {
        SequencePattern(name: name, beatsPerBar: 1, stepsPerBeat: 4, stepCount: velocities.count,
                        tracks: [SequenceTrack(instrument: instrument, velocities: velocities, probabilities: probabilities)],
                        swing: swing, humanize: humanize)
    }

    @Test func stepsLandOnTheirGridFrames() {
        let s = SongSequencer(patterns: [pattern()], sections: [SongSection(pattern: 0, tempo: 120)], loops: false,
                              sampleRate: 48000, origin: 1000)
        #expect(collect(s, until: 100_000).map(\.frame) == [1000, 7000, 13000, 19000])
        #expect(s.endFrame == 25000)
    }

    @Test func swingDelaysTheSecondStepOfEachPairBySwingPercentOfAStep() {
        // 97 bpm: 60 × 48000 / (97 × 4) = 7422.68… frames per step; 30 % swing.
        let s = SongSequencer(patterns: [pattern(swing: 30)], sections: [SongSection(pattern: 0, tempo: 97)], loops: false,
                              sampleRate: 48000, origin: 0)
        let step = 60.0 * 48000 / (97 * 4)
        let expected = [0.0, 1.3, 2.0, 3.3].map { Frame(($0 * step).rounded()) }
        #expect(collect(s, until: 100_000).map(\.frame) == expected)
    }

    @Test func aSongPlaysItsSectionsInOrderWithTheirRepeatsAndTempos() {
        let a = pattern("a", velocities: [100, 0], instrument: 0)
        let b = pattern("b", velocities: [100, 100], instrument: 1)
        let s = SongSequencer(patterns: [a, b], sections: [SongSection(pattern: 0, repeats: 2, tempo: 120),
                                                           SongSection(pattern: 1, repeats: 1, tempo: 90)],
                              loops: false, sampleRate: 48000, origin: 0)
        let triggers = collect(s, until: 1_000_000)
        #expect(triggers.map(\.player) == [0, 0, 1, 1])
        // a: 2 steps × 6000 frames, twice; b at 90 bpm: 8000 frames per step.
        #expect(triggers.map(\.frame) == [0, 12000, 24000, 32000])
        #expect(s.endFrame == 40000)
    }

    @Test func sectionBoundariesAccumulateExactlyAndRoundOnce() {
        // 7 plays of 3 steps at 101 bpm: each play is 21386.14 frames; rounding each play
        // would drift by frames, rounding the absolute position never does.
        let p = pattern(velocities: [100, 0, 0])
        let s = SongSequencer(patterns: [p], sections: [SongSection(pattern: 0, repeats: 7, tempo: 101)], loops: false,
                              sampleRate: 48000, origin: 5)
        let play = 3 * 60.0 * 48000 / (101 * 4)
        #expect(collect(s, until: 1_000_000).map(\.frame) == (0..<7).map { 5 + Frame((Double($0) * play).rounded()) })
    }

    @Test func aLoopingSongStartsAgainWhereItEnded() {
        let s = SongSequencer(patterns: [pattern(velocities: [100, 0])], sections: [SongSection(pattern: 0, tempo: 120)],
                              loops: true, sampleRate: 48000, origin: 0)
        #expect(s.endFrame == nil)
        #expect(collect(s, until: 48000).map(\.frame) == [0, 12000, 24000, 36000])
    }

    @Test func theWindowSizeDoesNotChangeTheTriggers() {
        let p = pattern(velocities: [100, 80, 60, 40], swing: 20, probabilities: [1, 0.5, 0.5, 0.5],
                        humanize: (seed: 3, frames: 300, velocity: 10))
        let s = SongSequencer(patterns: [p], sections: [SongSection(pattern: 0, repeats: 8, tempo: 133)], loops: false,
                              sampleRate: 44100, origin: 0)
        let a = collect(s, until: 500_000, window: 64), b = collect(s, until: 500_000, window: 10_007)
        #expect(a == b)
        #expect(a.map(\.frame) == a.map(\.frame).sorted())
    }

    @Test func probabilityIsSeededAndRoughlyRight() {
        let p = pattern(velocities: Array(repeating: 100, count: 16), probabilities: Array(repeating: 0.25, count: 16))
        let s = SongSequencer(patterns: [p], sections: [SongSection(pattern: 0, repeats: 100, tempo: 120)], loops: false,
                              sampleRate: 48000, origin: 0)
        let first = collect(s, until: 100_000_000), second = collect(s, until: 100_000_000)
        #expect(first == second)
        #expect((300...500).contains(first.count), "about a quarter of 1600 steps, got \(first.count)")
    }

    @Test func humanizeStaysWithinItsBoundsAndIsSeeded() {
        let p = pattern(velocities: [100, 100, 100, 100], humanize: (seed: 9, frames: 40, velocity: 5))
        let s = SongSequencer(patterns: [p], sections: [SongSection(pattern: 0, repeats: 50, tempo: 120)], loops: false,
                              sampleRate: 48000, origin: 1000)
        let triggers = collect(s, until: 10_000_000)
        #expect(triggers.count == 200)
        for (i, t) in triggers.enumerated() {
            #expect(abs(t.frame - Frame(1000 + 6000 * i)) <= 40)
            #expect(abs(Int((t.velocity * 127).rounded()) - 100) <= 5)
        }
        #expect(Set(triggers.map { $0.frame - Frame(1000 + 6000 * triggers.firstIndex(of: $0)!) }).count > 10)
        #expect(triggers == collect(s, until: 10_000_000))
    }

    @Test func restsAndVelocitiesComeThrough() {
        let s = SongSequencer(patterns: [pattern(velocities: [127, 0, 64, 0])], sections: [SongSection(pattern: 0, tempo: 120)],
                              loops: false, sampleRate: 48000, origin: 0)
        #expect(collect(s, until: 100_000).map { Int(($0.velocity * 127).rounded()) } == [127, 64])
    }

    @Test func positionNamesBarBeatAndPattern() {
        let a = SequencePattern(name: "verse", beatsPerBar: 4, stepsPerBeat: 4, stepCount: 32, tracks: [])
        let b = SequencePattern(name: "fill", beatsPerBar: 4, stepsPerBeat: 4, stepCount: 16, tracks: [])
        let s = SongSequencer(patterns: [a, b], sections: [SongSection(pattern: 0, tempo: 120), SongSection(pattern: 1, tempo: 120)],
                              loops: true, sampleRate: 48000, origin: 100)
        #expect(s.position(at: 99) == nil)
        #expect(s.position(at: 100) == SongPosition(section: 0, pattern: "verse", bar: 1, beat: 1))
        #expect(s.position(at: 100 + 24000 * 5) == SongPosition(section: 0, pattern: "verse", bar: 2, beat: 2))
        #expect(s.position(at: 100 + 24000 * 9) == SongPosition(section: 1, pattern: "fill", bar: 1, beat: 2))
        #expect(s.position(at: 100 + 24000 * 12) == SongPosition(section: 0, pattern: "verse", bar: 1, beat: 1))
    }
}
