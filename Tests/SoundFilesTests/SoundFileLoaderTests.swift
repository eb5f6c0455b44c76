import Foundation
import SamplerCore
import SoundFiles
import Testing

struct SoundFileLoaderTests {
    struct Kind: CustomTestStringConvertible, Sendable {
        let container: SoundFileFormat
        let samples: WAVSampleFormat
        let ext: String
        /// Exact for float, one quantisation step (and libsndfile's 0x7FFF/0x8000 asymmetry) for integers.
        var tolerance: Float { samples == .float32 ? 0 : 1e-4 }
        var testDescription: String { "\(ext) \(samples)" }
    }

    static let kinds: [Kind] = [
        Kind(container: .wav, samples: .float32, ext: "wav"),
        Kind(container: .wav, samples: .pcm16, ext: "wav"),
        Kind(container: .wav, samples: .pcm24, ext: "wav"),
        Kind(container: .flac, samples: .pcm16, ext: "flac"),
        Kind(container: .flac, samples: .pcm24, ext: "flac"),
        Kind(container: .aiff, samples: .pcm16, ext: "aiff"),
        Kind(container: .aiff, samples: .pcm24, ext: "aiff"),
        Kind(container: .aiff, samples: .float32, ext: "aiff"),
    ]

    private func expect(_ sound: Sound, matches channels: [[Float]], rate: Double, within tolerance: Float) {
        #expect(sound.channelCount == channels.count)
        #expect(sound.frameCount == channels[0].count)
        #expect(sound.sampleRate == rate)
        for (c, channel) in channels.enumerated() {
            #expect(Signal.maxDifference(sound.samples(channel: c), channel) <= tolerance)
        }
    }

    @Test(arguments: kinds)
    func roundTripsFromAPath(_ kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("tone.\(kind.ext)")
        let channels = [Signal.noise(frames: 4_321, seed: 1), Signal.noise(frames: 4_321, seed: 2)]
        try WAVFileWriter.write(path: path, channels: channels, sampleRate: 44_100,
                                format: kind.samples, container: kind.container)
        let sound = try SoundFileLoader().load(path: path)
        expect(sound, matches: channels, rate: 44_100, within: kind.tolerance)
    }

    @Test(arguments: kinds)
    func roundTripsFromBytesInMemory(_ kind: Kind) throws {
        let dir = try TemporaryDirectory()
        let channels = [Signal.noise(frames: 3_000, seed: 3)]
        try WAVFileWriter.write(path: dir.file("x.\(kind.ext)"), channels: channels, sampleRate: 48_000,
                                format: kind.samples, container: kind.container)
        let bytes = try dir.bytes(of: "x.\(kind.ext)")
        let sound = try SoundFileLoader().load(bytes: bytes, name: "memory")
        expect(sound, matches: channels, rate: 48_000, within: kind.tolerance)
    }

    @Test func roundTripsFromData() throws {
        let dir = try TemporaryDirectory()
        let channels = [Signal.noise(frames: 1_000, seed: 4), Signal.noise(frames: 1_000, seed: 5)]
        try WAVFileWriter.write(path: dir.file("x.wav"), channels: channels, sampleRate: 22_050)
        let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("x.wav")))
        let sound = try SoundFileLoader().load(data: data, name: "x.wav", typeHint: "wav")
        expect(sound, matches: channels, rate: 22_050, within: 0)
    }

    @Test func decodesOggVorbisToItsFrameCount() throws {
        let dir = try TemporaryDirectory()
        let tone = Signal.sine(frequency: 440, rate: 48_000, frames: 24_000)
        try WAVFileWriter.write(path: dir.file("tone.ogg"), channels: [tone], sampleRate: 48_000, container: .ogg)
        let sound = try SoundFileLoader().load(bytes: dir.bytes(of: "tone.ogg"), name: "tone.ogg")
        #expect(sound.frameCount == 24_000)
        #expect(sound.channelCount == 1)
        // Lossy, but a plain sine survives closely.
        #expect(Signal.maxDifference(sound.samples(channel: 0), tone) < 0.05)
    }

    @Test func readsHeaderlessFloatWithTheRawHint() throws {
        let samples = Signal.noise(frames: 500, seed: 6)
        let bytes = samples.withUnsafeBytes { [UInt8]($0) }
        let sound = try SoundFileLoader(targetSampleRate: 44_100).load(bytes: bytes, name: "blob", typeHint: "raw")
        #expect(sound.sampleRate == 44_100)
        #expect(sound.samples(channel: 0) == samples)
    }

    @Test func stereoStaysStereoWithDistinctChannels() throws {
        let dir = try TemporaryDirectory()
        let left = Signal.sine(frequency: 300, rate: 44_100, frames: 44_100)
        let right = Signal.sine(frequency: 700, rate: 44_100, frames: 44_100, amplitude: 0.25)
        try WAVFileWriter.write(path: dir.file("st.wav"), channels: [left, right], sampleRate: 44_100)
        let sound = try SoundFileLoader(targetSampleRate: 48_000).load(path: dir.file("st.wav"))
        #expect(sound.channelCount == 2)
        #expect(sound.left != sound.right)
        let l = sound.samples(channel: 0), r = sound.samples(channel: 1)
        #expect(abs(Signal.zeroCrossings(l) - 600) <= 2)
        #expect(abs(Signal.zeroCrossings(r) - 1_400) <= 2)
        #expect(abs((r.max() ?? 0) - 0.25) < 0.01)
        #expect(abs((l.max() ?? 0) - 0.5) < 0.01)
    }

    @Test func convertsToTheTargetRateKeepingPitch() throws {
        let dir = try TemporaryDirectory()
        let tone = Signal.sine(frequency: 1_000, rate: 44_100, frames: 44_100)
        try WAVFileWriter.write(path: dir.file("sine.wav"), channels: [tone], sampleRate: 44_100)
        let sound = try SoundFileLoader(targetSampleRate: 48_000).load(path: dir.file("sine.wav"))
        #expect(sound.frameCount == 48_000)
        #expect(sound.sampleRate == 48_000)
        let samples = sound.samples(channel: 0)
        #expect(abs(Signal.zeroCrossings(samples) - 2_000) <= 2)
        // Away from the edges the conversion keeps the waveform: compare with an ideal 48 kHz sine.
        let ideal = Signal.sine(frequency: 1_000, rate: 48_000, frames: 48_000)
        #expect(Signal.maxDifference(Array(samples[1_000..<47_000]), Array(ideal[1_000..<47_000])) < 1e-3)
    }

    @Test func keepsTheFileRateWithoutATarget() throws {
        let dir = try TemporaryDirectory()
        try WAVFileWriter.write(path: dir.file("a.wav"), channels: [[0.1, 0.2, 0.3]], sampleRate: 32_000)
        let sound = try SoundFileLoader().load(path: dir.file("a.wav"))
        #expect(sound.sampleRate == 32_000)
        #expect(sound.samples(channel: 0) == [0.1, 0.2, 0.3])
    }

    /// A FLAC whose header gives no length (total samples 0, as streaming encoders write it:
    /// libsndfile then counts the largest number of frames) has no head cut at another rate
    /// (it loads whole), and no arithmetic traps on the count.
    @Test func aFileOfUnknownLengthHasNoHead() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("open.flac")
        let tone = Signal.noise(frames: 20_000, seed: 41)
        try WAVFileWriter.write(path: path, channels: [tone], sampleRate: 44_100, format: .pcm16, container: .flac)
        var bytes = try dir.bytes(of: "open.flac")
        // STREAMINFO (after "fLaC" and its 4-byte block header): total samples are the low 36
        // bits of bytes 18 ..< 26 of the file.
        #expect(Array(bytes[0..<4]) == Array("fLaC".utf8))
        bytes[21] &= 0xF0
        for k in 22..<26 { bytes[k] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let loader = SoundFileLoader(targetSampleRate: 48_000)
        #expect(try loader.loadHead(path: path, frames: 1_025) == nil)
        #expect(try loader.load(path: path).frameCount == 21_769)
    }

    /// A file that grew since the load: its tail read to the end says so (nil), at the file's
    /// rate and converted.
    @Test func aTailOfAFileThatGrewIsNotTaken() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("grown.wav")
        try WAVFileWriter.write(path: path, channels: [Signal.noise(frames: 48_000, seed: 7)], sampleRate: 48_000)
        let tail = UnsafeMutablePointer<Float>.allocate(capacity: 48_000)
        defer { tail.deallocate() }
        #expect(try SoundFileLoader(targetSampleRate: 48_000).readTail(path: path, frames: 40_000, from: 1_025, channelCount: 1,
                                                                       left: tail, right: nil) == nil)
        #expect(try SoundFileLoader(targetSampleRate: 44_100).readTail(path: path, frames: 36_750, from: 1_025, channelCount: 1,
                                                                       left: tail, right: nil) == nil)
        #expect(try SoundFileLoader(targetSampleRate: 48_000).readTail(path: path, frames: 48_000, from: 1_025, channelCount: 1,
                                                                       left: tail, right: nil) != nil)
    }

    /// A tail of a file converted down by eight (384 kHz to 48 kHz) whose length is not a
    /// multiple of eight is read: the same frames as the whole conversion, and its peak.
    @Test func aTailDownsampledEightTimesIsTheWholeConversions() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("fast.wav")
        try WAVFileWriter.write(path: path, channels: [Signal.noise(frames: 384_003, seed: 42)], sampleRate: 384_000)
        let loader = SoundFileLoader(targetSampleRate: 48_000)
        let whole = try loader.load(path: path)
        #expect(whole.frameCount == 48_000)
        let tail = UnsafeMutablePointer<Float>.allocate(capacity: 48_000)
        defer { tail.deallocate() }
        let peak = try loader.readTail(path: path, frames: 48_000, from: 1_025, channelCount: 1, left: tail, right: nil)
        #expect(peak == whole.peak)
        #expect(Array(UnsafeBufferPointer(start: tail, count: 48_000 - 1_025)) == Array(whole.samples(channel: 0)[1_025...]))
        let (head, frames, _) = try #require(try loader.loadHead(path: path, frames: 1_025))
        #expect(frames == 48_000 && head.samples(channel: 0) == Array(whole.samples(channel: 0)[0..<1_025]))
    }
}
