import Foundation
import Testing
@testable import SamplerCore

@Suite struct MixerTests {
    @Test(arguments: [0, 1, 63, 64, 100, 127])
    func startsOnRequestedFrameInsideABlock(offset: Int) throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 10))
        engine.send(.start(player: 0, sound: id, at: Frame(128 + offset)))
        let out = renderBlocks(engine, periods: 3, blockSize: 128)
        #expect(firstNonZero(out.left) == 128 + offset)
    }

    @Test func startsOnTheSameFrameWhateverTheBlockSize() throws {
        for block in [1, 7, 64, 256, 1000] {
            let engine = Engine()
            let id = try engine.register(rampSound(frames: 50))
            engine.send(.start(player: 0, sound: id, at: 777))
            let out = renderBlocks(engine, periods: 2000 / block + 1, blockSize: block)
            #expect(firstNonZero(out.left) == 777, "block size \(block)")
        }
    }

    @Test func twoVoicesSum() throws {
        let engine = Engine()
        let a = try engine.register(Sound(channels: [[0.25, 0.25]], sampleRate: 48000))
        let b = try engine.register(Sound(channels: [[0.5, 0.5]], sampleRate: 48000))
        engine.send(.start(player: 0, sound: a, at: 0, pan: PanGains(pan: -1)))
        engine.send(.start(player: 1, sound: b, at: 1, pan: PanGains(pan: -1)))
        let out = renderBlocks(engine, periods: 1, blockSize: 4)
        #expect(out.left[0] == 0.25)
        #expect(abs(out.left[1] - 0.75) < 1e-6)
        #expect(out.left[2] == 0.5)
        #expect(out.left[3] == 0)
    }

    @Test func manyStartsInOneBlockOnOnePlayerEachRestartTheVoice() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 100))
        for f in [3, 10, 11, 40] { engine.send(.start(player: 0, sound: id, at: Frame(f))) }
        let out = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(out.left[3] > 0 && out.left[2] == 0)
        // Each restart plays the sound's first frame again on its exact frame.
        let first = Float(1) / 1000 * PanGains.center.monoLeft
        for f in [3, 10, 11, 40] { #expect(abs(out.left[f] - first) < 1e-7, "frame \(f)") }
        #expect(events(engine).filter { $0.kind == .started }.map(\.frame) == [3, 10, 11, 40])
    }

    @Test func monoPanIsConstantPower() throws {
        for pan: Float in [-1, -0.5, 0, 0.3, 1] {
            let engine = Engine()
            let id = try engine.register(Sound(channels: [[1]], sampleRate: 48000))
            engine.send(.start(player: 0, sound: id, at: 0, gain: Gain(linear: 0.5), pan: PanGains(pan: pan)))
            let out = renderBlocks(engine, periods: 1, blockSize: 1)
            let theta = Double(pan + 1) * Double.pi / 4
            #expect(abs(Double(out.left[0]) - 0.5 * cos(theta)) < 1e-6)
            #expect(abs(Double(out.right[0]) - 0.5 * sin(theta)) < 1e-6)
            #expect(abs(Double(out.left[0] * out.left[0] + out.right[0] * out.right[0]) - 0.25) < 1e-6)
        }
    }

    @Test func stereoPanIsABalance() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[0.8], [0.4]], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: 0.25)))
        engine.send(.start(player: 1, sound: id, at: 1))
        let out = renderBlocks(engine, periods: 1, blockSize: 2)
        #expect(abs(out.left[0] - 0.8 * 0.75) < 1e-6)
        #expect(out.right[0] == 0.4)
        #expect(out.left[1] == 0.8 && out.right[1] == 0.4)
    }

    @Test func decibelGainConverts() {
        #expect(abs(Gain(decibels: -6.0206).linear - 0.5) < 1e-4)
        #expect(Gain(decibels: -.infinity).linear == 0)
        #expect(abs(Gain(linear: 0.25).decibels + 12.0412) < 1e-3)
    }

    @Test(arguments: [0, 1, 3])
    func loopCountNPlaysNPlusOneTimesSeamlessly(loops: Int) throws {
        let engine = Engine()
        let sound = try rampSound(frames: 37)
        let id = try engine.register(sound)
        engine.send(.start(player: 0, sound: id, at: 5, loops: loops, pan: PanGains(pan: -1)))
        let out = renderBlocks(engine, periods: 20, blockSize: 16)
        let once = sound.samples(channel: 0).map { $0 * PanGains(pan: -1).monoLeft }
        let expected = [Float](repeating: 0, count: 5) + Array([[Float]](repeating: once, count: loops + 1).joined())
        #expect(Array(out.left[0..<expected.count]) == expected)
        #expect(out.left[expected.count...].allSatisfy { $0 == 0 })
        let kinds = events(engine).map(\.kind)
        #expect(kinds.filter { $0 == .looped }.count == loops)
        #expect(kinds.last == .finished)
    }

    @Test func loopMinusOneKeepsLooping() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 10))
        engine.send(.start(player: 0, sound: id, at: 0, loops: -1))
        let out = renderBlocks(engine, periods: 100, blockSize: 64)
        #expect(out.left[6399] != 0)
        #expect(engine.activeVoiceCount == 1)
        #expect(events(engine).filter { $0.kind == .looped }.count == 640)
    }

    @Test func voiceEndsMidBlockAndTheRestIsSilent() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 10))
        engine.send(.start(player: 0, sound: id, at: 20))
        let out = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(out.left[29] != 0)
        #expect(out.left[30...].allSatisfy { $0 == 0 })
        let finished = events(engine).first { $0.kind == .finished }
        #expect(finished?.frame == 30)
    }

    @Test func startInThePastPlaysFromWhereItWouldBeAndIsReportedLate() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 100))
        engine.send(.start(player: 0, sound: id, at: 90))
        let out = renderBlocks(engine, periods: 1, blockSize: 64, start: 100)
        // Sample 10 of the sound is due at frame 100 on the device timeline.
        #expect(out.left[0] == 0.011 * PanGains.center.monoLeft)
        let late = events(engine).first { $0.kind == .lateStart }
        #expect(late?.value == 10)
        #expect(engine.lateStartCount == 1)
    }

    @Test func gainRampTakesExactlyTheRequestedFrames() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 1000)], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        engine.send(.setGain(player: 0, Gain(linear: 0), fadeFrames: 100, at: 50))
        let out = renderBlocks(engine, periods: 10, blockSize: 32)
        #expect(out.left[49] == 1)
        #expect(out.left[50] == 1)
        #expect(abs(out.left[100] - 0.5) < 1e-6)
        #expect(out.left[149] > 0)
        #expect(out.left[150...].allSatisfy { $0 == 0 })
    }

    @Test func outputIsIdenticalWhateverTheBlockSize() throws {
        func run(block: Int) throws -> [Float] {
            let engine = Engine()
            let id = try engine.register(rampSound(frames: 300))
            engine.send(.start(player: 0, sound: id, at: 13, loops: 2))
            engine.send(.start(player: 1, sound: id, at: 200, pan: PanGains(pan: 0.4)))
            engine.send(.setGain(player: 0, Gain(linear: 0.2), fadeFrames: 333, at: 100))
            engine.send(.stop(player: 1, at: 600, fadeFrames: 77))
            return renderBlocks(engine, periods: 2048 / block, blockSize: block).left
        }
        let reference = try run(block: 2048)
        for block in [1, 16, 64, 256] { #expect(try run(block: block) == reference, "block \(block)") }
    }

    @Test func stopWithFadeEndsAfterTheFade() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 1000)], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        engine.send(.stop(player: 0, at: 10, fadeFrames: 20))
        let out = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(out.left[10] == 1 && out.left[29] > 0)
        #expect(out.left[30...].allSatisfy { $0 == 0 })
        #expect(events(engine).last == Event(kind: .stopped, player: 0, frame: 30))
    }

    @Test func pauseKeepsThePositionAndSeekMovesIt() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 100))
        let g = PanGains(pan: -1).monoLeft
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        var pause = Command(kind: .pause, player: 0, frame: 5)
        engine.send(pause)
        pause.kind = .resume; pause.frame = 10
        engine.send(pause)
        engine.send(.seek(player: 0, to: 50, at: 12))
        let out = renderBlocks(engine, periods: 1, blockSize: 16).left
        #expect(out[4] == 0.005 * g)
        #expect(out[5..<10].allSatisfy { $0 == 0 })
        #expect(out[10] == 0.006 * g && out[11] == 0.007 * g)
        #expect(out[12] == 0.051 * g)
    }

    @Test func fullScheduleDropsAndReports() throws {
        let engine = Engine(configuration: .init(commandCapacity: 64, scheduleCapacity: 4))
        let id = try engine.register(rampSound(frames: 10))
        for i in 0..<6 { engine.send(.start(player: 0, sound: id, at: Frame(10_000 + i))) }
        _ = renderBlocks(engine, periods: 1, blockSize: 16)
        #expect(engine.droppedCommandCount == 2)
        #expect(events(engine).filter { $0.kind == .commandDropped }.map(\.value) == [10_004, 10_005])
    }
}
