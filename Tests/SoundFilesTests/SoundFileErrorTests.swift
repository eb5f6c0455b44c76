import Foundation
import SoundFiles
import Testing

struct SoundFileErrorTests {
    /// The `SoundFileError` `body` throws; any other outcome is recorded as a failure.
    private func loadError(_ body: () throws -> Void) -> SoundFileError? {
        do {
            try body()
            Issue.record("expected an error")
        } catch let error as SoundFileError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    @Test func missingFileSaysNoSuchFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("kick.wav")
        let error = loadError { _ = try SoundFileLoader().load(path: path) }
        #expect(error?.reason == .missing)
        #expect(error?.description == "\(path): no such file")
    }

    @Test func zeroFrameFileIsEmpty() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("empty.wav")
        try WAVFileWriter.write(path: path, channels: [[]], sampleRate: 48_000)
        let error = loadError { _ = try SoundFileLoader().load(path: path) }
        #expect(error?.reason == .empty)
        #expect(error?.description == "\(path): the file has zero frames")
    }

    @Test func randomBytesAreNotAudio() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("noise.bin")
        try dir.write(Signal.bytes(count: 4_096, seed: 7), to: "noise.bin")
        let error = loadError { _ = try SoundFileLoader().load(path: path) }
        guard case .notAudio(let message)? = error?.reason else {
            Issue.record("expected notAudio, got \(String(describing: error))")
            return
        }
        #expect(!message.isEmpty)
        #expect(error?.description == "\(path): not an audio file libsndfile can read (\(message))")
    }

    @Test func randomBytesInMemoryAreNotAudioUnderTheirName() {
        let error = loadError {
            _ = try SoundFileLoader().load(bytes: Signal.bytes(count: 4_096, seed: 8), name: "noise.bin")
        }
        guard case .notAudio? = error?.reason else {
            Issue.record("expected notAudio, got \(String(describing: error))")
            return
        }
        #expect(error?.description.hasPrefix("noise.bin: not an audio file libsndfile can read (") == true)
    }

    @Test func truncatedHeaderIsNotAudio() throws {
        let dir = try TemporaryDirectory()
        try WAVFileWriter.write(path: dir.file("whole.wav"), channels: [Signal.noise(frames: 100, seed: 9)],
                                sampleRate: 48_000, format: .pcm16)
        let head = Array(try dir.bytes(of: "whole.wav").prefix(20))
        try dir.write(head, to: "cut.wav")
        let path = dir.file("cut.wav")

        let fromPath = loadError { _ = try SoundFileLoader().load(path: path) }
        guard case .notAudio? = fromPath?.reason else {
            Issue.record("expected notAudio, got \(String(describing: fromPath))")
            return
        }
        #expect(fromPath?.description.hasPrefix("\(path): not an audio file") == true)

        let fromBytes = loadError { _ = try SoundFileLoader().load(bytes: head, name: "cut.wav") }
        #expect(fromBytes?.reason == fromPath?.reason)
        #expect(fromBytes?.description.hasPrefix("cut.wav: ") == true)
    }

    @Test func threeChannelsAreRejectedNotDownmixed() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("surround.wav")
        let channel = Signal.noise(frames: 64, seed: 10)
        try WAVFileWriter.write(path: path, channels: [channel, channel, channel], sampleRate: 48_000)
        let error = loadError { _ = try SoundFileLoader().load(path: path) }
        #expect(error?.reason == .unsupportedChannelCount(3))
        #expect(error?.description == "\(path): unsupported channel count 3 (expected 1 or 2)")
    }

    @Test func aDirectoryIsNotReadable() throws {
        let dir = try TemporaryDirectory()
        let error = loadError { _ = try SoundFileLoader().load(path: dir.path) }
        #expect(error?.reason == .notReadable("it is a directory"))
        #expect(error?.description.hasPrefix("\(dir.path): cannot read the file") == true)
    }

    @Test func emptyByteArrayIsNotAudio() {
        let error = loadError { _ = try SoundFileLoader().load(bytes: [], name: "nothing.wav") }
        #expect(error?.reason == .notAudio("no bytes"))
        #expect(error?.description.hasPrefix("nothing.wav: ") == true)
    }

    @Test func anImpossibleConversionNamesTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("a.wav")
        try WAVFileWriter.write(path: path, channels: [[0.1, 0.2]], sampleRate: 48_000)
        let error = loadError { _ = try SoundFileLoader(targetSampleRate: 100).load(path: path) }
        guard case .resampleFailed? = error?.reason else {
            Issue.record("expected resampleFailed, got \(String(describing: error))")
            return
        }
        #expect(error?.description.hasPrefix("\(path): resampling failed (") == true)
    }
}
