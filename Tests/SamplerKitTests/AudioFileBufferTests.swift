import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit
import SoundFiles
import Testing

/// AudioFile and AudioBuffer (AVAudioFile / AVAudioPCMBuffer's roles), and a program that imports
/// only SamplerKit.
@Suite(.serialized) struct AudioFileBufferTests {
    func writeRamp(frames: Int, channels: Int = 2) throws -> (URL, [[Float]]) {
        let dir = try temporaryDirectory()
        var data: [[Float]] = []
        for c in 0..<channels {
            let step = c + 3
            data.append((0..<frames).map { (i: Int) -> Float in Float((i * step) % 1000) / 2000 - 0.25 })
        }
        let url = dir.appendingPathComponent("ramp.wav")
        try WAVFileWriter.write(path: url.path, channels: data, sampleRate: 48000)
        return (url, data)
    }

    @Test func aFileReadsInChunksAndWholeIntoBuffers() throws {
        let (url, data) = try writeRamp(frames: 10_000)
        let file = try AudioFile(forReading: url)
        #expect(file.length == 10_000 && file.processingFormat.channelCount == 2 && file.processingFormat.sampleRate == 48000)
        let chunk = try AudioBuffer(sampleRate: 48000, channelCount: 2, frameCapacity: 4096)
        var left: [Float] = []
        while true {
            try file.read(into: chunk)
            if chunk.frameLength == 0 { break }
            left += chunk.channels[0][0..<chunk.frameLength]
        }
        #expect(left == data[0])
        let whole = try AudioBuffer(contentsOf: url)
        #expect(whole.frameLength == 10_000 && whole.channels == data)
    }

    @Test func badFilesAndFormatsAreErrorsNamingTheProblem() throws {
        #expect(throws: SamplerKitError.self) { try AudioFile(forReading: URL(fileURLWithPath: "/nonexistent.wav")) }
        let (url, _) = try writeRamp(frames: 100)
        let mono = try AudioBuffer(sampleRate: 48000, channelCount: 1, frameCapacity: 10)
        do {
            try AudioFile(forReading: url).read(into: mono)
            Issue.record("a mono buffer accepted a stereo file")
        } catch { #expect("\(error)".contains("channels")) }
        #expect(throws: SamplerKitError.self) { try AudioBuffer(channels: [[1, 2], [1]], sampleRate: 48000) }
        #expect(throws: SamplerKitError.self) { try AudioBuffer(sampleRate: .nan, channelCount: 1, frameCapacity: 1) }
    }

    @Test func aScheduledBufferAndFilePlayExactly() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "bufnode")
        defer { s.close() }
        let (url, data) = try writeRamp(frames: 3000)
        let node = try PlayerNode(session: s)
        let capture = try CaptureProcess(server: server, ports: ["bufnode:out_L"], frames: 48000)
        try node.scheduleBuffer(AudioBuffer(contentsOf: url))
        try node.scheduleFile(AudioFile(forReading: url))
        let start = s.earliestStartFrame + 4800
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        let recording = try capture.finish()
        let played = (0..<6000).map { recording.sample(channel: 0, at: start + Frame($0)) }
        // Stereo sources pan as a balance: the left channel at unity.
        #expect(played == data[0] + data[0])
    }

    /// scheduleFile streams from disk through a ring, scheduleSegment of a file streams that part only (stopped on its last frame even
    /// with nothing after it), scheduleSegment of a Sound reads its samples in place. Captured:
    /// every frame of each, back to back, then silence.
    @Test func streamedFilesAndSegmentsPlayExactly() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "segnode")
        defer { s.close() }
        let (url, data) = try writeRamp(frames: 48000 * 3)
        let sound = try Sound(channels: [(0..<5000).map { Float($0 + 1) / 100_000 }, (0..<5000).map { -Float($0 + 1) / 100_000 }],
                              sampleRate: 48000)
        let node = try PlayerNode(session: s)
        let done = Locked<[String]>([])
        let capture = try CaptureProcess(server: server, ports: ["segnode:out_L"], frames: 48000 * 6)
        try node.scheduleSegment(AudioFile(forReading: url), startingFrame: 1000, frameCount: 2000) { done.withLock { $0.append("segment") } }
        try node.scheduleFile(AudioFile(forReading: url)) { done.withLock { $0.append("file") } }
        try node.scheduleSegment(sound, startingFrame: 100, frameCount: 300) { done.withLock { $0.append("slice") } }
        try node.scheduleSegment(AudioFile(forReading: url), startingFrame: 7, frameCount: 500) { done.withLock { $0.append("tail") } }
        let start = s.earliestStartFrame + 4800
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        #expect(waitUntil(timeout: 8) { done.withLock { $0.count } == 4 })
        #expect(done.withLock { $0 } == ["segment", "file", "slice", "tail"])
        let recording = try capture.finish()
        let expected = Array(data[0][1000..<3000]) + data[0] + Array(sound.samples(channel: 0)[100..<400]) + Array(data[0][7..<507])
        let played = (0..<expected.count).map { recording.sample(channel: 0, at: start + Frame($0)) }
        let same = played == expected  // outside #expect, which would print both arrays
        #expect(same, "first difference at \((0..<expected.count).first { played[$0] != expected[$0] } ?? -1)")
        let after = (0..<4800).map { recording.sample(channel: 0, at: start + Frame(expected.count + $0)) }
        #expect(after.allSatisfy { $0 == 0 }, "the last segment played on past its end")
        #expect(recording.sample(channel: 0, at: start - 1) == 0)
    }

    @Test func aProgramImportingOnlySamplerKitRuns() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let (url, _) = try writeRamp(frames: 4800)
        let example = try BackgroundProgram(productsDirectory.appendingPathComponent("samplerkit-example"), [url.path, "1"], timeout: 30,
                                          environment: ["JACK_DEFAULT_SERVER": server.name])
        let result = example.finish()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("4800 frames, 2 channels"), "\(result.output)")
        #expect(result.output.contains("lost 0 periods"), "\(result.output)")
    }
}
