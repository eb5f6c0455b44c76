import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import SoundFiles
import Testing

/// A 16-bit mono 48 kHz file of silence with a one-sample marker every second: second k holds
/// `markerValue(k)` on its first frame. Written a second at a time, never held in memory.
private func writeMarkerFile(_ path: String, seconds: Int) throws {
    let writer = try WAVFileWriter(path: path, sampleRate: 48000, channelCount: 1, format: .pcm16)
    let second = UnsafeMutablePointer<Float>.allocate(capacity: 48000)
    defer { second.deallocate() }
    second.initialize(repeating: 0, count: 48000)
    for k in 0..<seconds {
        second[0] = markerValue(k)
        try writer.write(interleaved: second, frameCount: 48000)
    }
    writer.close()
}

/// Exact in 16 bits: (k + 1) × 8 / 32768.
private func markerValue(_ k: Int) -> Float { Float((k + 1) * 8) / 32768 }

/// Every non-silent captured sample of `channel` as (device frame, marker index).
private func markers(_ capture: Capture, channel: Int = 0) -> [(frame: Int64, second: Int)] {
    capture.channels[channel].enumerated().compactMap { i, x in
        x == 0 ? nil : (capture.firstFrame + Int64(i), Int((x * 32768 / 8).rounded()) - 1)
    }
}

/// A mono float file whose frame i holds (i + 1) / 1000000: every captured sample names its frame.
private func writeRampFile(_ path: String, frames: Int) throws {
    try WAVFileWriter.write(path: path, channels: [(0..<frames).map { Float($0 + 1) / 1_000_000 }], sampleRate: 48000)
}

private func rampIndex(_ x: Float) -> Int { Int((x * 1_000_000).rounded()) - 1 }

/// Resident memory of this process, from /proc/self/status.
private func residentBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
}

final class StreamRecorder: AudioPlayerDelegate, @unchecked Sendable {
    let lock = NSLock()
    var finishes: [Bool] = []
    var missingFrames = 0
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { lock.withLock { finishes.append(flag) } }
    func audioPlayerStreamDidUnderrun(_ player: AudioPlayer, missingFrames: Int) { lock.withLock { self.missingFrames += missingFrames } }
}

final class SlowSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var on = false
    var isOn: Bool {
        get { lock.withLock { on } }
        set { lock.withLock { on = newValue } }
    }
}

/// Streamed AudioPlayers on a dummy server, captured by an external client.
@Suite(.serialized) struct StreamingPlayerLiveTests {
    @Test func aTwentyMinuteFileStreamsInBoundedMemoryWithMarkersOnTheirFramesAtStartSeekAndLoop() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("twenty-minutes.wav").path
        try writeMarkerFile(path, seconds: 1200)
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "stream")
        defer { s.close() }
        let before = residentBytes()

        let player = try AudioPlayer(streamingContentsOf: path, session: s)
        #expect(player.isStreaming && player.sound == nil)
        #expect(player.duration == 1200)
        player.pan = -1
        player.numberOfLoops = 1
        #expect(player.prepareToPlay())
        let capture = try CaptureProcess(server: server, ports: ["stream:out_L"], frames: 48000 * 7)
        let origin = s.deviceCurrentFrame + 12_000
        player.play(atFrame: origin)
        // Seek to 600 s + 12345 frames, 1.5 s in; then to 2 s (and 7 frames) before the end, 3 s in.
        let firstSeek = player.seek(toFrame: 600 * 48000 + 12_345, at: origin + 72_000)
        let secondSeek = player.seek(toFrame: 1200 * 48000 - 96_007, at: origin + 144_000)
        #expect(firstSeek == origin + 72_000 && secondSeek == origin + 144_000)
        let recording = try capture.finish()
        let grown = residentBytes() - before

        let found = markers(recording).map { "\($0.second)@\($0.frame - origin)" }
        #expect(found == [
            "0@0", "1@48000",                    // the start, on its frame
            "601@\(72_000 + 48_000 - 12_345)",   // after the first seek
            "1198@\(144_000 + 7)",               // after the second: 7 frames in,
            "1199@\(144_000 + 48_007)",          // the last marker of the file,
            "0@\(144_000 + 96_007)",             // the wrap to the start, on its exact frame,
            "1@\(144_000 + 96_007 + 48_000)",    // and on into the second pass
        ])
        #expect(player.underrunFrameCount == 0)
        #expect(grown < 64 << 20, "resident memory grew by \(grown >> 20) MB")
        #expect(player.currentTime < 10)  // in the second pass
    }

    @Test func twoStreamedPlayersStartedOnOneFrameStayAlignedAndPauseResumesInPlace() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ramp.wav").path
        try writeRampFile(path, frames: 4 * 48000)
        let shortPath = directory.appendingPathComponent("short.wav").path
        try writeRampFile(shortPath, frames: 4800)
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let pair = try session(on: server, name: "pair")
        let pauser = try session(on: server, name: "pauser")
        defer { pair.close(); pauser.close() }

        // Small rings, so that the disk thread refills them many times during the test.
        let a = try AudioPlayer(contentsOf: path, session: pair, source: .automatic(threshold: 3, preloadSeconds: 0.25))
        let b = try AudioPlayer(streamingContentsOf: path, session: pair, preloadSeconds: 0.25)
        #expect(a.isStreaming && b.isStreaming)
        #expect(try !AudioPlayer(contentsOf: shortPath, session: pair, source: .automatic(threshold: 3)).isStreaming)
        let recorder = StreamRecorder()
        a.delegate = recorder
        b.delegate = recorder
        a.pan = -1
        b.pan = 1
        let c = try AudioPlayer(streamingContentsOf: path, session: pauser, preloadSeconds: 0.25)
        c.pan = -1
        a.prepareToPlay(); b.prepareToPlay()
        let capture = try CaptureProcess(server: server, ports: ["pair:out_L", "pair:out_R", "pauser:out_L"], frames: 48000 * 6)
        let origin = pair.deviceCurrentFrame + 12_000
        a.play(atFrame: origin)
        b.play(atFrame: origin)
        c.play(atFrame: origin)
        #expect(waitUntil(timeout: 3) { pauser.engine.renderedFrame > origin + 30_000 })
        c.pause()
        let pausedAt = c.currentTime
        #expect(waitUntil(timeout: 3) { pauser.engine.renderedFrame > origin + 60_000 })
        #expect(c.currentTime == pausedAt)
        c.play()
        #expect(waitUntil(timeout: 3) { pauser.engine.renderedFrame > origin + 90_000 })
        c.stop()
        let stoppedAt = c.currentTime
        #expect(stoppedAt > pausedAt)
        c.play()
        #expect(waitUntil(timeout: 6) { recorder.lock.withLock { recorder.finishes.count } == 2 })
        let recording = try capture.finish()

        // The whole file, from the start frame on, in both channels: sample-aligned throughout.
        let start = Int(origin - recording.firstFrame)
        let left = Array(recording.channels[0][start..<(start + 4 * 48000)])
        #expect(left.enumerated().allSatisfy { rampIndex($1) == $0 })
        #expect(firstDifference(recording.channels[0], recording.channels[1]) == nil)
        #expect(recorder.lock.withLock { recorder.finishes } == [true, true])
        #expect(a.underrunFrameCount == 0 && b.underrunFrameCount == 0)
        #expect(a.currentTime == 0 && !a.isPlaying)
        // Pause and stop: the file resumes where it left off, never skipping or repeating a frame.
        let track = recording.channels[2].filter { $0 != 0 }.map(rampIndex)
        #expect(track.count > 100_000)
        #expect(track.first == 0 && zip(track, track.dropFirst()).allSatisfy { $1 == $0 + 1 })
    }

    @Test func aSlowDiskUnderrunsIsCountedAndReportedAndPlaybackStaysInTime() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("markers.wav").path
        try writeMarkerFile(path, seconds: 5)
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "slow")
        defer { s.close() }
        var options = StreamReaderOptions()
        options.chunkFrames = 2048
        let slow = SlowSwitch()
        // Each 2048-frame read (43 ms of sound) takes 100 ms once slowed: the disk falls behind.
        options.readDelay = { if slow.isOn { usleep(100_000) } }
        let player = try AudioPlayer(streamingContentsOf: path, session: s, preloadSeconds: 0.5, options: options)
        let recorder = StreamRecorder()
        player.delegate = recorder
        player.pan = -1
        #expect(player.prepareToPlay())
        slow.isOn = true
        let capture = try CaptureProcess(server: server, ports: ["slow:out_L"], frames: 48000 * 6)
        let origin = s.deviceCurrentFrame + 12_000
        player.play(atFrame: origin)
        // The file ends on time, underruns or not.
        #expect(waitUntil(timeout: 8) { recorder.lock.withLock { recorder.finishes } == [true] })
        let recording = try capture.finish()
        #expect(s.engine.renderedFrame > origin + 5 * 48000)

        #expect(player.underrunFrameCount > 48000)
        #expect(waitUntil(timeout: 1) { recorder.lock.withLock { recorder.missingFrames } == player.underrunFrameCount })
        // Whatever markers made it out are on their own frames; the first (preloaded) always does.
        let found = markers(recording)
        #expect(found.first.map { $0.second == 0 && $0.frame == origin } == true)
        #expect(found.allSatisfy { $0.frame == origin + Int64($0.second) * 48000 })
    }
}
