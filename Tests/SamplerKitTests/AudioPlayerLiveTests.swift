import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import Testing

/// AudioPlayer's observable effects, each on its own session (JACK client) of one dummy server,
/// all captured by one external client.
@Suite(.serialized) struct AudioPlayerLiveTests {
    @Test func seekFadeRatePauseStopAndMetersShowInTheCapture() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let names = ["seek", "fade", "rate", "pause", "meter"]
        let sessions = try names.map { try session(on: server, name: $0) }
        defer { sessions.forEach { $0.close() } }
        let capture = try CaptureProcess(server: server, ports: names.map { "\($0):out_L" }, frames: 48000 * 3)
        let origin = sessions[0].deviceCurrentFrame + 9600

        // Seek: jump to frame 30000 of the sound on device frame origin + 10000 exactly.
        let seeker = try AudioPlayer(sound: markerSound(), session: sessions[0])
        seeker.pan = -1
        seeker.play(atFrame: origin)
        let seekFrame = origin + 10_000
        seeker.seek(toFrame: 30_000, at: seekFrame)

        // Fade: a constant 0.5 fades to 0 over exactly 4800 frames from origin + 4800.
        let fader = try AudioPlayer(sound: Sound(channels: [[Float](repeating: 0.5, count: 48000)], sampleRate: 48000), session: sessions[1])
        fader.pan = -1
        fader.play(atFrame: origin)
        let fadeStart = origin + 4800
        fader.setVolume(0, fadeFrames: 4800, at: fadeStart)

        // Rate 2: a 9600-frame sound lasts 4800 frames.
        let fast = try AudioPlayer(sound: Sound(channels: [[Float](repeating: 0.5, count: 9600)], sampleRate: 48000), session: sessions[2])
        fast.pan = -1
        fast.enableRate = true
        fast.rate = 2
        fast.play(atFrame: origin)

        // Pause and resume keep the position; stop and play resume too (AVAudioPlayer semantics).
        let pauser = try AudioPlayer(sound: markerSound(), session: sessions[3])
        let recorder = FinishRecorder()
        pauser.delegate = recorder
        pauser.pan = -1
        pauser.play(atFrame: origin)
        #expect(waitUntil(timeout: 2) { sessions[3].engine.renderedFrame > origin + 4800 })
        pauser.pause()
        #expect(!pauser.isPlaying)
        let pausedAt = pauser.currentTime
        #expect(waitUntil(timeout: 2) { sessions[3].engine.renderedFrame > origin + 14_400 })
        #expect(abs(pauser.currentTime - pausedAt) < 1e-9)
        pauser.play()
        #expect(waitUntil(timeout: 2) { sessions[3].engine.renderedFrame > origin + 24_000 })
        pauser.stop()
        let stoppedAt = pauser.currentTime
        #expect(stoppedAt > pausedAt)
        pauser.play()

        // Meters: a 0.5-amplitude sine is -9.03 dBFS average, -6.02 dBFS peak.
        let sine = (0..<48000).map { 0.5 * Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let meter = try AudioPlayer(sound: Sound(channels: [sine], sampleRate: 48000), session: sessions[4])
        meter.pan = -1
        meter.numberOfLoops = -1
        meter.isMeteringEnabled = true
        meter.play(atFrame: origin)
        #expect(waitUntil(timeout: 3) { sessions[4].engine.renderedFrame > origin + 4800 })
        meter.updateMeters()
        #expect(waitUntil(timeout: 3) { sessions[4].engine.renderedFrame > origin + 4800 + 48000 })
        meter.updateMeters()
        #expect(abs(Double(meter.averagePower(forChannel: 0)) - 20 * log10(0.5 / 2.0.squareRoot())) < 0.1)
        #expect(abs(Double(meter.peakPower(forChannel: 0)) - 20 * log10(0.5)) < 0.1)
        #expect(meter.averagePower(forChannel: 1) == -160)

        let recording = try capture.finish()
        // Seek lands on its exact frame.
        #expect(position(of: recording.sample(channel: 0, at: seekFrame - 1)) == 9_999)
        #expect(position(of: recording.sample(channel: 0, at: seekFrame)) == 30_000)
        #expect(position(of: recording.sample(channel: 0, at: origin)) == 0)
        // The fade takes exactly the requested frames.
        #expect(recording.sample(channel: 1, at: fadeStart) == 0.5)
        #expect(abs(recording.sample(channel: 1, at: fadeStart + 2400) - 0.25) < 1e-6)
        #expect(recording.sample(channel: 1, at: fadeStart + 4799) > 0)
        #expect(recording.sample(channel: 1, at: fadeStart + 4800) == 0)
        // Rate 2 halves the length.
        let fastFrames = recording.channels[2].filter { $0 != 0 }.count
        #expect(fastFrames == 4800)
        // Pause and stop: the marker sequence resumes where it left off, never jumps back.
        let pauseTrack = recording.channels[3].filter { $0 != 0 }.map(position(of:))
        #expect(pauseTrack.count > 30_000)
        #expect(zip(pauseTrack, pauseTrack.dropFirst()).allSatisfy { $1 == $0 + 1 })
        // Pausing and stopping do not count as finishing; playing to the end does, once.
        #expect(recorder.lock.withLock { recorder.finishes } == [true])
    }

    @Test func finishingCallsTheDelegateOnceAndGoesBackToTheStart() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let s = try session(on: server, name: "finish")
        defer { s.close() }
        let player = try AudioPlayer(sound: Sound(channels: [[Float](repeating: 0.1, count: 2400)], sampleRate: 48000), session: s)
        let recorder = FinishRecorder()
        player.delegate = recorder
        player.numberOfLoops = 2
        player.play()
        #expect(waitUntil(timeout: 3) { !recorder.lock.withLock { recorder.finishes }.isEmpty })
        #expect(waitUntil(timeout: 1) { s.engine.renderedFrame > 0 } && recorder.lock.withLock { recorder.finishes } == [true])
        #expect(!player.isPlaying)
        #expect(player.currentTime == 0)
        #expect(player.duration == 0.05)
    }
}
