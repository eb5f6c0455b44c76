import Foundation
import Testing
@testable import SamplerCore

@Suite struct VoiceFeatureTests {
    func constantSound(_ frames: Int, _ value: Float = 1) throws -> Sound {
        try Sound(channels: [[Float](repeating: value, count: frames)], sampleRate: 48000)
    }

    @Test(arguments: [(2.0, 500), (0.5, 2000), (1.5, 667)])
    func rateChangesTheLength(rate: Double, expectedFrames: Int) throws {
        let engine = Engine()
        let id = try engine.register(constantSound(1000))
        engine.send(.start(player: 0, sound: id, at: 10, pan: PanGains(pan: -1), rate: rate))
        let out = renderBlocks(engine, periods: 40, blockSize: 64).left
        let sounding = out.filter { $0 != 0 }.count
        #expect(abs(sounding - expectedFrames) <= 1, "rate \(rate): \(sounding) frames")
        #expect(firstNonZero(out) == 10)
        #expect(events(engine).last?.kind == .finished)
    }

    @Test func halfSpeedInterpolatesBetweenFrames() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[0, 1, 0, -1]], sampleRate: 48000))
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1), rate: 0.5))
        let out = renderBlocks(engine, periods: 1, blockSize: 8).left
        #expect(out == [0, 0.5, 1, 0.5, 0, -0.5, -1, -0.5])
    }

    @Test func rateTwoLoopsSeamlessly() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 10))
        engine.send(.start(player: 0, sound: id, at: 0, loops: 2, pan: PanGains(pan: -1), rate: 2))
        let out = renderBlocks(engine, periods: 1, blockSize: 32).left
        // Every second frame, three times over: 15 frames, then silence.
        let once: [Float] = [1, 3, 5, 7, 9].map { Float($0) / 1000 }
        #expect(Array(out[0..<15]) == once + once + once)
        #expect(out[15...].allSatisfy { $0 == 0 })
    }

    @Test func metersMeasureAKnownSine() throws {
        let engine = Engine()
        let amplitude: Float = 0.5
        let sine = (0..<48000).map { amplitude * Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
        let id = try engine.register(Sound(channels: [sine], sampleRate: 48000))
        engine.send(.setMetering(player: 0, true))
        engine.send(.start(player: 0, sound: id, at: 0, loops: -1, pan: PanGains(pan: -1)))
        _ = renderBlocks(engine, periods: 10, blockSize: 480)
        _ = engine.takeMeters(ofPlayer: 0)  // start a fresh accumulation
        _ = renderBlocks(engine, periods: 100, blockSize: 480, start: 4800)
        let reading = engine.takeMeters(ofPlayer: 0)
        let expectedAverage = 20 * log10(Double(amplitude) / 2.0.squareRoot())
        #expect(abs(reading.averagePower(channel: 0) - expectedAverage) < 0.1)
        #expect(abs(reading.peakPower(channel: 0) - 20 * log10(Double(amplitude))) < 0.1)
        #expect(reading.averagePower(channel: 1) == -160)
    }

    @Test func retriggerWithDeclickFadesTheOldVoiceWhileTheNewStartsOnItsFrame() throws {
        let engine = Engine()
        let id = try engine.register(constantSound(1000, 0.5))
        engine.send(.start(player: 0, sound: id, at: 0, pan: PanGains(pan: -1)))
        engine.send(.start(player: 0, sound: id, at: 100, pan: PanGains(pan: -1), declickFrames: 50))
        let out = renderBlocks(engine, periods: 4, blockSize: 64).left
        #expect(out[99] == 0.5)
        #expect(out[100] == 1.0)          // old at full level + new
        #expect(abs(out[125] - 0.75) < 1e-6)  // old half way down its fade
        #expect(out[150] == 0.5)          // old gone after exactly 50 frames
        #expect(events(engine).filter { $0.kind == .started }.map(\.frame) == [0, 100])
    }

    @Test func resetForgetsPendingCommandsAndSilencesEverything() throws {
        let engine = Engine()
        let id = try engine.register(constantSound(10_000))
        engine.send(.start(player: 0, sound: id, at: 0))
        engine.send(.start(player: 1, sound: id, at: 5_000))
        let first = renderBlocks(engine, periods: 1, blockSize: 100).left
        engine.send(Command(kind: .reset, player: 0, frame: Command.immediately))
        let rest = renderBlocks(engine, periods: 99, blockSize: 100, start: 100).left
        #expect(first[99] != 0)
        #expect(rest.allSatisfy { $0 == 0 })
    }

    @Test func positionAndStateArePublishedEveryPeriod() throws {
        let engine = Engine()
        let id = try engine.register(constantSound(1000))
        engine.send(.start(player: 3, sound: id, at: 10))
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(engine.position(ofPlayer: 3) == 54)
        #expect(engine.isActive(player: 3))
        engine.send(Command(kind: .pause, player: 3, frame: 64))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 64)
        #expect(engine.position(ofPlayer: 3) == 54 && engine.isPaused(player: 3))
    }
}
