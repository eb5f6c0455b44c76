import Foundation
import SoundFiles
import Testing

struct WAVFileWriterTests {
    @Test func streamsStereoBlocksInOrder() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("rec.wav")
        let left = Signal.noise(frames: 1_000, seed: 15), right = Signal.noise(frames: 1_000, seed: 16)
        let writer = try WAVFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
        for start in stride(from: 0, to: 1_000, by: 256) {
            let n = min(256, 1_000 - start)
            try left.withUnsafeBufferPointer { l in
                try right.withUnsafeBufferPointer { r in
                    try writer.write(left: l.baseAddress! + start, right: r.baseAddress! + start, frameCount: n)
                }
            }
        }
        #expect(writer.frameCount == 1_000)
        writer.close()
        let sound = try SoundFileLoader().load(path: path)
        #expect(sound.samples(channel: 0) == left)
        #expect(sound.samples(channel: 1) == right)
    }

    @Test func stereoWithoutARightChannelRepeatsTheLeft() throws {
        let dir = try TemporaryDirectory()
        let left = Signal.noise(frames: 10, seed: 17)
        let writer = try WAVFileWriter(path: dir.file("dup.wav"), sampleRate: 48_000, channelCount: 2)
        try left.withUnsafeBufferPointer { try writer.write(left: $0.baseAddress!, right: nil, frameCount: 10) }
        writer.close()
        let sound = try SoundFileLoader().load(path: dir.file("dup.wav"))
        #expect(sound.samples(channel: 1) == left)
    }

    @Test func monoWritesTheLeftChannelOnly() throws {
        let dir = try TemporaryDirectory()
        let left = Signal.noise(frames: 10, seed: 18), right = Signal.noise(frames: 10, seed: 19)
        let writer = try WAVFileWriter(path: dir.file("m.wav"), sampleRate: 48_000, channelCount: 1)
        try left.withUnsafeBufferPointer { l in
            try right.withUnsafeBufferPointer { r in try writer.write(left: l.baseAddress!, right: r.baseAddress!, frameCount: 10) }
        }
        writer.close()
        let sound = try SoundFileLoader().load(path: dir.file("m.wav"))
        #expect(sound.channelCount == 1)
        #expect(sound.samples(channel: 0) == left)
    }

    @Test func closeIsIdempotentAndLaterWritesFail() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("c.wav")
        let writer = try WAVFileWriter(path: path, sampleRate: 48_000, channelCount: 1)
        writer.close()
        writer.close()
        var sample: Float = 0
        #expect(throws: SoundFileError(file: path, reason: .writeFailed("the writer is closed"))) {
            try writer.write(left: &sample, right: nil, frameCount: 1)
        }
    }

    @Test func integerFormatsClipInsteadOfWrapping() throws {
        let dir = try TemporaryDirectory()
        try WAVFileWriter.write(path: dir.file("loud.wav"), channels: [[1.5, -1.5]], sampleRate: 48_000, format: .pcm16)
        let samples = try SoundFileLoader().load(path: dir.file("loud.wav")).samples(channel: 0)
        #expect(samples[0] > 0.99)
        #expect(samples[1] < -0.99)
    }

    @Test func aMissingDirectoryIsAWriteFailureNamingThePath() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("no/such/dir/out.wav")
        #expect(throws: SoundFileError(file: path, reason: .writeFailed("the directory \(dir.path)/no/such/dir does not exist"))) {
            _ = try WAVFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
        }
        do {
            _ = try WAVFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
        } catch {
            #expect(error.description.hasPrefix("\(path): cannot write the file ("))
        }
    }

    @Test func anUnwritableFormatIsAWriteFailure() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("f.flac")
        #expect(throws: SoundFileError(file: path, reason: .writeFailed(
            "libsndfile cannot write FLAC with 32-bit float samples and 2 channels"))) {
            _ = try WAVFileWriter(path: path, sampleRate: 48_000, channelCount: 2, format: .float32, container: .flac)
        }
    }

    @Test func channelsOfDifferentLengthsAreRejected() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("x.wav")
        #expect(throws: SoundFileError(file: path, reason: .writeFailed("channels have different lengths"))) {
            try WAVFileWriter.write(path: path, channels: [[0, 0], [0]], sampleRate: 48_000)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
