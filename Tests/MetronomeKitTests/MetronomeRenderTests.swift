import Foundation
import JACKTestSupport
import SamplerCore
import SoundFiles
import Testing
@testable import MetronomeKit
import ProgramHost
import Sync
@testable import Scheduling

/// The metronome through the real engine and renderer: what is rendered is where the clicks were
/// scheduled, which is where the music says.
@Suite struct MetronomeRenderTests {
    @Test func aRenderedHourAt113HasAll6780ClicksOnTheirIdealFrames() throws {
        let s = try settings { $0.tempo = "113" }
        // The schedule…
        var m = Metronome(timing: TempoMapTiming(map: s.map, sampleRate: 48000), origin: 0)
        var frames: [Frame] = []
        m.produce(before: 3600 * 48000) { frames.append($0.frame) }
        let ideal = (0..<6780).map { Frame((Double($0) * 60 * 48000 / 113).rounded()) }
        #expect(frames == ideal)
        // …and what the engine renders.
        let (onsets, peaks, engine) = try renderOnsets(s, frames: 3600 * 48000)
        #expect(onsets.count == 6780)
        #expect(onsets == ideal)
        let errors = zip(onsets, ideal).map { abs($0 - $1) }
        #expect(errors.max() == 0)
        #expect(engine.lateStartCount == 0 && engine.droppedCommandCount == 0)
        // Accents (every 4th beat) are louder than normal beats (a mono click panned centre is
        // at cos(π/4) in each channel).
        let centre = PanLaw.mono(pan: 0).left
        #expect(peaks.enumerated().allSatisfy { $0.offset % 4 == 0 ? $0.element == centre : $0.element == centre * 0.7 })
    }

    @Test(arguments: ["4 120-140", "2 3/4 60-180\n3 7/8 200-100 X.x.x.. 0.5\n1 2/4 90,95", "1 100\n2 6/8 100,110,120,130,140,150,160,170,180,190,200,210"])
    func rampsAndMapsRenderOnTheClosedFormFrames(text: String) throws {
        let map = try TempoMap(parsing: text)
        var s = MetronomeSettings(map: map, title: "test")
        s.subdivision = 2
        let timing = TempoMapTiming(map: map, sampleRate: 44100)
        var ideal: [Frame] = []
        for (i, section) in map.sections.enumerated() {
            for n in 0..<(section.beatCount! * 2) where n % 2 == 1 || section.kind(ofBeat: (n / 2) % section.meter.beats) != .silent {
                ideal.append(Frame(timing.position(section: i, beat: n, per: 2).rounded()))
            }
        }
        let (onsets, _, engine) = try renderOnsets(s, frames: Int(timing.length!.rounded()), sampleRate: 44100, quietGap: 200)
        #expect(onsets == ideal)
        #expect(engine.lateStartCount == 0)
    }

    @Test func countInLabelAndMultiplierRenderOnTheClosedFormFrames() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("song.map")
        try "a: 2 100\nb: 1 3/4 120-90\n   1 140\n".write(to: file, atomically: true, encoding: .utf8)
        let s = try settings {
            $0.mapFile = file.path
            $0.label = "b"
            $0.countIn = 2
            $0.multiply = 1.25
        }
        let timing = TempoMapTiming(map: s.map, sampleRate: 48000)
        let (onsets, peaks, _) = try renderOnsets(s, frames: Int(timing.length!.rounded()))
        // Two bars of 3/4 at 150 (120 × 1.25): beats 19,200 frames apart, softer.
        let countIn = (0..<6).map { Frame($0 * 19200) }
        // Then the ramp 150 → 112.5 over 3 beats, then 175 bpm in 4/4.
        let k = (112.5 - 150) / 3.0
        let ramp = (0..<3).map { b in Frame((115_200 + 240 * 48000 / (4 * k) * Foundation.log(1 + k * Double(b) / 150)).rounded()) }
        let rampEnd = 115_200 + 240 * 48000 / (4 * k) * Foundation.log(112.5 / 150)
        let last = (0..<4).map { b in Frame((rampEnd + Double(b) * 60 * 48000 / 175).rounded()) }
        #expect(onsets == countIn + ramp + last)
        let centre = PanLaw.mono(pan: 0).left
        #expect(abs(peaks[0] - 0.66 * centre) < 1e-6 && abs(peaks[6] - centre) < 1e-6)
    }

    /// A click made of a few samples, so that clicks 720 frames apart stay distinct.
    func shortClickFile() throws -> String {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("tick.wav").path
        try WAVFileWriter.write(path: path, channels: [[1, 0.5, 0.25, 0.125, 0.0625, 0.03]], sampleRate: 48000)
        return path
    }

    @Test func nineHundredNinetyNineBPMInSixteenthsAt4096FramesPerPeriodDropsNothing() throws {
        let file = try shortClickFile()
        let s = try settings {
            $0.tempo = "999"
            $0.subdivide = 4
            $0.sound = file
        }
        let (onsets, _, engine) = try renderOnsets(s, frames: 60 * 48000, blockSize: 4096, quietGap: 8)
        // 66.6 clicks a second: up to 6 in one 4096-frame period.
        #expect(onsets.count == 3996)
        #expect(onsets == (0..<3996).map { Frame((Double($0) * 60 * 48000 / 3996).rounded()) })
        #expect(engine.lateStartCount == 0 && engine.droppedCommandCount == 0)
    }

    @Test func subdivisionsAreSofterAndSilentBeatsSilent() throws {
        let file = try shortClickFile()
        let s = try settings {
            $0.tempo = "120"
            $0.meter = "3/4"
            $0.accents = "X.x"
            $0.subdivide = 2
            $0.sound = file
        }
        let (onsets, peaks, _) = try renderOnsets(s, frames: 72000, quietGap: 8)
        #expect(onsets == [0, 12000, 36000, 48000, 60000])
        // One file for both: the accent at full level, normal beats at 0.7, subdivisions at half that.
        let centre = PanLaw.mono(pan: 0).left
        #expect(peaks == [1, 0.35, 0.35, 0.7, 0.35].map { $0 * centre })
    }

    @Test func renderedFileIsFrameIdenticalToTheInMemoryRender() throws {
        let s = try settings {
            $0.tempo = "97"
            $0.meter = "7/8"
            $0.timbre = "woodblock"
            $0.volume = 0.5
            $0.pan = -0.5
        }
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("m.wav").path
        try MetronomeProgram(settings: s).render(to: path, frameCount: 96000, sampleRate: 48000)
        let file = try SoundFileLoader().load(path: path)
        var (engine, feeder) = try MetronomeProgram(settings: s).offline(sampleRate: 48000)
        var optional: CommandFeeder? = feeder
        let memory = OfflineRenderer(engine: engine, sampleRate: 48000, blockSize: 1024).renderToMemory(frameCount: 96000, feeder: &optional)
        #expect(file.samples(channel: 0) == memory.left)
        #expect(file.samples(channel: 1) == memory.right)
        // Panned left: the left channel is louder.
        #expect(memory.left[0] > memory.right[0] && memory.right[0] > 0)
        feeder = optional!
    }
}
