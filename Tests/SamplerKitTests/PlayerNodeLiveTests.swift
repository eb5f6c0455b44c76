import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import Locking
import Synchronization
import Testing

/// PlayerNode's scheduling, under a dummy server, captured externally.
@Suite(.serialized) struct PlayerNodeLiveTests {
    @Test func backToBackBuffersAreGaplessAndCompletionsFireOnceAfterTheirFrames() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "node")
        defer { s.close() }
        let node = try PlayerNode(session: s)
        let a = try Sound(channels: [(0..<3000).map { Float($0 + 1) / 10_000 }], sampleRate: 48000)
        let b = try Sound(channels: [(0..<1234).map { -Float($0 + 1) / 10_000 }], sampleRate: 48000)
        let c = try Sound(channels: [[Float](repeating: 0.2, count: 777)], sampleRate: 48000)
        let calls = Calls()
        let capture = try CaptureProcess(server: server, ports: ["node:out_L"], frames: 48000 * 2)
        try node.scheduleBuffer(a, completionCallbackType: .dataConsumed) { calls.add("a", s.engine.renderedFrame) }
        try node.scheduleBuffer(b, completionCallbackType: .dataRendered) { calls.add("b", s.engine.renderedFrame) }
        try node.scheduleBuffer(c, completionCallbackType: .dataPlayedBack) { calls.add("c", s.deviceCurrentFrame) }
        let start = s.deviceCurrentFrame + 9600
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        #expect(node.isPlaying)
        #expect(node.nodeTime(forPlayerTime: AudioTime(sampleTime: 3000, atRate: 48000))?.sampleTime == start + 3000)
        #expect(waitUntil(timeout: 3) { calls.names.count == 3 })

        let recording = try capture.finish()
        let centre = PanGains.center.monoLeft
        let expected = (a.samples(channel: 0) + b.samples(channel: 0) + c.samples(channel: 0)).map { $0 * centre }
        let played = (0..<expected.count).map { recording.sample(channel: 0, at: start + Frame($0)) }
        #expect(played == expected)
        #expect(recording.sample(channel: 0, at: start - 1) == 0)
        #expect(recording.sample(channel: 0, at: start + Frame(expected.count)) == 0)

        let log = calls.lock.withLock { calls.log }
        #expect(log.map(\.0) == ["a", "b", "c"])
        #expect(log[0].1 >= start + 3000)
        #expect(log[1].1 >= start + 4234)
        #expect(log[2].1 >= start + 5011)
        // Each fires once: nothing more arrives later.
        Thread.sleep(forTimeInterval: 0.1)  // a window for a duplicate to show up, not synchronization
        #expect(calls.names.count == 3)
    }

    /// AVAudioPlayerNode's synthesis pattern: each completion schedules the next generated
    /// buffer. Far more buffers than the engine's sound table holds (1,024) go through; the table
    /// recycles them, memory stays flat and the output is gapless.
    @Test func generatedBuffersCanBeScheduledEndlessly() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "endless")
        defer { s.close() }
        let node = try PlayerNode(session: s, scheduleCapacity: 64)
        let total = 2000, size = 192
        // Buffer k holds frames k*size ..< (k+1)*size of a ramp: the capture must be that ramp.
        @Sendable func buffer(_ k: Int) throws -> Sound {
            try Sound(channels: [(0..<size).map { Float((k * size + $0) % 100_000 + 1) / 200_000 }], sampleRate: 48000)
        }
        let next = Locked(0), failures = Locked<[String]>([]), done = Locked(0)
        @Sendable func feed() {
            let k = next.withLock { n -> Int in defer { n += 1 }; return n }
            guard k < total else { return }
            do {
                try node.scheduleBuffer(buffer(k)) {
                    done.withLock { $0 += 1 }
                    feed()
                }
            } catch { failures.withLock { $0.append("\(error)") } }
        }
        // 60 in flight: 240 ms ahead of the render thread, enough for a busy machine.
        for _ in 0..<60 { feed() }
        let rssBefore = residentKilobytes()
        let capture = try CaptureProcess(server: server, ports: ["endless:out_L"], frames: 48000 * 9)
        // Taken once the witness is recording: its start-up can outlast any margin on a loaded
        // machine, and a start already past plays only its remainder.
        let start = s.earliestStartFrame + 4800
        node.play(at: AudioTime(sampleTime: start, atRate: 48000))
        #expect(waitUntil(timeout: 30) { done.withLock { $0 } == total })
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        #expect(s.engine.registeredSoundCount <= 64 + 8, "\(s.engine.registeredSoundCount) sounds still registered")
        let rssAfter = residentKilobytes()
        #expect(rssAfter - rssBefore < 8_000, "RSS grew \(rssAfter - rssBefore) kB")

        let recording = try capture.finish()
        let centre = PanGains.center.monoLeft
        let from = max(start, recording.firstFrame)
        let count = Int(min(start + Frame(total * size), recording.firstFrame + Frame(recording.channels[0].count)) - from)
        #expect(count > 48000 * 7)
        let played = (0..<count).map { recording.sample(channel: 0, at: from + Frame($0)) }
        let expected = (0..<count).map { Float((Int(from - start) + $0) % 100_000 + 1) / 200_000 * centre }
        #expect(played == expected, "first difference at \((0..<count).first { played[$0] != expected[$0] } ?? -1)")
    }

    /// Pauses at random moments while 40 back-to-back buffers play: the captured output, with
    /// the pauses' silence removed, is every frame of every buffer once, in order, and each
    /// completion handler runs once. (Issue 14: a buffer starting within the period after the
    /// pause call was dropped, and its handler called anyway.)
    @Test func pauseAndResumeNeverDropOrRepeatAFrame() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "pauses")
        defer { s.close() }
        let node = try PlayerNode(session: s, scheduleCapacity: 64)
        let count = 40, size = 300
        let calls = Locked(0)
        for k in 0..<count {
            let samples = (0..<size).map { Float(k * size + $0 + 1) / 100_000 }
            try node.scheduleBuffer(Sound(channels: [samples], sampleRate: 48000)) { calls.withLock { $0 += 1 } }
        }
        let capture = try CaptureProcess(server: server, ports: ["pauses:out_L"], frames: 48000 * 5)
        node.play()
        // Each pause lands somewhere in a 300-frame buffer; within the 256 frames after it,
        // the next buffer usually starts: the case that dropped it.
        for _ in 0..<8 {
            let until = s.engine.renderedFrame + Frame.random(in: 300...1300)
            #expect(waitUntil(timeout: 2) { s.engine.renderedFrame >= until })
            node.pause()
            let resume = s.engine.renderedFrame + 1200
            #expect(waitUntil(timeout: 2) { s.engine.renderedFrame >= resume })
            node.play()
        }
        #expect(waitUntil(timeout: 5) { calls.withLock { $0 } == count })
        let recording = try capture.finish()
        let centre = PanGains.center.monoLeft
        let played = recording.channels[0].filter { $0 != 0 }
        let expected = (0..<count * size).map { Float($0 + 1) / 100_000 * centre }
        #expect(played.count == expected.count)
        let same = played == expected  // compared outside #expect, which would print both arrays
        #expect(same, "first difference at \((0..<min(played.count, expected.count)).first { played[$0] != expected[$0] } ?? -1)")
        #expect(calls.withLock { $0 } == count)
    }

    /// A million buffers through one node (issue 14: "schedule buffers for hours"): 12-frame
    /// buffers on a 192 kHz dummy server (62.5 s of audio; the feeder schedules them about as
    /// fast as the control side can). Every completion handler runs once, the engine's sound
    /// table stays bounded and memory stays flat from the 100,000th buffer on.
    @Test func aMillionBuffersGoThroughWithFlatMemory() throws {
        let server = try JACKServer(period: 1024, sampleRate: 192_000)
        defer { server.stop() }
        let s = try session(on: server, name: "million")
        defer { s.close() }
        let capacity = 512
        let node = try PlayerNode(session: s, scheduleCapacity: capacity)
        let total = Int(ProcessInfo.processInfo.environment["SAMPLER_NODE_BUFFERS"] ?? "") ?? 1_000_000
        let frames = Int(ProcessInfo.processInfo.environment["SAMPLER_NODE_FRAMES"] ?? "") ?? 12
        let samples = (0..<frames).map { Float($0 + 1) / 1000 }
        let completed = Atomic<Int>(0)
        node.play()
        var rssWarm = 0, maxRegistered = 0
        let started = Date()
        for k in 0..<total {
            if k == total / 10 { rssWarm = residentKilobytes() }
            // Wait for room in the schedule (a condition, polled).
            if k - completed.load(ordering: .relaxed) >= capacity - 1 {
                guard waitUntil(timeout: 10, { k - completed.load(ordering: .relaxed) < capacity - 1 }) else {
                    Issue.record("stalled at buffer \(k): \(completed.load(ordering: .relaxed)) completed")
                    return
                }
            }
            try node.scheduleBuffer(Sound(channels: [samples], sampleRate: 192_000)) { completed.add(1, ordering: .relaxed) }
            if k % 10_000 == 0 { maxRegistered = max(maxRegistered, s.engine.registeredSoundCount) }
        }
        #expect(waitUntil(timeout: 30) { completed.load(ordering: .relaxed) == total })
        let rssEnd = residentKilobytes()
        print("\(total) buffers in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; RSS \(rssWarm) kB at 100,000, \(rssEnd) kB at the end; at most \(maxRegistered) sounds registered, \(s.engine.lateStartCount) late starts")
        #expect(completed.load(ordering: .relaxed) == total)
        #expect(rssEnd - rssWarm < 2048, "RSS grew by \(rssEnd - rssWarm) kB")
        #expect(maxRegistered <= capacity + 16)
    }

    @Test func pauseKeepsThePlayerTimelineAndStopResetsIt() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "timeline")
        defer { s.close() }
        let node = try PlayerNode(session: s, scheduleCapacity: 2)
        try node.scheduleBuffer(markerSound(), completionHandler: nil)
        node.play()
        #expect(waitUntil(timeout: 2) { (node.playerTime(forNodeTime: s.lastRenderTime)?.sampleTime ?? 0) > 4800 })
        node.pause()
        #expect(waitUntil(timeout: 2) { s.engine.isPaused(player: 0) })
        let pausedPosition = s.engine.position(ofPlayer: 0)
        let frozen = node.playerTime(forNodeTime: AudioTime(sampleTime: s.deviceCurrentFrame, atRate: 48000))?.sampleTime
        let later = s.engine.renderedFrame + 4800
        #expect(waitUntil(timeout: 2) { s.engine.renderedFrame > later })
        #expect(node.playerTime(forNodeTime: AudioTime(sampleTime: s.deviceCurrentFrame, atRate: 48000))?.sampleTime == frozen)
        #expect(s.engine.position(ofPlayer: 0) == pausedPosition)
        node.play()
        #expect(waitUntil(timeout: 2) { s.engine.position(ofPlayer: 0) > pausedPosition })
        node.stop()
        #expect(node.playerTime(forNodeTime: s.lastRenderTime) == nil)
        #expect(!node.isPlaying)

        // A full schedule throws instead of blocking.
        try node.scheduleBuffer(markerSound(frames: 10))
        try node.scheduleBuffer(markerSound(frames: 10))
        #expect(throws: SamplerError.self) { try node.scheduleBuffer(markerSound(frames: 10)) }
    }
}
