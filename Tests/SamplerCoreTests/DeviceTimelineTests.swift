import Foundation
import Testing
@testable import SamplerCore

/// The device-timeline invariant, checked without JACK: whatever stamps the periods carry
/// (skipped cycles, frames asked for again, buffer-size changes), the samples the engine writes
/// for device frame t are those an uninterrupted render has at t, or silence.
@Suite struct DeviceTimelineTests {
    /// A program touching every kind of voice: plain, looped, varispeed, ramps, stop fades,
    /// declicked restarts, instrument triggers with a choke, a seek.
    static func program(_ engine: Engine) throws {
        let a = try engine.register(Sound(channels: [(0..<3000).map { Float(($0 * 7919) % 1000) / 1000 - 0.5 }], sampleRate: 48000))
        let b = try engine.register(Sound(channels: [(0..<257).map { Float($0 % 50) / 60 }, (0..<257).map { -Float($0 % 30) / 40 }], sampleRate: 48000))
        let c = try engine.register(Sound(channels: [(0..<900).map { sin(Float($0) * 0.05) }], sampleRate: 48000))
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 8, voiceCount: 2, pan: -0.3, chokeGroup: 1, layers: [InstrumentLayer(sounds: [a, c])], chokeFadeFrames: 100),
            InstrumentDefinition(firstPlayer: 10, pan: 0.4, chokeGroup: 1, layers: [InstrumentLayer(sounds: [b])], chokeFadeFrames: 100),
        ])
        engine.send(.start(player: 0, sound: a, at: 100, loops: -1, pan: PanGains(pan: 0.2)))
        engine.send(.start(player: 1, sound: b, at: 333, loops: 20, rate: 1.37))
        engine.send(.start(player: 2, sound: c, at: 1000, loops: -1, rate: 0.61))
        engine.send(.setGain(player: 0, Gain(linear: 0.25), fadeFrames: 2000, at: 4000))
        engine.send(.stop(player: 2, at: 9000, fadeFrames: 777))
        engine.send(.start(player: 3, sound: a, at: 5000, loops: 3, declickFrames: 64))
        engine.send(.start(player: 3, sound: c, at: 6100, loops: 2, declickFrames: 64))
        engine.send(.seek(player: 0, to: 17, at: 12_345))
        engine.send(.setRate(player: 1, 0.8, at: 7_000))
        for k in 0..<40 {
            engine.send(.trigger(instrument: k % 2, velocity: 40 + k * 2, at: 700 + Frame(k) * 611))
        }
    }

    static let length = 40_000

    /// The uninterrupted render, in 64-frame periods from frame 0.
    static func reference() throws -> (left: [Float], right: [Float]) {
        let engine = Engine()
        try program(engine)
        return renderBlocks(engine, periods: length / 64, blockSize: 64)
    }

    /// Renders `periods` (stamp, size) and checks each against the reference; returns the
    /// number of frames that were not exact (silence where the reference sounds).
    static func check(_ periods: [(Frame, Int)], engine: Engine, reference: (left: [Float], right: [Float]),
                      sourceLocation: SourceLocation = #_sourceLocation) {
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        let r = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
        defer { l.deallocate(); r.deallocate() }
        var rendered: Frame = 0
        var wrongPeriods = 0
        for (stamp, n) in periods where Int(stamp) + n <= length {
            engine.render(frameCount: n, periodStart: stamp, left: l, right: r)
            for i in 0..<n {
                let t = Int(stamp) + i
                let fresh = Frame(t) >= rendered
                let exact = l[i] == reference.left[t] && r[i] == reference.right[t]
                let silent = l[i] == 0 && r[i] == 0
                if fresh ? !exact : !silent {
                    wrongPeriods += 1
                    Issue.record("period at \(stamp) (\(n) frames), frame \(t): \(l[i]) vs \(reference.left[t])", sourceLocation: sourceLocation)
                    break
                }
            }
            rendered = max(rendered, stamp + Frame(n))
            if wrongPeriods > 3 { return }
        }
    }

    @Test func uninterruptedPeriodsEqualTheReference() throws {
        let reference = try Self.reference()
        let engine = Engine()
        try Self.program(engine)
        Self.check((0..<Self.length / 128).map { (Frame($0 * 128), 128) }, engine: engine, reference: reference)
    }

    @Test(arguments: [64, 256, 1024])
    func skippedCyclesLeaveSilentGapsNeverShifts(period: Int) throws {
        let reference = try Self.reference()
        let engine = Engine()
        try Self.program(engine)
        var periods: [(Frame, Int)] = []
        var t: Frame = 0, k = 0
        while t < Frame(Self.length) {
            periods.append((t, period))
            k += 1
            // Lose 1, 2 or 3 cycles now and then.
            t += Frame(period) * (k % 7 == 3 ? Frame(1 + k % 3) + 1 : 1)
        }
        Self.check(periods, engine: engine, reference: reference)
        #expect(engine.lostPeriodCount > 0)
        #expect(engine.lostFrameCount % period == 0)
    }

    @Test func aLateCallbackReadingTheNextCycleAndThenTheSameOneAgainNeverShifts() throws {
        let reference = try Self.reference()
        let engine = Engine()
        try Self.program(engine)
        // JACK2 async: a late callback reads the next cycle's time (t + 2p), and the cycle after
        // it reads the same time again.
        var periods: [(Frame, Int)] = []
        var t: Frame = 0
        var k = 0
        while t < Frame(Self.length) {
            k += 1
            if k % 9 == 4 {
                periods.append((t + 256, 256))
                periods.append((t + 256, 256))
                t += 512
            } else {
                periods.append((t, 256))
                t += 256
            }
        }
        Self.check(periods, engine: engine, reference: reference)
        #expect(engine.repeatedFrameCount > 0)
        #expect(engine.lostPeriodCount > 0)
    }

    @Test func bufferSizeChangesWhilePlaying() throws {
        let reference = try Self.reference()
        let engine = Engine()
        try Self.program(engine)
        var periods: [(Frame, Int)] = []
        var t: Frame = 0
        let sizes = [1024, 1024, 128, 128, 128, 64, 2048, 256, 256, 32, 1024]
        var k = 0
        while t < Frame(Self.length) {
            let n = sizes[k % sizes.count]
            periods.append((t, n))
            // A size change can overlap what was rendered (the server restarts its cycle) or
            // leave a gap.
            t += Frame(n) + (k % 5 == 2 ? -Frame(n / 2) : (k % 5 == 4 ? Frame(300) : 0))
            k += 1
        }
        Self.check(periods, engine: engine, reference: reference)
    }

    @Test func aStartSentAfterItsFrameTakesUpItsSoundWhereItWouldBe() throws {
        let sound = try Sound(channels: [(0..<5000).map { Float($0 + 1) / 10_000 }], sampleRate: 48000)
        let onTime = Engine(), late = Engine()
        let idA = try onTime.register(sound), idB = try late.register(sound)
        onTime.send(.start(player: 0, sound: idA, at: 100, loops: 1))
        onTime.send(.setGain(player: 0, Gain(linear: 0.5), fadeFrames: 1000, at: 300))
        let expected = renderBlocks(onTime, periods: 60, blockSize: 128)
        // The late engine gets the same commands 700 frames after their frames.
        _ = renderBlocks(late, periods: 6, blockSize: 128)
        late.send(.start(player: 0, sound: idB, at: 100, loops: 1))
        late.send(.setGain(player: 0, Gain(linear: 0.5), fadeFrames: 1000, at: 300))
        let got = renderBlocks(late, periods: 54, blockSize: 128, start: 768)
        #expect(Array(got.left) == Array(expected.left[768...]))
        let lateEvent = events(late).first { $0.kind == .lateStart }
        #expect(lateEvent?.value == 668)
    }

    @Test func aStartOnLostFramesIsReportedLateByTheFramesLost() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 10_000)], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 300))
        _ = renderBlocks(engine, periods: 1, blockSize: 256)
        // The device skips 256 ..< 768.
        _ = renderBlocks(engine, periods: 1, blockSize: 256, start: 768)
        let late = events(engine).first { $0.kind == .lateStart }
        #expect(late?.value == 468)
        #expect(engine.position(ofPlayer: 0) == 1024 - 300)
        #expect(engine.lostFrameCount == 512 && engine.lostPeriodCount == 1)
    }

    @Test func aJumpBeyondTheCatchUpLimitIsANewClock() throws {
        let engine = Engine(configuration: .init(maxCatchUpFrames: 10_000))
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 100_000)], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0))
        engine.send(.start(player: 1, sound: id, at: 50_000))
        _ = renderBlocks(engine, periods: 1, blockSize: 256)
        let after = renderBlocks(engine, periods: 1, blockSize: 256, start: 1_000_000)
        #expect(after.left.allSatisfy { $0 == 0 })
        #expect(engine.clockRestartCount == 1)
        #expect(!engine.isActive(player: 0))
    }

    @Test func aResetStartsANewClockWithoutCatchingUp() throws {
        let engine = Engine(configuration: .init(maxCatchUpFrames: 10_000))
        let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 100_000)], sampleRate: 48000))
        _ = renderBlocks(engine, periods: 4, blockSize: 256, start: 5_000)
        engine.send(Command(kind: .reset, player: 0, frame: Command.immediately))
        engine.send(.start(player: 0, sound: id, at: 300))
        // The new server's clock starts far behind the old one.
        let out = renderBlocks(engine, periods: 2, blockSize: 256, start: 0)
        #expect(firstNonZero(out.left) == 300)
        #expect(engine.clockRestartCount == 0 && engine.lostFrameCount == 0 && engine.repeatedFrameCount == 0)
    }
}
