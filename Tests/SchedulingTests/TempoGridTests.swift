import Testing
import SamplerCore
@testable import Scheduling

@Suite struct TempoGridTests {
    @Test(arguments: [113.0, 120.0, 97.3])
    func anHourOfBeatsLandsOnTheClosedFormFrames(bpm: Double) {
        let grid = TempoGrid(origin: 1000, bpm: bpm, sampleRate: 48000)
        let beats = Int64(bpm * 60)
        for k in stride(from: Int64(0), through: beats, by: 1) {
            let ideal = 1000 + Int64((Double(k) * 60 * 48000 / bpm).rounded())
            #expect(grid.frame(at: k) == ideal)
            if grid.frame(at: k) != ideal { return }
        }
        // An hour at 113 bpm is 6,780 beats, the last one exactly an hour after the first.
        if bpm == 113 { #expect(grid.frame(at: 6780) == 1000 + 3600 * 48000) }
    }

    @Test func intervalsAlternateAndNeverDrift() {
        let grid = TempoGrid(origin: 0, bpm: 113, sampleRate: 48000)
        let intervals = Set((1...1000).map { grid.frame(at: Int64($0)) - grid.frame(at: Int64($0 - 1)) })
        #expect(intervals == [25486, 25487])
    }

    @Test func firstIndexAtOrAfterFindsTheNextPosition() {
        let grid = TempoGrid(origin: 500, bpm: 97.3, sampleRate: 44100, unitsPerQuarter: 4)
        for frame in [Frame(0), 500, 501, 7298, 7299, 1_000_000] {
            let k = grid.firstIndex(atOrAfter: frame)
            #expect(grid.frame(at: k) >= frame)
            if k > 0 { #expect(grid.frame(at: k - 1) < frame) }
        }
    }

    @Test func sequencerLoopsThePatternInWindows() {
        var seq = StepSequencer(steps: [[0, 1], [], [2]], bpm: 120, stepsPerBeat: 4, sampleRate: 48000, origin: 100)
        var got: [Trigger] = []
        for horizon in stride(from: Frame(0), through: 60_000, by: 777) { seq.produce(before: horizon) { got.append($0) } }
        // 120 bpm, 4 steps per beat: a step every 6000 frames.
        #expect(got.prefix(4) == [Trigger(frame: 100, player: 0), Trigger(frame: 100, player: 1),
                                  Trigger(frame: 12_100, player: 2), Trigger(frame: 18_100, player: 0)])
        #expect(got.allSatisfy { $0.frame < 60_000 })
        #expect(got.count == 11)
    }

    @Test func sequencerStopsAtItsStepLimit() {
        var seq = StepSequencer(steps: [[0]], bpm: 60, stepsPerBeat: 1, sampleRate: 1000, origin: 0, stepLimit: 3)
        var frames: [Frame] = []
        seq.produce(before: 100_000) { frames.append($0.frame) }
        #expect(frames == [0, 1000, 2000])
        #expect(seq.endFrame == 3000)
    }
}
