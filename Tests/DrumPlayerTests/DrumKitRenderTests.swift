import Foundation
import JACKTestSupport
import Patches
import SamplerCore
@testable import DrumPlayer
import ProgramHost
import Scheduling
import SoundFiles
import Testing

/// Offline renders of version 2 kits made of constant-valued samples, so that which sample is
/// heard, and from which frame, can be read straight off the output.
@Suite struct DrumKitRenderTests {
    /// Writes a mono WAV holding `value` for `frames` frames and returns its layer entry.
    func sample(_ value: Float, frames: Int = 1000, in dir: URL) throws -> SampleFile {
        let path = dir.appendingPathComponent("s\(value)-\(frames).wav").path
        let writer = try WAVFileWriter(path: path, sampleRate: 48000, channelCount: 1, format: .float32)
        let data = [Float](repeating: value, count: frames)
        try data.withUnsafeBufferPointer { try writer.write(left: $0.baseAddress!, right: nil, frameCount: frames) }
        writer.close()
        return SampleFile(path: path, resolvedPath: path)
    }

    func render(_ kit: Patch, selection: PatchSelection = .automatic, loop: Bool? = false,
                frames: Int = 96000) throws -> (left: [Float], right: [Float]) {
        var program = try PatchProgram(kit: kit, selection: selection, loop: loop)
        let engine = Engine(configuration: program.engineConfiguration)
        try program.prepare(engine: engine, sampleRate: 48000)
        var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
        return OfflineRenderer(engine: engine, sampleRate: 48000, blockSize: 128).renderToMemory(frameCount: frames, feeder: &feeder)
    }

    /// Frames where the signal leaves silence.
    func onsets(_ x: [Float]) -> [Int] {
        x.indices.filter { x[$0] != 0 && ($0 == 0 || x[$0 - 1] == 0) }
    }

    func oneBeat(_ tracks: [DrumTrack], name: String = "p", swing: Double = 0) -> DrumPattern {
        DrumPattern(name: name, beatsPerBar: 1, stepsPerBeat: 4, bars: 1, tracks: tracks, swing: swing)
    }

    @Test func velocityPicksTheLayerByWhichSampleIsHeard() throws {
        let dir = try temporaryDirectory()
        let soft = try sample(0.1, in: dir), hard = try sample(0.2, in: dir)
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "snare", layers: [
            DrumLayer(velocities: 1...63, samples: [soft]), DrumLayer(velocities: 64...127, samples: [hard]),
        ], pan: -1)], patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [30, 127, 63, 64])])], song: nil, file: "kit.json")
        let left = try render(kit).left
        #expect(onsets(left) == [0, 6000, 12000, 18000])
        // Heard: the layer's sample, scaled by velocity / 127.
        #expect(abs(left[0] - 0.1 * 30 / 127) < 1e-6)
        #expect(abs(left[6000] - 0.2) < 1e-6)
        #expect(abs(left[12000] - 0.1 * 63 / 127) < 1e-6)
        #expect(abs(left[18000] - 0.2 * 64 / 127) < 1e-6)
    }

    /// A kit of more samples than the engine's default table (1,524 here: 3 instruments of 127
    /// velocity layers of 4 round-robin samples) loads, and each hit plays its own sample: the
    /// engine's table is sized to the kit.
    @Test func aKitOfMoreSamplesThanTheDefaultTableLoadsAndPlaysEach() throws {
        let dir = try temporaryDirectory()
        func value(_ i: Int, _ v: Int, _ r: Int) -> Float { Float(((i * 127) + v - 1) * 4 + r + 1) / 8192 }
        let instruments = try (0..<3).map { i in
            DrumInstrument(id: "i\(i)", layers: try (1...127).map { v in
                DrumLayer(velocities: v...v, samples: try (0..<4).map { r in try sample(value(i, v, r), frames: 100, in: dir) })
            }, pan: -1)
        }
        #expect(instruments.reduce(0) { $0 + $1.layers.reduce(0) { $0 + $1.samples.count } } > EngineConfiguration().maxSounds)
        let hits = [(2, 127), (2, 127), (0, 1), (1, 64)]
        let tracks = (0..<3).map { i in DrumTrack(instrument: i, velocities: hits.map { $0.0 == i ? $0.1 : 0 }) }
        let kit = Patch(tempo: 120, instruments: instruments, patterns: [oneBeat(tracks)], song: nil, file: "big.json")
        let left = try render(kit, frames: 24000).left
        #expect(onsets(left) == [0, 6000, 12000, 18000])
        // Round robin: the second hit on the same layer plays its second sample.
        let expected = [value(2, 127, 0), value(2, 127, 1), value(0, 1, 0) / 127, value(1, 64, 0) * 64 / 127]
        for (k, e) in expected.enumerated() { #expect(abs(left[k * 6000] - e) < 1e-6, "hit \(k)") }
    }

    /// Files decode on several threads, but a kit with two files that fail only when decoded
    /// (valid headers, no frames) reports the first in the kit's order, every time, and leaves
    /// nothing registered.
    @Test func theFirstBadFileInTheKitsOrderIsReportedAndNothingStaysRegistered() throws {
        let dir = try temporaryDirectory()
        var instruments: [DrumInstrument] = []
        for i in 0..<40 {
            var file = try sample(Float(i + 1) / 64, frames: 20_000, in: dir)
            if i == 10 || i == 30 {
                let path = dir.appendingPathComponent("bad\(i).wav").path
                try WAVFileWriter.write(path: path, channels: [[]], sampleRate: 48000)
                file = SampleFile(path: path, resolvedPath: path)
            }
            // Two samples: an instrument's only sample is opened first to see whether it streams.
            let other = try sample(Float(i + 1) / 128, frames: 20_000, in: dir)
            instruments.append(DrumInstrument(id: "i\(i)", layers: [DrumLayer(samples: [other, file])]))
        }
        let kit = Patch(tempo: 120, instruments: instruments, patterns: [], song: nil, file: "bad.json")
        for _ in 0..<5 {
            let engine = Engine(configuration: .init(maxPlayers: 64))
            #expect(throws: (any Error).self) { try LoadedPatch(kit, engine: engine, sampleRate: 44_100) }
            do { _ = try LoadedPatch(kit, engine: engine, sampleRate: 44_100) } catch {
                #expect("\(error)".hasPrefix("bad.json: instruments[10].layers[0].samples[1]: "), "\(error)")
                #expect("\(error)".contains("bad10.wav"), "\(error)")
            }
            #expect(engine.registeredSoundCount == 0)
        }
    }

    /// A layer's gainDb scales what it plays on top of the instrument's gain; with the balance
    /// pan law a centred mono sample is at unity on both sides (Hydrogen's default), with the
    /// default law at −3 dB; panned right, the balance law keeps the right side at unity.
    @Test func layerGainsAndTheBalancePanLaw() throws {
        let dir = try temporaryDirectory()
        let soft = try sample(0.1, in: dir), hard = try sample(0.2, in: dir)
        func kit(_ law: PanLawSetting, pan: Double) -> Patch {
            Patch(tempo: 120, instruments: [DrumInstrument(id: "snare", layers: [
                DrumLayer(velocities: 1...63, samples: [soft], gainDb: -6),
                DrumLayer(velocities: 64...127, samples: [hard], gainDb: 3),
            ], gainDb: -2, pan: pan)], patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [63, 127, 0, 0])])], song: nil,
                    file: "kit.json", panLaw: law)
        }
        let g = { (db: Double) in Float(Double.pow(10, db / 20)) }
        let balanced = try render(kit(.balance, pan: 0))
        #expect(abs(balanced.left[0] - 0.1 * 63 / 127 * g(-6) * g(-2)) < 1e-6)
        #expect(abs(balanced.left[6000] - 0.2 * g(3) * g(-2)) < 1e-6)
        #expect(balanced.left[6000] == balanced.right[6000])
        let constantPower = try render(kit(.constantPower, pan: 0))
        #expect(abs(constantPower.left[6000] - 0.2 * g(3) * g(-2) * PanGains.center.monoLeft) < 1e-6)
        let right = try render(kit(.balance, pan: 0.5))
        #expect(abs(right.right[6000] - 0.2 * g(3) * g(-2)) < 1e-6)
        #expect(abs(right.left[6000] - 0.5 * 0.2 * g(3) * g(-2)) < 1e-6)
    }

    @Test func roundRobinCyclesThroughTheLayersSamples() throws {
        let dir = try temporaryDirectory()
        let samples = try [0.1, 0.2, 0.3].map { try sample(Float($0), in: dir) }
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "hat", layers: [DrumLayer(samples: samples)], pan: -1)],
                          patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [127, 127, 127, 127])])], song: nil, file: "kit.json")
        let left = try render(kit).left
        #expect([0, 6000, 12000, 18000].map { (left[$0] * 10).rounded() / 10 } == [0.1, 0.2, 0.3, 0.1])
    }

    @Test func theClosedHatChokesTheOpenHatWithinTheFade() throws {
        let dir = try temporaryDirectory()
        let open = try sample(0.4, frames: 30000, in: dir), closed = try sample(0.1, in: dir)
        let kit = Patch(tempo: 120, instruments: [
            DrumInstrument(id: "open-hat", layers: [DrumLayer(samples: [open])], pan: -1, chokeGroup: 1),
            DrumInstrument(id: "closed-hat", layers: [DrumLayer(samples: [closed])], pan: 1, chokeGroup: 1),
        ], patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [127, 0, 0, 0]),
                               DrumTrack(instrument: 1, velocities: [0, 127, 0, 0])])], song: nil, file: "kit.json")
        let out = try render(kit, frames: 48000)
        let fade = 240  // 5 ms at 48 kHz
        #expect(abs(out.left[5999] - 0.4) < 1e-6)
        #expect(out.left[6000 + fade - 1] > 0)
        #expect(out.left[(6000 + fade)...].allSatisfy { $0 == 0 })
        #expect(onsets(out.right) == [6000])
    }

    @Test func swingDelaysEverySecondStepExactly() throws {
        let dir = try temporaryDirectory()
        let click = try sample(0.5, frames: 100, in: dir)
        let kit = Patch(tempo: 97, instruments: [DrumInstrument(id: "rim", layers: [DrumLayer(samples: [click])], pan: -1)],
                          patterns: [DrumPattern(name: "p", beatsPerBar: 2, stepsPerBeat: 4, bars: 1,
                                                 tracks: [DrumTrack(instrument: 0, velocities: Array(repeating: 100, count: 8))], swing: 30)],
                          song: nil, file: "kit.json")
        let step = 60.0 * 48000 / (97 * 4)
        let expected = (0..<8).map { Int(((Double($0) + ($0 % 2 == 1 ? 0.3 : 0)) * step).rounded()) }
        #expect(onsets(try render(kit).left) == expected)
    }

    @Test func aSongPlaysItsPatternsInOrderWithTheirRepeats() throws {
        let dir = try temporaryDirectory()
        let a = try sample(0.1, frames: 100, in: dir), b = try sample(0.3, frames: 100, in: dir)
        let kit = Patch(tempo: 120, instruments: [
            DrumInstrument(id: "a", layers: [DrumLayer(samples: [a])], pan: -1),
            DrumInstrument(id: "b", layers: [DrumLayer(samples: [b])], pan: -1),
        ], patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [127, 0, 0, 0])], name: "A"),
                      oneBeat([DrumTrack(instrument: 1, velocities: [127, 0, 127, 0])], name: "B")],
           song: Song(entries: [.init(pattern: 0, repeats: 3), .init(pattern: 1, repeats: 1, tempo: 60)], loop: false),
           file: "kit.json")
        let left = try render(kit, selection: .song, frames: 200_000).left
        // A: 24000 frames a play, three times; B at 60 bpm: 12000 frames a step.
        let heard = onsets(left).map { ($0, (left[$0] * 10).rounded() / 10) }
        #expect(heard.map(\.0) == [0, 24000, 48000, 72000, 96000])
        #expect(heard.map(\.1) == [0.1, 0.1, 0.1, 0.3, 0.3])
    }

    @Test func aPatternWithoutLoopingPlaysOnce() throws {
        let dir = try temporaryDirectory()
        let a = try sample(0.1, frames: 100, in: dir)
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "a", layers: [DrumLayer(samples: [a])], pan: -1)],
                          patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [127, 0, 0, 0])])], song: nil, file: "kit.json")
        #expect(onsets(try render(kit, loop: false).left) == [0])
        #expect(onsets(try render(kit, loop: true).left) == [0, 24000, 48000, 72000])
    }

    @Test func tuningResamplesAtLoadTime() throws {
        let dir = try temporaryDirectory()
        let a = try sample(0.25, frames: 2000, in: dir)
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "a", layers: [DrumLayer(samples: [a])], pan: -1, tune: 12)],
                          patterns: [oneBeat([DrumTrack(instrument: 0, velocities: [127, 0, 0, 0])])], song: nil, file: "kit.json")
        let left = try render(kit, frames: 4000).left
        // An octave up: half as many frames, same level in the middle.
        #expect(abs(left[500] - 0.25) < 0.01)
        #expect(left[1000...].allSatisfy { $0 == 0 })
    }

    @Test func anUnknownPatternIsAnErrorNamingTheChoices() throws {
        let kit = Patch(tempo: 120, instruments: [], patterns: [oneBeat([], name: "verse")], song: nil, file: "kit.json")
        #expect(throws: SamplerError(#"kit.json: --pattern: no pattern named "chorus" (expected one of: verse)"#)) {
            try PatchProgram(kit: kit, selection: .pattern("chorus"))
        }
        #expect(throws: SamplerError(#"kit.json: --song: the patch has no "song""#)) {
            try PatchProgram(kit: kit, selection: .song)
        }
    }

    @Test func theStatusShowsBarBeatAndPattern() throws {
        let kit = Patch(tempo: 120, instruments: [], patterns: [DrumPattern(name: "groove", bars: 2, tracks: [])], song: nil, file: "kit.json")
        let program = try PatchProgram(kit: kit)
        _ = program.makeFeeder(origin: 1000)
        #expect(program.status(at: 1000 + 24000 * 5) == "bar 2.2  groove")
    }

    @Test func instrumentsWithoutANoteGetTheirGeneralMIDINote() throws {
        let kit = Patch(tempo: 120, instruments: [
            DrumInstrument(id: "kick", layers: []), DrumInstrument(id: "Open Hat", layers: []),
            DrumInstrument(id: "cowbell", layers: [], midiNote: 36), DrumInstrument(id: "whistle", layers: []),
        ], patterns: [], song: nil, file: "kit.json")
        // An explicit note wins over a default one.
        #expect(kit.resolvedMIDINotes == [nil, 46, 36, nil])
    }
}
