import Foundation
import JACKTestSupport
import Patches
import SamplerCore
@testable import DrumPlayer
import ProgramHost
import Scheduling
import SoundFiles
import Testing

/// A sample played at many pitches (an SFZ region on many keys) is held once and tuned by its
/// voices' rate (`LoadedPatch.pitchedInVoices`); one played at a few pitches is resampled at
/// load to each.
@Suite struct PitchedVoicesTests {
    /// One sample on `tunes.count` instruments, tuned `tunes` semitones, hit one after another
    /// 6,000 frames apart in the order given.
    func kit(_ sample: SampleFile, tunes: [Double], in dir: URL) -> Patch {
        let instruments = tunes.enumerated().map { k, tune in
            DrumInstrument(id: "k\(k)", layers: [DrumLayer(velocities: 1...127, samples: [sample])], pan: 0, tune: tune,
                           midiNote: 40 + k, voices: 2)
        }
        let bars = (tunes.count + 15) / 16
        let tracks = tunes.indices.map { i in
            DrumTrack(instrument: i, velocities: (0..<(16 * bars)).map { $0 == i ? 127 : 0 })
        }
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: bars, tracks: tracks)
        return Patch(tempo: 120, instruments: instruments, patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
    }

    @Test func aSamplePlayedAtManyPitchesIsHeldOnceAndTunedByItsVoices() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tails = StreamedTailsTests()
        let sample = try tails.noise("tone.wav", frames: 5_000, stereo: true, in: dir)
        // Three octaves up first: more than a voice is tuned (`highestVoiceTuning`), so resampled.
        let tunes = [36.0] + stride(from: 12.0, through: -12, by: -2).map { $0 }
        let patch = kit(sample, tunes: tunes, in: dir)
        #expect(LoadedPatch.pitchedInVoices(patch, streamed: []) == Array(tunes.indices).filter { tunes[$0] != 0 && tunes[$0] <= 24 })
        let frames = 6_000 * tunes.count + 12_000
        let whole = try tails.render(patch, tails: false, frames: frames)
        // One copy in memory, its voices tuned, and the copy three octaves up.
        #expect(whole.engine.registeredSoundCount == 2)
        #expect(whole.loaded.definitions.map(\.tuneCents) == tunes.map { $0 <= 24 ? Float($0 * 100) : 0 })
        // An octave up plays the 5,000 frames in 2,500; an octave down in 10,000.
        func sounding(from start: Int, within: Int) -> Int {
            (start..<(start + within)).last { whole.left[$0] != 0 || whole.right[$0] != 0 }.map { $0 - start + 1 } ?? 0
        }
        let up = sounding(from: 6_000, within: 6_000)
        #expect((2_499...2_501).contains(up), "an octave up sounded \(up) frames")
        let high = sounding(from: 0, within: 6_000)
        #expect((624...626).contains(high), "three octaves up sounded \(high) frames")
        let down = sounding(from: 6_000 * (tunes.count - 1), within: 12_000)
        #expect((9_998...10_001).contains(down), "an octave down sounded \(down) frames")
        // Untuned, it is the sample itself: the step at 0 semitones.
        let source = try SoundFileLoader().load(path: sample.resolvedPath)
        let k0 = tunes.firstIndex(of: 0)! * 6_000
        let level = whole.left[k0] / source.samples(channel: 0)[0]
        #expect(abs(level - PanGains(pan: 0).stereoLeft) < 1e-6)
        // Its voices' tails streamed read the same bits (the filler reads ahead of voices that
        // play twice as fast).
        let streamed = try tails.render(patch, tails: true, head: 1_024, frames: frames)
        #expect(streamed.loaded.streamsTails)
        #expect(streamed.engine.tailUnderrunCount == 0 && streamed.engine.refusedTailCount == 0)
        #expect(streamed.left == whole.left && streamed.right == whole.right)
    }

    @Test func aSamplePlayedAtAFewPitchesIsResampledToEach() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tails = StreamedTailsTests()
        let sample = try tails.noise("tone.wav", frames: 5_000, stereo: false, in: dir)
        let patch = kit(sample, tunes: [0, 3, 5, -2, 7], in: dir)
        #expect(LoadedPatch.mostPitchesResampled == 4)
        #expect(LoadedPatch.pitchedInVoices(patch, streamed: []).isEmpty)
        let whole = try tails.render(patch, tails: false, frames: 36_000)
        #expect(whole.engine.registeredSoundCount == 5)
        #expect(whole.loaded.definitions.allSatisfy { $0.tuneCents == 0 })
        // In a kit that streams its tails, every tuned sample is tuned by its voices: a
        // resampled copy would be a head and a tail of its own.
        let streamed = try tails.render(patch, tails: true, head: 1_024, frames: 36_000)
        #expect(streamed.loaded.streamsTails)
        #expect(streamed.loaded.definitions.map(\.tuneCents) == [0, 300, 500, -200, 700])
        #expect(streamed.engine.tailUnderrunCount == 0)
        // Three semitones up: the 5,000 frames in 4,205.
        let up = (6_000..<12_000).last { streamed.left[$0] != 0 }.map { $0 - 6_000 + 1 } ?? 0
        #expect((4_204...4_206).contains(up), "three semitones up sounded \(up) frames")
        // A delayed instrument keeps its resampled copy (the delay's silence is in its frames).
        var delayed = kit(sample, tunes: [1, 2, 3, 4, 5, 6], in: dir)
        delayed.instruments[2].delay = 0.01
        #expect(LoadedPatch.pitchedInVoices(delayed, streamed: []) == [0, 1, 3, 4, 5])
    }

    /// The fastest a voice may play counts its tuning with the bend on top: two octaves up and
    /// a bend of an octave is 8 times, and the offline blocks shrink so that no voice plays
    /// past its head within one.
    @Test func aTunedVoicesFastestRateCountsItsTuning() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tails = StreamedTailsTests()
        let sample = try tails.noise("tone.wav", frames: 5_000, stereo: false, in: dir)
        var patch = kit(sample, tunes: [24, 12, 5, 3, 0], in: dir)
        for i in patch.instruments.indices { patch.instruments[i].bendUp = 1200 }
        let streamed = try tails.render(patch, tails: true, head: 1_024, frames: 36_000)
        #expect(streamed.loaded.definitions.map(\.tuneCents) == [2400, 1200, 500, 300, 0])
        #expect(streamed.engine.longestBlockWithinHeads(atMost: 256) == (1_025 - 2) / 8)
        #expect(streamed.engine.tailUnderrunCount == 0)
    }
}
