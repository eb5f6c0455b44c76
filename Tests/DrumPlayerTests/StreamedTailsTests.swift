import Foundation
import JACKTestSupport
import Locking
import Patches
import SamplerCore
@testable import DrumPlayer
import ProgramHost
import Scheduling
import SoundFiles
import Testing

/// Sounds streamed per voice (issue 51): heads in memory, tails read from disk for each voice
/// that plays them (`TailFiller`). An offline render waits for every tail, so it is the same,
/// bit for bit, as the render of the same kit wholly in memory.
@Suite struct StreamedTailsTests {
    /// A WAV of `frames` frames of noise fading out (16-bit, as libraries are), stereo or mono,
    /// at `rate`.
    func noise(_ name: String, frames: Int, stereo: Bool, rate: Int = 48_000, in dir: URL) throws -> SampleFile {
        let path = dir.appendingPathComponent(name).path
        let writer = try WAVFileWriter(path: path, sampleRate: rate, channelCount: stereo ? 2 : 1, format: .pcm16)
        // A hash of the frame and the file: noise, and cheap to make.
        let seed = UInt32(truncatingIfNeeded: name.hashValue)
        func value(_ i: Int, _ c: UInt32) -> Float {
            let h = (UInt32(truncatingIfNeeded: i) &* 2_654_435_761) ^ (seed &+ c &* 40_503)
            return (Float(h >> 16) / 65_536 - 0.5) * Float(frames - i) / Float(frames)
        }
        let left = (0..<frames).map { value($0, 1) }
        let right = (0..<frames).map { value($0, 2) }
        try left.withUnsafeBufferPointer { l in
            try right.withUnsafeBufferPointer { r in
                try writer.write(left: l.baseAddress!, right: stereo ? r.baseAddress! : nil, frameCount: frames)
            }
        }
        writer.close()
        return SampleFile(path: path, resolvedPath: path)
    }

    /// A library of `instruments` instruments of `layers` velocity layers, each its own file
    /// (every fourth mono, every third at 44.1 kHz), and a pattern whose hits overlap.
    func library(instruments: Int, layers: Int, frames: Int, in dir: URL) throws -> Patch {
        var kit: [DrumInstrument] = []
        for i in 0..<instruments {
            var drumLayers: [DrumLayer] = []
            for l in 0..<layers {
                let k = i * layers + l
                let sample = try noise("n\(k).wav", frames: frames + 37 * (k % 50), stereo: k % 4 != 1, rate: k % 3 == 0 ? 44_100 : 48_000, in: dir)
                let low = 1 + l * 127 / layers, high = (l + 1) * 127 / layers
                drumLayers.append(DrumLayer(velocities: low...high, samples: [sample]))
            }
            kit.append(DrumInstrument(id: "i\(i)", layers: drumLayers, pan: Double(i % 5) / 4 - 0.5, voices: 4))
        }
        // Sixteenth notes at 120 bpm (6,000 frames apart), each step three instruments at once.
        let steps = 32
        let tracks = (0..<instruments).map { i in
            DrumTrack(instrument: i, velocities: (0..<steps).map { s in (s * 7 + i) % instruments < 3 ? 1 + (s * 37 + i * 11) % 127 : 0 })
        }
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 2, tracks: tracks)
        return Patch(tempo: 120, instruments: kit, patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
    }

    /// Renders `kit` offline; with `tails`, every long sample keeps 1,024 frames in memory.
    func render(_ kit: Patch, tails: Bool, head: Int? = 1024, voices: Int = 64, ring: Int? = nil, frames: Int,
                before: ((LoadedPatch) -> Void)? = nil) throws -> (left: [Float], right: [Float], engine: Engine, loaded: LoadedPatch) {
        var streaming = PatchStreamingOptions()
        if tails {
            streaming.tailsAboveBytes = 0
            streaming.headFrames = head
            streaming.tailVoices = voices
            streaming.tailRingFrames = ring
        }
        var program = try PatchProgram(kit: kit, loop: false, streaming: streaming)
        let engine = Engine(configuration: program.engineConfiguration)
        try program.prepare(engine: engine, sampleRate: 48000)
        let loaded = try #require(program.loaded)
        before?(loaded)
        var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
        let out = OfflineRenderer(engine: engine, sampleRate: 48000, blockSize: 256).renderToMemory(frameCount: frames, feeder: &feeder)
        return (out.left, out.right, engine, loaded)
    }

    /// More files than the engine's old 1,024-sound table, streamed: the same bits as in memory.
    @Test func aLibraryStreamedPerVoiceRendersAsItDoesInMemory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let kit = try library(instruments: 44, layers: 24, frames: 5_000, in: dir)
        let frames = 48_000 * 2 + 24_000
        let whole = try render(kit, tails: false, frames: frames)
        let streamed = try render(kit, tails: true, frames: frames)
        #expect(!whole.loaded.streamsTails && streamed.loaded.streamsTails)
        #expect(streamed.engine.tailUnderrunCount == 0 && streamed.engine.refusedTailCount == 0)
        #expect(whole.left.contains { $0 != 0 })
        for (a, b) in [(whole.left, streamed.left), (whole.right, streamed.right)] {
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "differs from frame \(first ?? -1)")
        }
    }

    /// Samples nine times as long as each voice's ring (4,096 frames), a third of them at
    /// 44.1 kHz (converted chunk by chunk as the filler reads): the filler writes each tail over
    /// the frames its voice has played, never more than a ring ahead, and the render is the same
    /// bits as in memory; the buffers are the ring's length, not the tails'.
    @Test func tailsLongerThanTheirRingsRenderAsInMemory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let kit = try library(instruments: 6, layers: 4, frames: 40_000, in: dir)
        let frames = 48_000 * 2
        let whole = try render(kit, tails: false, frames: frames)
        let streamed = try render(kit, tails: true, ring: 4_096, frames: frames)
        #expect(streamed.loaded.streamsTails)
        #expect(streamed.engine.tailBufferShape.capacity == 4_096)
        #expect(streamed.engine.tailUnderrunCount == 0 && streamed.engine.refusedTailCount == 0)
        #expect(whole.left.contains { $0 != 0 })
        for (a, b) in [(whole.left, streamed.left), (whole.right, streamed.right)] {
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "differs from frame \(first ?? -1)")
        }
    }

    /// Heads shorter than what a voice plays in one block: the offline renderer's blocks
    /// shrink so that no voice plays past its head before the filler reads its tail, and the
    /// render is the same bits as in memory.
    @Test(arguments: [64, 300])
    func headsShorterThanABlockStillRenderExactly(head: Int) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let kit = try library(instruments: 6, layers: 4, frames: 5_000, in: dir)
        let frames = 48_000
        let whole = try render(kit, tails: false, frames: frames)
        let streamed = try render(kit, tails: true, head: head, frames: frames)
        #expect(streamed.loaded.streamsTails)
        #expect(streamed.engine.longestBlockWithinHeads(atMost: 256) == (head - 2) / 4)
        #expect(streamed.engine.tailUnderrunCount == 0 && streamed.engine.refusedTailCount == 0)
        for (a, b) in [(whole.left, streamed.left), (whole.right, streamed.right)] {
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "differs from frame \(first ?? -1)")
        }
    }

    /// The filler on a thread of its own, as live: each block rendered once the tails asked for
    /// before it are read (as a disk that keeps up), the same bits as in memory.
    @Test func theFillersThreadReadsTailsAsVoicesAskForThem() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let kit = try library(instruments: 6, layers: 4, frames: 5_000, in: dir)
        let frames = 48_128
        let whole = try render(kit, tails: false, frames: frames)
        var streaming = PatchStreamingOptions()
        streaming.tailsAboveBytes = 0
        streaming.headFrames = 1024
        var program = try PatchProgram(kit: kit, loop: false, streaming: streaming)
        let engine = Engine(configuration: program.engineConfiguration)
        try program.prepare(engine: engine, sampleRate: 48000)
        let loaded = try #require(program.loaded)
        loaded.startTailThread()
        var feeder = program.makeFeeder(origin: 0)
        var left: [Float] = [], right: [Float] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { l.deallocate(); r.deallocate() }
        var at: Frame = 0
        while at < Frame(frames) {
            feeder.feed(engine, before: at + 256)
            #expect(waitUntil(timeout: 10) { loaded.tailsRead })
            engine.render(frameCount: 256, periodStart: at, left: l, right: r)
            engine.drainEvents { _ in }
            left += UnsafeBufferPointer(start: l, count: 256)
            right += UnsafeBufferPointer(start: r, count: 256)
            at += 256
        }
        #expect(engine.tailUnderrunCount == 0)
        #expect(left == whole.left && right == whole.right, "differs from frame \(zip(left, whole.left).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
    }

    /// A voice bent up four octaves after it starts (16 times as fast through its tail) at
    /// 1,024-frame periods, with 2,048-frame heads and the shortest rings (four heads) asked
    /// for: the rings are sized for the fastest voice at the engine's period (four periods of
    /// it), and the filler's thread keeps the tail ahead of its voice. Without the period known,
    /// the rings stay as asked and the same voice outruns its ring, counted.
    @Test func ringsAreSizedForTheFastestVoiceAtTheServersPeriod() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A tail longer than the ring, so that the ring wraps.
        var kit = try library(instruments: 1, layers: 1, frames: 200_000, in: dir)
        kit.instruments[0].bendUp = 4800
        // One note, on the first frame; the bend comes once it sounds.
        kit.patterns[0].tracks[0].velocities = [100] + Array(repeating: 0, count: kit.patterns[0].tracks[0].velocities.count - 1)
        func run(period: Int) throws -> (capacity: Int, underruns: Int, heard: Bool) {
            var streaming = PatchStreamingOptions()
            streaming.tailsAboveBytes = 0
            streaming.headFrames = 2048
            streaming.tailRingFrames = 4096
            var program = try PatchProgram(kit: kit, loop: false, streaming: streaming)
            let engine = Engine(configuration: program.engineConfiguration)
            engine.expectedPeriodFrames = period
            try program.prepare(engine: engine, sampleRate: 48000)
            let loaded = try #require(program.loaded)
            loaded.startTailThread()
            var feeder = program.makeFeeder(origin: 0)
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 1024), r = UnsafeMutablePointer<Float>.allocate(capacity: 1024)
            defer { l.deallocate(); r.deallocate() }
            var heard = false
            let bend: [UInt8] = [0xE0, 0x7F, 0x7F]
            for k in 0..<40 {
                let at = Frame(k * 1024)
                feeder.feed(engine, before: at + 1024)
                // The bend up, two periods after the first note.
                if k == 2 { bend.withUnsafeBufferPointer { engine.receiveMIDI($0.baseAddress!, count: 3, at: at) } }
                // As a device's period gives the filler time: a whole pass of it since the last
                // render, and nothing left that it could read.
                let passes = loaded.tailPassCount
                #expect(waitUntil(timeout: 10) { loaded.tailPassCount >= passes + 2 && loaded.tailsRead })
                engine.render(frameCount: 1024, periodStart: at, left: l, right: r)
                engine.drainEvents { _ in }
                if k > 2 && UnsafeBufferPointer(start: l, count: 1024).contains(where: { $0 != 0 }) { heard = true }
            }
            return (engine.tailBufferShape.capacity, engine.tailUnderrunCount, heard)
        }
        let sized = try run(period: 1024)
        #expect(sized.capacity >= 4 * 16 * 1024 && sized.capacity < 200_000)
        #expect(sized.underruns == 0 && sized.heard)
        let unsized = try run(period: 0)
        #expect(unsized.capacity == 4 * 2048)
        #expect(unsized.underruns > 0)
    }

    /// The server raises its period after the load (JACK's buffer-size callback): the tail rings
    /// sized at the load are now too short for the kit's fastest voice, and `sampler play` says
    /// so once, naming the period, the rings and the kit.
    @Test func aPeriodRaisedAfterTheLoadIsWarnedOfOnce() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var kit = try library(instruments: 1, layers: 1, frames: 200_000, in: dir)
        kit.instruments[0].bendUp = 1200
        let reported = Locked<[String]>([])
        var streaming = PatchStreamingOptions()
        streaming.tailsAboveBytes = 0
        streaming.headFrames = 1024
        streaming.tailRingFrames = 4096
        streaming.report = { line in reported.withLock { $0.append(line) } }
        var program = try PatchProgram(kit: kit, loop: false, streaming: streaming)
        let engine = Engine(configuration: program.engineConfiguration)
        engine.expectedPeriodFrames = 256
        try program.prepare(engine: engine, sampleRate: 48000)
        // Four periods of four times the rate: 4,096 frames at 256.
        #expect(engine.tailBufferShape.capacity == 4096)
        var feeder = program.makeFeeder(origin: 0)
        #expect(program.tick(engine: engine, feeder: &feeder, frame: 0))
        #expect(reported.withLock { $0 }.isEmpty)
        engine.expectedPeriodFrames = 1024
        _ = program.tick(engine: engine, feeder: &feeder, frame: 0)
        _ = program.tick(engine: engine, feeder: &feeder, frame: 0)
        let lines = reported.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("the server's period is now 1024 frames: the 4096-frame tail rings") == true)
        #expect(lines.first?.contains(kit.file) == true)
    }

    /// Tails that cannot be read (the files gone after the load: a disk that does not answer):
    /// each voice plays its head and ends there, counted; everything before is as in memory,
    /// nothing is shifted.
    @Test func aTailNotReadEndsItsVoiceAtTheHeadAndIsCounted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let kit = try library(instruments: 4, layers: 2, frames: 9_000, in: dir)
        let frames = 48_000
        let whole = try render(kit, tails: false, frames: frames)
        let cut = try render(kit, tails: true, frames: frames) { _ in
            for file in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] where file.hasSuffix(".wav") {
                try? FileManager.default.removeItem(at: dir.appendingPathComponent(file))
            }
        }
        #expect(cut.engine.tailUnderrunCount > 0)
        // The first hit's heads (1,024 frames from frame 0) are heard as in memory; after them,
        // only what was in memory plays.
        #expect(Array(whole.left[0..<1024]) == Array(cut.left[0..<1024]))
        #expect(cut.left[1100..<6000].allSatisfy { $0 == 0 } && whole.left[1100..<6000].contains { $0 != 0 })
    }

    /// A sample marked `"preload": true` is never streamed: with every file gone after the load,
    /// its instrument still plays whole, while the one beside it ends at its head.
    @Test func aPreloadedSampleIsNeverStreamed() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var kept = try noise("kept.wav", frames: 9_000, stereo: true, in: dir)
        kept.loading = .preload
        let other = try noise("other.wav", frames: 9_000, stereo: true, in: dir)
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 1,
                                  tracks: [DrumTrack(instrument: 0, velocities: [100] + Array(repeating: 0, count: 15)),
                                           DrumTrack(instrument: 1, velocities: [0, 0, 100] + Array(repeating: 0, count: 13))])
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "kept", layers: [DrumLayer(samples: [kept])], voices: 2),
                                                  DrumInstrument(id: "other", layers: [DrumLayer(samples: [other])], voices: 2)],
                        patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        let whole = try render(kit, tails: false, frames: 24_000)
        let cut = try render(kit, tails: true, frames: 24_000) { _ in
            for name in ["kept.wav", "other.wav"] { try? FileManager.default.removeItem(at: dir.appendingPathComponent(name)) }
        }
        #expect(cut.engine.tailUnderrunCount == 1)
        // The preloaded hit (frames 0..<9,000) whole; the other (from 12,000: sixteenths at 120
        // bpm are 6,000 frames apart) only its head of 1,024 frames.
        #expect(Array(whole.left[0..<9_000]) == Array(cut.left[0..<9_000]))
        #expect(Array(whole.left[12_000..<13_024]) == Array(cut.left[12_000..<13_024]))
        #expect(cut.left[13_100..<21_000].allSatisfy { $0 == 0 } && whole.left[13_100..<21_000].contains { $0 != 0 })
    }

    /// The head is as long as the patch says (`"headFrames"`), unless the player sets it: with
    /// the files gone after the load, a hit plays exactly its head.
    @Test func theHeadIsAsLongAsThePatchSaysUnlessThePlayerSetsIt() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try noise("a.wav", frames: 20_000, stereo: false, in: dir)
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 1,
                                  tracks: [DrumTrack(instrument: 0, velocities: [100] + Array(repeating: 0, count: 15))])
        var kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "a", layers: [DrumLayer(samples: [file])], voices: 2)],
                        patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        kit.headFrames = 3_000
        let whole = try render(kit, tails: false, frames: 20_000)
        let gone: (LoadedPatch) -> Void = { _ in try? FileManager.default.removeItem(at: dir.appendingPathComponent("a.wav")) }
        for (head, heard) in [(nil, 3_000), (2_048, 2_048)] as [(Int?, Int)] {
            _ = try noise("a.wav", frames: 20_000, stereo: false, in: dir)
            let cut = try render(kit, tails: true, head: head, frames: 20_000, before: gone)
            #expect(Array(cut.left[0..<heard]) == Array(whole.left[0..<heard]))
            #expect(cut.left[(heard + 100)...].allSatisfy { $0 == 0 } && whole.left[(heard + 100)..<19_000].contains { $0 != 0 })
        }
    }

    /// A roll on one key: the file's first tail is decoded straight into its buffer, the next
    /// ones copied from one whole decode kept for them; the same bits as in memory either way.
    @Test func aRollOnOneKeyDecodesItsFileOnceForItsTails() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try noise("roll.wav", frames: 20_000, stereo: true, rate: 44_100, in: dir)
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 1,
                                  tracks: [DrumTrack(instrument: 0, velocities: [100, 90, 80, 70] + Array(repeating: 0, count: 12))])
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "roll", layers: [DrumLayer(samples: [file])], voices: 4)],
                        patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        let whole = try render(kit, tails: false, frames: 48_000)
        let streamed = try render(kit, tails: true, frames: 48_000)
        #expect(streamed.engine.tailUnderrunCount == 0)
        #expect(whole.left.contains { $0 != 0 })
        #expect(whole.left == streamed.left && whole.right == streamed.right)
    }

    /// A two-second sample hit every sixteenth note on one voice: each hit cuts the one before
    /// after 6,000 frames, and only about that much of each tail is read, not its 94,976
    /// frames; the same bits as in memory.
    @Test func aVoiceCutShortLeavesTheRestOfItsTailUnread() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try noise("long.wav", frames: 96_000, stereo: true, in: dir)
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 1,
                                  tracks: [DrumTrack(instrument: 0, velocities: Array(repeating: 100, count: 16))])
        let kit = Patch(tempo: 120, instruments: [DrumInstrument(id: "long", layers: [DrumLayer(samples: [file])], voices: 1)],
                        patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        let whole = try render(kit, tails: false, frames: 120_000)
        let streamed = try render(kit, tails: true, frames: 120_000)
        #expect(streamed.engine.tailUnderrunCount == 0)
        #expect(whole.left.contains { $0 != 0 })
        #expect(whole.left == streamed.left && whole.right == streamed.right)
        // 15 hits cut after 6,000 frames and the last played on to 120,000: at most two blocks
        // at four times the rate and a 4,096-frame chunk beyond each.
        let read = streamed.loaded.tailFramesRead
        #expect(read > 15 * (6_000 - 1_024) && read < 15 * (6_000 + 2 * 256 * 4 + 4_096) + 96_000, "frames read: \(read)")
    }

    /// Samples that loop forever on their loop points (SFZ's loop_continuous), streamed: the
    /// filler writes each loop over and over after the first pass, through rings shorter than
    /// the loops (the sound made whole for each note) and longer (a file read as it is, each
    /// repeat copied from the one before), and every voice plays the same bits as the sample
    /// looping in memory: at its own pitch and tuned by its voices (interpolating across each
    /// repeat's join), loops starting in the head and in the tail, files at 44.1 kHz
    /// (converted), mono and stereo.
    @Test func loopsThatRepeatForeverStreamAndRenderAsInMemory() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // (frames, loop in the file's frames, stereo, rate, offset), through 8,192-frame rings:
        // a loop within half of one repeats from the ring, a longer one from a copy kept for the
        // voice; a file not played as it is (from an offset) is made whole for each note.
        let files: [(Int, ClosedRange<Int>, Bool, Int, Int)] = [
            (20_000, 6_000...14_999, true, 48_000, 0),   // longer than the ring, in the tail
            (9_000, 300...5_999, true, 44_100, 0),       // from inside the head, converted
            (14_000, 8_000...13_999, false, 48_000, 0),  // mono, to the file's end
            (16_000, 7_000...8_499, true, 44_100, 0),    // within half a ring, converted
            (10_000, 500...4_499, true, 48_000, 0),      // within half a ring, from inside the head
            (12_000, 10_800...11_999, false, 48_000, 0), // within half a ring, mono, to the file's end
            (15_000, 6_000...11_999, true, 44_100, 100), // made whole for each note
        ]
        var instruments: [DrumInstrument] = []
        for (k, (frames, loop, stereo, rate, offset)) in files.enumerated() {
            let base = try noise("l\(k).wav", frames: frames, stereo: stereo, rate: rate, in: dir)
            let sample = SampleFile(path: base.path, resolvedPath: base.resolvedPath, offset: offset, loop: loop)
            // Many pitches: tuned by the voices' rate (varispeed), held once.
            for (t, tune) in [0.0, 3, -5, 7, 1, -2, 12, -12].enumerated() {
                instruments.append(DrumInstrument(id: "l\(k)t\(t)", layers: [DrumLayer(samples: [sample])], tune: tune, loops: -1,
                                                  midiNote: 20 + 8 * k + t, voices: 2))
            }
        }
        // Each instrument twice, a new note taking over the older voice (its declick tail
        // fading out on the same ring as the new note plays its head).
        let steps = 32
        let tracks = instruments.indices.map { i in
            DrumTrack(instrument: i, velocities: (0..<steps).map { s in s == i % steps || s == (i * 5 + 7) % steps ? 100 : 0 })
        }
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 2, tracks: tracks)
        let kit = Patch(tempo: 120, instruments: instruments, patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        let frames = 48_000 * 4
        let whole = try render(kit, tails: false, frames: frames)
        let streamed = try render(kit, tails: true, voices: 128, ring: 8_192, frames: frames)
        #expect(!whole.loaded.streamsTails && streamed.loaded.streamsTails)
        #expect(streamed.engine.tailBufferShape.capacity == 8_192)
        #expect(streamed.engine.tailUnderrunCount == 0 && streamed.engine.refusedTailCount == 0)
        // The loops went round many times: far more frames read than the files hold.
        #expect(streamed.loaded.tailFramesRead > 10 * files.reduce(0) { $0 + $1.0 })
        // Still sounding at the end, as the loops in memory.
        #expect(whole.left[(frames - 1_000)...].contains { $0 != 0 })
        for (a, b) in [(whole.left, streamed.left), (whole.right, streamed.right)] {
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "differs from frame \(first ?? -1)")
        }
    }

    /// Two instruments on one file, one playing it once and one looping it: only the first
    /// streams its tail, the looping one keeps the whole sound (it wraps to its start).
    @Test func aLoopingInstrumentOnAStreamedFileKeepsItWhole() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try noise("a.wav", frames: 5_000, stereo: true, in: dir)
        let once = DrumInstrument(id: "once", layers: [DrumLayer(samples: [file])], voices: 2)
        let looped = DrumInstrument(id: "looped", layers: [DrumLayer(samples: [file])], loops: 2, voices: 2)
        let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 1,
                                  tracks: [DrumTrack(instrument: 0, velocities: [100] + Array(repeating: 0, count: 15)),
                                           DrumTrack(instrument: 1, velocities: [0, 0, 100] + Array(repeating: 0, count: 13))])
        let kit = Patch(tempo: 120, instruments: [once, looped], patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        let whole = try render(kit, tails: false, frames: 36_000)
        let streamed = try render(kit, tails: true, frames: 36_000)
        #expect(streamed.engine.tailUnderrunCount == 0)
        #expect(whole.left == streamed.left && whole.right == streamed.right)
    }

    /// A note refused for want of a tail buffer changes nothing: the voice playing on (its
    /// envelope, its level) sounds as if the note had not come.
    @Test func aRefusedNoteLeavesTheSoundingVoiceAsItWas() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = try noise("a.wav", frames: 20_000, stereo: true, in: dir)
        var instrument = DrumInstrument(id: "a", layers: [DrumLayer(samples: [file])], voices: 2)
        instrument.envelope = Envelope(attack: 0.1, release: 0.01)
        func kit(_ second: Int) -> Patch {
            let pattern = DrumPattern(name: "p", beatsPerBar: 4, stepsPerBeat: 4, bars: 1,
                                      tracks: [DrumTrack(instrument: 0, velocities: [100, 0, second] + Array(repeating: 0, count: 13))])
            return Patch(tempo: 120, instruments: [instrument], patterns: [pattern], song: nil, file: dir.appendingPathComponent("kit.json").path)
        }
        let alone = try render(kit(0), tails: false, frames: 24_000)
        let refused = try render(kit(100), tails: true, voices: 1, frames: 24_000)
        #expect(refused.engine.refusedTailCount == 1)
        #expect(alone.left == refused.left && alone.right == refused.right)
    }

    /// A pool of two buffers and three voices at once: the third note is refused, counted.
    @Test func aNoteBeyondTheStreamingVoicesIsRefusedAndCounted() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let kit = try library(instruments: 3, layers: 1, frames: 9_000, in: dir)
        let out = try render(kit, tails: true, voices: 2, frames: 12_000)
        #expect(out.engine.refusedTailCount >= 1)
        #expect(out.engine.tailUnderrunCount == 0)
    }
}
