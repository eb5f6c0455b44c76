import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit
import SoundFiles
import Synchronization
import Testing

/// Renders a `ManualDevice` on a thread of its own (the render thread, as JACK's process thread
/// would be), a period about every 0.5 ms, keeping what it wrote by period when asked to.
///
/// `@unchecked Sendable` by contract: `periods` is a `Locked`; `running` an atomic; `thread` is
/// set in `init` and only read after.
final class ManualRenderer: @unchecked Sendable {
    let device: ManualDevice
    private let periods = Locked<[Frame: [Float]]>([:])
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    init(_ device: ManualDevice, keep: Bool) {
        self.device = device
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                let start = device.nextFrame
                let out = device.render(periods: 1)
                if keep { periods.withLock { $0[start] = out.left } }
                usleep(500)
            }
            finished.signal()
        }
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        finished.wait()
    }

    /// The left channel at device frame `frame`, nil if it was not rendered (or not kept).
    func sample(at frame: Frame) -> Float? {
        let size = Frame(device.bufferSize)
        let start = frame - ((frame % size) + size) % size
        return periods.withLock { $0[start]?[Int(frame - start)] }
    }

    /// Every kept sample from device frame `from` on that is not 0.
    func nonZeroFrames(from: Frame) -> [Frame] {
        periods.withLock { kept in
            kept.flatMap { start, samples in
                samples.indices.filter { samples[$0] != 0 && start + Frame($0) >= from }.map { start + Frame($0) }
            }.sorted()
        }
    }
}

/// `@unchecked Sendable` by contract: `log` is a `Locked`.
final class RecordingDelegate: AudioPlayerDelegate, @unchecked Sendable {
    let log = Locked<[String]>([])
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { log.withLock { $0.append("finished \(flag)") } }
    func audioPlayerBeginInterruption(_ player: AudioPlayer) { log.withLock { $0.append("began") } }
    func audioPlayerEndInterruption(_ player: AudioPlayer) { log.withLock { $0.append("ended") } }
}

/// SamplerKit on a device a test renders: the same sessions, players and nodes as on JACK,
/// deterministic and without a server, so ThreadSanitizer runs them (`make tsan`).
@Suite(.serialized) struct ManualDeviceTests {
    @Test func playersPlayIntoTheNamedOutputTheyAreRoutedTo() throws {
        let device = ManualDevice(bufferSize: 256)
        var configuration = AudioSession.Configuration()
        configuration.outputs = ["vox", "fx"]
        let session = try AudioSession(configuration: configuration, device: device)
        defer { session.close() }
        let main = try AudioPlayer(sound: markerSound(), session: session)
        let vox = try AudioPlayer(sound: markerSound(), session: session)
        let node = try PlayerNode(session: session)
        main.pan = -1
        vox.pan = -1
        try vox.setOutput("vox")
        try node.setOutput("fx")
        #expect(vox.output == "vox" && main.output == nil && node.output == "fx")
        #expect(throws: SamplerKitError.session("no output \"drums\" in the session's configuration (it has vox, fx)")) { try main.setOutput("drums") }
        #expect(main.play(atFrame: 1000) && vox.play(atFrame: 2000))
        try node.scheduleBuffer(try markerSound(frames: 1000))
        node.play()
        let out = device.render(periods: 12, outputCount: 3)
        // Each on its own output, from its own frame; nothing of the others there.
        #expect(position(of: out[0][1000]) == 0 && position(of: out[0][2500]) == 1500)
        #expect(out[2][1999] == 0 && position(of: out[2][2000]) == 0 && position(of: out[2][3000]) == 1000)
        #expect(out[4].contains { $0 != 0 } && out[0][0..<1000].allSatisfy { $0 == 0 })
        // Back to the main mix (from the earliest frame a command can reach, within two periods):
        // from then on the main mix has both.
        try vox.setOutput(nil)
        let later = device.render(periods: 4, outputCount: 3)  // frames 3072 ..< 4096
        #expect(later[2][512...].allSatisfy { $0 == 0 })
        #expect(position(of: later[0][600]) == 2672 + 1672)
        // A player made later on a freed slot starts on the main mix.
        var routed: AudioPlayer? = try AudioPlayer(sound: markerSound(), session: session)
        try routed?.setOutput("fx")
        routed = nil
        let fresh = try AudioPlayer(sound: markerSound(), session: session)
        fresh.pan = -1
        main.stop()
        vox.stop()
        node.stop()
        _ = device.render(periods: 2, outputCount: 3)
        #expect(fresh.play())
        let next = device.render(periods: 4, outputCount: 3)
        #expect(fresh.output == nil)
        #expect(next[0].contains { $0 != 0 }, "main \(next[0].filter { $0 != 0 }.count) vox \(next[2].filter { $0 != 0 }.count) fx \(next[4].filter { $0 != 0 }.count)")
        #expect(next[4].allSatisfy { $0 == 0 })
        #expect(throws: SamplerKitError.self) {
            var bad = AudioSession.Configuration()
            bad.outputs = ["out"]
            _ = try AudioSession(configuration: bad, device: ManualDevice())
        }
    }

    @Test func startsLandOnTheirFramesAndSkippedPeriodsAreASilentGap() throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let player = try AudioPlayer(sound: markerSound(), session: session)
        player.pan = -1  // all of it on the left, at unity
        #expect(player.play(atFrame: 1000))
        var out = device.render(periods: 10).left  // frames 0 ..< 2560
        #expect(out[999] == 0)
        #expect(position(of: out[1000]) == 0)
        #expect(position(of: out[2559]) == 1559)
        device.skip(periods: 3)  // 2560 ..< 3328 never rendered
        out = device.render(periods: 4).left  // 3328 ..< 4352
        // The device-timeline invariant: after the gap the sound is where it would have been.
        #expect(position(of: out[0]) == 2328)
        #expect(position(of: out[1023]) == 3351)
        #expect(session.lostAudio.lostFrames == 768)
        #expect(session.lostAudio.xruns == 1)
        #expect(session.deviceCurrentFrame == 4352)
        #expect(session.earliestStartFrame == 4352 + 256)
        #expect(session.hostTime(forFrame: 48000) == 1_000_000)
        #expect(session.frame(for: AudioTime(hostTime: 500_000)) == 24000)
    }

    /// A start waiting for its frame, then `stop()` at once: nothing sounds (it used to play at
    /// full level with `isPlaying` false).
    @Test func stopForgetsAStartStillWaitingForItsFrame() throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let renderer = ManualRenderer(device, keep: true)
        defer { renderer.stop() }
        let player = try AudioPlayer(sound: markerSound(frames: 4800), session: session)
        let from = device.nextFrame
        let at = from + 12_000
        #expect(player.play(atFrame: at))
        player.stop()
        #expect(!player.isPlaying)
        #expect(waitUntil(timeout: 10) { device.nextFrame > at + 9600 })
        #expect(renderer.nonZeroFrames(from: from).isEmpty)
        // And a start that is not stopped plays on its frame.
        let next = device.nextFrame + 2000
        #expect(player.play(atFrame: next))
        #expect(waitUntil(timeout: 10) { device.nextFrame > next + 256 })
        #expect(renderer.sample(at: next - 1) == 0)
        #expect(renderer.sample(at: next).map(position(of:)) == 0)
    }

    @Test func aDeviceThatGoesAwayInterruptsAndOneThatComesBackResumes() throws {
        let device = ManualDevice(bufferSize: 256)
        var configuration = AudioSession.Configuration()
        configuration.reconnect = true
        configuration.reconnectInterval = 0.02
        let session = try AudioSession(configuration: configuration, device: device)
        defer { session.close() }
        let events = Locked<[String]>([])
        session.onInterruptionBegan = { events.withLock { $0.append("session began") } }
        session.onInterruptionEnded = { events.withLock { $0.append("session ended") } }
        let renderer = ManualRenderer(device, keep: true)
        defer { renderer.stop() }
        let player = try AudioPlayer(sound: markerSound(), session: session)
        player.pan = -1
        let delegate = RecordingDelegate()
        player.delegate = delegate
        #expect(player.play())
        #expect(waitUntil(timeout: 5) { player.currentTime > 0.05 })
        device.shutDown()
        #expect(waitUntil(timeout: 5) { events.withLock { $0 } == ["session began"] })
        #expect(session.isInterrupted)
        #expect(!player.isPlaying)
        #expect(delegate.log.withLock { $0 } == ["finished false", "began"])
        // No playing without a clock to place the start on, as AVAudioPlayer during an
        // interruption (it used to queue a start on the old clock's frames).
        #expect(!player.play())
        #expect(!player.isPlaying)
        device.restart()
        #expect(waitUntil(timeout: 5) { events.withLock { $0 } == ["session began", "session ended"] })
        #expect(waitUntil(timeout: 5) { delegate.log.withLock { $0 } == ["finished false", "began", "ended"] })
        // The new clock starts near 0; a start on it lands on its frame.
        let at = device.nextFrame + 4000
        #expect(at < 48000)
        player.currentTime = 0
        #expect(player.play(atFrame: at))
        #expect(waitUntil(timeout: 10) { device.nextFrame > at + 256 })
        #expect(renderer.sample(at: at - 1) == 0)
        #expect(renderer.sample(at: at).map(position(of:)) == 0)
        #expect(renderer.sample(at: at + 100).map(position(of:)) == 100)
    }

    /// The stress test's eight control threads against a render thread, briefly: under
    /// ThreadSanitizer (`make tsan`) this is where a data race in SamplerKit shows.
    @Test func eightControlThreadsAgainstTheRenderThread() throws {
        let device = ManualDevice(bufferSize: 128)
        let session = try AudioSession(device: device)
        let renderer = ManualRenderer(device, keep: false)
        let sound = try markerSound(frames: 4800)
        let players = try (0..<4).map { _ in try AudioPlayer(sound: sound, session: session) }
        let node = try PlayerNode(session: session, scheduleCapacity: 32)
        let delegate = NullDelegate()
        let calls = Locked(0)
        let deadline = Date().addingTimeInterval(5)
        let threads = (0..<8).map { _ in
            Thread {
                let n = callEverythingAtRandom(session: session, players: players, node: node, sound: sound, delegate: delegate,
                                               until: deadline, completions: calls, rss: nil)
                calls.withLock { $0 += n }
            }
        }
        threads.forEach { $0.start() }
        #expect(waitUntil(timeout: 60) { threads.allSatisfy(\.isFinished) }, "a control thread is stuck")
        renderer.stop()
        #expect(session.engine.nonFiniteOutputCount == 0)
        #expect(session.engine.refusedCommandCount == 0)
        #expect(device.nextFrame > 0)
        print("\(calls.withLock { $0 }) calls from 8 threads against a manual device in 5 s")
        session.close()
    }

    /// A file segment paused while it plays, then resumed, stops on its last frame (issue 34)
    /// (the pause's cancel used to remove its end-stop, and it played on into the rest of the
    /// file). Every frame of the segment is heard once, in order, and nothing after it.
    @Test func aSegmentPausedWhileItPlaysStopsOnItsLastFrame() throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let dir = try temporaryDirectory()
        let url = dir.appendingPathComponent("marker.wav")
        let samples = (0..<20_000).map { Float($0 + 1) / 100_000 }
        try WAVFileWriter.write(path: url.path, channels: [samples, samples], sampleRate: 48000)
        let node = try PlayerNode(session: session)
        try node.scheduleSegment(AudioFile(forReading: url), startingFrame: 1000, frameCount: 2000)
        node.play(at: AudioTime(sampleTime: 512, atRate: 48000))
        var heard = device.render(periods: 6).left  // to 1536: a thousand frames of the segment
        node.pause()
        heard += device.render(periods: 10).left
        node.play()
        heard += device.render(periods: 40).left
        let played = heard.filter { $0 != 0 }
        #expect(played == Array(samples[1000..<3000]), "\(played.count) frames heard, from \(played.first ?? 0) to \(played.last ?? 0)")
    }

    /// A node that ran dry and sat idle gets a buffer with no time (issue 34). As
    /// AVAudioPlayerNode does, it plays at once (on the session's earliest start frame), whole,
    /// and its completion handler runs after it. It used to be placed on the end of the last
    /// item, in the past: after a second idle it was a late start that played nothing; after
    /// more than `maxCatchUpFrames` (10.9 s) it played from its first frame while its sound was
    /// released on the frame the node predicted.
    @Test(arguments: [200, 2100]) func aNilTimeBufferOnANodeThatRanDryPlaysAtOnceAndWhole(idlePeriods: Int) throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let node = try PlayerNode(session: session)
        func marker(_ frames: Int) throws -> Sound {
            let samples = (0..<frames).map { Float($0 + 1) / 100_000 }
            return try Sound(channels: [samples, samples], sampleRate: 48000)
        }
        try node.scheduleBuffer(marker(1000))
        node.play(at: AudioTime(sampleTime: 512, atRate: 48000))
        _ = device.render(periods: 8)
        for _ in 0..<idlePeriods { _ = device.render(periods: 1) }
        let completed = Atomic<Int>(0)
        let from = device.nextFrame
        let expected = session.earliestStartFrame
        try node.scheduleBuffer(marker(2000)) { completed.add(1, ordering: .relaxed) }
        #expect(node.isPlaying)
        let out = device.render(periods: 12).left
        let onset = out.firstIndex { $0 != 0 }.map { from + Frame($0) }
        #expect(onset == expected, "heard from \(onset.map(String.init) ?? "nowhere"), expected \(expected)")
        if let onset {
            let heard = (0..<2000).map { out[Int(onset - from) + $0] }
            #expect(heard == (0..<2000).map { Float($0 + 1) / 100_000 }, "not the whole buffer, in order")
        }
        #expect(waitUntil(timeout: 10) { completed.load(ordering: .relaxed) == 1 })
    }

    /// A preload longer than a stream's ring can hold (2^31 frames) is refused with a one-line
    /// error naming the file and the limit, before anything is allocated; an ordinary one plays.
    @Test func aPreloadLongerThanARingHoldsIsAClearError() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("short.wav").path
        try WAVFileWriter.write(path: path, channels: [[Float](repeating: 0.25, count: 4800)], sampleRate: 48000)
        let session = try AudioSession(device: ManualDevice(bufferSize: 256))
        defer { session.close() }
        do {
            _ = try AudioPlayer(streamingContentsOf: path, session: session, preloadSeconds: 1e6)
            Issue.record("a preload of 1e6 s was accepted")
        } catch {
            let message = "\(error)"
            #expect(message.contains(path) && message.contains("preloadSeconds") && message.contains("\(StreamRing.maximumCapacity)"))
            #expect(!message.contains("\n"))
        }
        _ = try AudioPlayer(streamingContentsOf: path, session: session, preloadSeconds: 0.5)
    }

    /// A streamed player seeked twice on a device rendered by the calling thread (issue 34): the
    /// ring the first seek left is confirmed free while the device renders, so the second seek
    /// does not wait for a render only its own thread could supply, and lands on its sample.
    @Test func aStreamedPlayerSeekedTwiceOnAManualDeviceLandsOnBothTargets() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ramp.wav").path
        try WAVFileWriter.write(path: path, channels: [(0..<(48000 * 10)).map { Float($0 + 1) / 1_000_000 }], sampleRate: 48000)
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let player = try AudioPlayer(streamingContentsOf: path, session: session)
        #expect(player.play(atFrame: 512))
        _ = device.render(periods: 8)
        _ = player.seek(toFrame: 100_000, at: device.nextFrame + 1024)
        _ = device.render(periods: 10)  // past the first seek's frame
        let target = device.nextFrame + 1024
        _ = player.seek(toFrame: 200_000, at: target)
        let first = device.nextFrame
        let out = device.render(periods: 10).left
        let i = Int(target - first)
        // Sample k of the file is (k + 1) / 1,000,000; the player is panned to the centre.
        #expect(abs(out[i] / out[i + 1] - 200_001 / 200_002) < 1e-6)
        #expect(abs(out[i + 1] - out[i] - (out[i + 2] - out[i + 1])) < 1e-6)
        #expect(out[i - 1] != 0 && abs(out[i] / out[i - 1]) > 1.5)
    }

    /// A file at another rate than the session's is decoded once, converted: the player's
    /// format says both rates (AVAudioPlayer's `format` and its file's), from one decode.
    @Test func aFileAtAnotherRateIsDecodedOnceAndSaysItsOwnRate() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("a.wav").path
        try WAVFileWriter.write(path: path, channels: [(0..<44_100).map { Float($0 % 100) / 200 }], sampleRate: 44_100)
        let session = try AudioSession(device: ManualDevice(bufferSize: 256))
        defer { session.close() }
        for player in [try AudioPlayer(contentsOf: path, session: session),
                       try AudioPlayer(data: Data(contentsOf: URL(fileURLWithPath: path)), session: session)] {
            #expect(player.format.sampleRate == 48_000 && player.format.sourceSampleRate == 44_100)
            #expect(player.format.frameCount == 48_000)
        }
    }
}
