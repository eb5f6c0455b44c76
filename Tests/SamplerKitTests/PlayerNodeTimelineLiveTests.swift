import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import SoundFiles
import Testing

/// A PlayerNode on the device timeline, live on a dummy server and captured by the independent
/// witness: the cases where it used to be placed or cut by prediction (issue 34).
@Suite(.serialized) struct PlayerNodeTimelineLiveTests {
    /// A stereo sound whose frame i is `sign × (i + 1) / 100_000` on both channels (the node's
    /// centre pan leaves a stereo sound at unity).
    func marker(_ frames: Int, sign: Float = 1) throws -> Sound {
        let samples = (0..<frames).map { sign * Float($0 + 1) / 100_000 }
        return try Sound(channels: [samples, samples], sampleRate: 48000)
    }

    /// A node that ran dry and sat idle for a second gets a buffer with no time: it plays at once
    /// and whole (it used to be a late start placed on the end of the last buffer, and silent).
    @Test func aNilTimeBufferOnANodeIdleForASecondPlaysWhole() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "dry")
        defer { s.close() }
        let node = try PlayerNode(session: s)
        let capture = try CaptureProcess(server: server, ports: ["dry:out_L"], frames: 48000 * 3)
        try node.scheduleBuffer(marker(1000))
        let start = s.earliestStartFrame + 2400
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        #expect(waitUntil(timeout: 10) { s.deviceCurrentFrame > start + 1000 + 48000 })
        let scheduled = s.deviceCurrentFrame
        try node.scheduleBuffer(marker(2000, sign: -1))
        #expect(node.isPlaying)
        #expect(waitUntil(timeout: 10) { s.deviceCurrentFrame > scheduled + 9600 })
        let recording = try capture.finish()
        let first = (0..<1000).map { recording.sample(channel: 0, at: start + Frame($0)) }
        #expect(first == (0..<1000).map { Float($0 + 1) / 100_000 })
        let onset = (scheduled..<(scheduled + 9600)).first { recording.sample(channel: 0, at: $0) != 0 }
        #expect(onset.map { $0 < scheduled + 4800 } == true, "the second buffer began at \(onset.map(String.init) ?? "no frame") (scheduled at \(scheduled))")
        if let onset {
            let second = (0..<2000).map { recording.sample(channel: 0, at: onset + Frame($0)) }
            #expect(second == (0..<2000).map { -Float($0 + 1) / 100_000 }, "not the whole buffer, in order")
            #expect(recording.sample(channel: 0, at: onset + 2000) == 0)
        }
    }

    /// A file segment paused while it plays, then resumed: every frame of it heard once, in
    /// order, and nothing of the file after its end (its end-stop used to be lost to the pause).
    @Test func aSegmentPausedWhileItPlaysIsHeardOnceAndEnds() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "segpause")
        defer { s.close() }
        let dir = try temporaryDirectory()
        let url = dir.appendingPathComponent("marker.wav")
        let samples = (0..<48000).map { Float($0 + 1) / 100_000 }
        try WAVFileWriter.write(path: url.path, channels: [samples, samples], sampleRate: 48000)
        let node = try PlayerNode(session: s)
        let capture = try CaptureProcess(server: server, ports: ["segpause:out_L"], frames: 48000 * 3)
        try node.scheduleSegment(AudioFile(forReading: url), startingFrame: 1000, frameCount: 9600)
        let start = s.earliestStartFrame + 2400
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        #expect(waitUntil(timeout: 10) { s.deviceCurrentFrame > start + 2400 })
        node.pause()
        let paused = s.deviceCurrentFrame
        #expect(waitUntil(timeout: 10) { s.deviceCurrentFrame > paused + 9600 })
        node.play()
        let resumed = s.deviceCurrentFrame
        #expect(waitUntil(timeout: 10) { s.deviceCurrentFrame > resumed + 9600 + 24000 })
        let recording = try capture.finish()
        let from = recording.firstFrame, count = recording.channels[0].count
        #expect(recording.lostFrames == 0)
        #expect(from <= start)
        let heard = (0..<count).map { recording.sample(channel: 0, at: from + Frame($0)) }.filter { $0 != 0 }
        let same = heard == Array(samples[1000..<10_600])  // outside #expect, which would print both arrays
        #expect(same, "\(heard.count) frames heard, from \(heard.first ?? 0) to \(heard.last ?? 0)")
    }
}
