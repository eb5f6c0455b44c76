import Foundation
import JACKTestSupport
import Locking
import SamplerCore
import SamplerKit
import SoundFiles
import Synchronization
import Testing

/// A program can feed a PlayerNode for an hour (issue 14). An hour of device time on a manual
/// device (rendered as fast as the machine allows): 36,000 generated buffers of 0.1 s scheduled
/// back to back from their completion count, every output frame checked against what was
/// scheduled (gapless, no frame dropped or repeated), the engine's sound table bounded and memory
/// flat.
@Suite(.serialized) struct PlayerNodeHourTests {
    @Test func aNodeFedForAnHourOfDeviceTimeIsGaplessWithFlatMemory() throws {
        // An hour of device time at 8 kHz: the same 36,000 buffers and completions as at 48 kHz,
        // with a sixth of the frames to render and check (the rate is arbitrary to a manual device).
        let rate = 8_000.0
        let device = ManualDevice(sampleRate: rate, bufferSize: 1024)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let capacity = 256
        let node = try PlayerNode(session: session, scheduleCapacity: capacity)
        let frames = 800, total = 36_000  // 0.1 s each: one hour
        // Frame j of buffer k holds the running frame count, so the output at device frame
        // origin + t must be value(t).
        func value(_ t: Int) -> Float { Float(t % 65_536 + 1) / 65_536 }
        let completed = Atomic<Int>(0)
        let origin = Frame(4096)
        node.play(at: AudioTime(sampleTime: origin, atRate: rate))
        var scheduled = 0
        var checked = 0  // output frames checked so far (from origin)
        var wrong = 0, maxRegistered = 0, rssWarm = 0
        var rssSamples: [Int] = []
        while checked < total * frames {
            while scheduled < total && scheduled - completed.load(ordering: .relaxed) < capacity - 1 {
                let base = scheduled * frames
                let samples = (0..<frames).map { value(base + $0) }
                try node.scheduleBuffer(Sound(channels: [samples, samples], sampleRate: rate)) { completed.add(1, ordering: .relaxed) }
                scheduled += 1
            }
            if scheduled >= total / 10 && rssWarm == 0 { rssWarm = residentKilobytes() }
            if scheduled / 3600 > rssSamples.count { rssSamples.append(residentKilobytes()) }
            // Render a second at a time while a second (and a margin) is scheduled ahead; else
            // wait for the event thread to report completions, which make room in the schedule.
            let chunk = 48 * device.bufferSize
            let ahead = (scheduled - 8) * frames - checked
            guard ahead >= chunk || scheduled == total else {
                let target = checked / frames - 1
                #expect(waitUntil(timeout: 10) { completed.load(ordering: .relaxed) >= target })
                continue
            }
            let start = device.nextFrame
            let out = device.render(periods: 48).left
            for (i, sample) in out.enumerated() {
                let t = Int(start - origin) + i
                guard t >= 0, t < total * frames else { continue }
                if sample != value(t) { wrong += 1 }
                checked = t + 1
            }
            maxRegistered = max(maxRegistered, session.engine.registeredSoundCount)
        }
        let rssEnd = residentKilobytes()
        print("an hour of PlayerNode buffers (\(total) × \(frames) frames): \(wrong) wrong frames, at most \(maxRegistered) sounds registered, RSS \(rssWarm) kB at 6 min, \(rssEnd) kB at the end; every 6 min: \(rssSamples)")
        #expect(wrong == 0)
        #expect(maxRegistered <= capacity + 16)
        if ProcessInfo.processInfo.environment["SAMPLER_SANITIZER"] == nil {
            #expect(rssEnd - rssWarm < 2048, "RSS grew by \(rssEnd - rssWarm) kB")
        }
    }
}
