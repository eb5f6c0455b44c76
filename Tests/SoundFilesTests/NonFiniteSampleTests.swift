import Foundation
import Locking
import SamplerCore
import Testing
@testable import SoundFiles

/// A float file holding NaN and infinite samples is repaired at load (with a warning naming the
/// file and the count), whether decoded into memory or streamed, and nothing non-finite ever
/// leaves the engine.
@Suite struct NonFiniteSampleTests {
    /// Writes the poisoned file into a fresh directory, passes its path to `body`, then removes it.
    func withPoisonedFile(_ body: (String) throws -> Void) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nonfinite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var samples = (0..<4800).map { Float($0 % 100) / 200 }
        for i in stride(from: 10, to: 4800, by: 150) { samples[i] = i % 300 == 10 ? .nan : (i % 600 == 160 ? .infinity : -.infinity) }
        let path = dir.appendingPathComponent("poison.wav").path
        defer { try? FileManager.default.removeItem(at: dir) }
        try WAVFileWriter.write(path: path, channels: [samples, samples], sampleRate: 48000)
        try body(path)
    }

    @Test func nonFiniteSamplesAreReplacedBySilenceWithAWarning() throws {
        try withPoisonedFile { path in
            let warnings = Locked<[String]>([])
            var loader = SoundFileLoader(targetSampleRate: 44100)
            loader.warn = { file, message in warnings.withLock { $0.append("\(file): \(message)") } }
            let sound = try loader.load(path: path)
            #expect(sound.samples(channel: 0).allSatisfy(\.isFinite) && sound.samples(channel: 1).allSatisfy(\.isFinite))
            #expect(warnings.withLock { $0 } == ["\(path): 64 non-finite samples (NaN or infinite) replaced by silence"])
        }
    }

    @Test func aStreamedFileReadsNonFiniteSamplesAsSilence() throws {
        try withPoisonedFile { path in
            let file = try StreamFile(path: path)
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4800 * 2)
            defer { buffer.deallocate() }
            #expect(file.read(from: 0, count: 4800, into: buffer) == 4800)
            #expect((0..<9600).allSatisfy { buffer[$0].isFinite })
            #expect(file.nonFiniteSampleCount == 64)
        }
    }

    @Test func theEngineNeverWritesANonFiniteSample() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[1, .nan, .infinity, 0.5]], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0))
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 64), r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { l.deallocate(); r.deallocate() }
        engine.render(frameCount: 64, periodStart: 0, left: l, right: r)
        #expect((0..<64).allSatisfy { l[$0].isFinite && r[$0].isFinite })
        #expect(engine.nonFiniteOutputCount == 4)
    }

    /// Finite samples whose sum overflows: the period's bound (peak × gain, summed) does not rule
    /// the overflow out, so the samples are checked and the infinities replaced.
    @Test func finiteSamplesThatSumToInfinityAreRepairedToo() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[3e38, 3e38, 1]], sampleRate: 48000))
        for p in 0..<3 { engine.send(.start(player: p, sound: id, at: 0, pan: PanGains(pan: -1))) }
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 64), r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { l.deallocate(); r.deallocate() }
        engine.render(frameCount: 64, periodStart: 0, left: l, right: r)
        #expect((0..<64).allSatisfy { l[$0].isFinite && r[$0].isFinite })
        #expect(engine.nonFiniteOutputCount == 2)
    }

    /// Samples so large that interpolating between two of them overflows, at a small gain: the
    /// sound's peak is taken as unbounded, so the period is checked and repaired.
    @Test func varispeedBetweenHugeSamplesNeverReachesTheOutput() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[3e38, -3e38, 3e38, -3e38]], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0, loops: -1, gain: Gain(linear: 0.01), rate: 1.5))
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 64), r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { l.deallocate(); r.deallocate() }
        engine.render(frameCount: 64, periodStart: 0, left: l, right: r)
        #expect((0..<64).allSatisfy { l[$0].isFinite && r[$0].isFinite })
        #expect(engine.nonFiniteOutputCount > 0)
    }
    /// A ring written with non-finite samples, and rings whose finite samples sum past the
    /// largest float: each ring's peak (kept by its writer) lets the render see the risk, so the
    /// output is checked and repaired; a ring of ordinary samples plays them as they are.
    @Test func streamsWithNonFiniteOrHugeSamplesNeverReachTheOutput() throws {
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 64), r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { l.deallocate(); r.deallocate() }
        func play(_ samples: [Float], rings: Int) throws -> Engine {
            let engine = Engine()
            for p in 0..<rings {
                // More than the block written (an end could still be marked on the write
                // index): the block is mixed on the short path (`mixPlainStream`).
                let ring = StreamRing(capacity: 128, channelCount: 1, sampleRate: 48000)
                let full = samples + [Float](repeating: 0, count: 65 - samples.count)
                ring.write(left: full, right: nil, count: 65)
                engine.send(.start(player: p, sound: try engine.register(stream: ring), at: 0, pan: PanGains(pan: -1)))
            }
            engine.render(frameCount: 64, periodStart: 0, left: l, right: r)
            return engine
        }
        let poisoned = try play([1, .nan, .infinity, -.infinity, 0.5], rings: 1)
        #expect((0..<64).allSatisfy { l[$0].isFinite && r[$0].isFinite })
        #expect(poisoned.nonFiniteOutputCount == 6)  // three samples, both sides (× a pan factor of 0 is NaN too)
        let huge = try play([3e38, 3e38, 1], rings: 3)
        #expect((0..<64).allSatisfy { l[$0].isFinite && r[$0].isFinite })
        #expect(huge.nonFiniteOutputCount == 2)
        let ordinary = try play([0.25, -0.5, 1], rings: 2)
        #expect(Array(UnsafeBufferPointer(start: l, count: 4)) == [0.5, -1, 2, 0])
        #expect(ordinary.nonFiniteOutputCount == 0)
    }
}
