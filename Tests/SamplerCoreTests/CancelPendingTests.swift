import Foundation
import Testing
@testable import SamplerCore

@Suite struct CancelPendingTests {
    @Test func cancelPendingForgetsOnlyThatPlayersFutureCommands() throws {
        let engine = Engine()
        let id = try engine.register(rampSound(frames: 5))
        engine.send(.start(player: 0, sound: id, at: 500))
        engine.send(.start(player: 1, sound: id, at: 600))
        engine.send(.start(player: 0, sound: id, at: 700))
        engine.send(Command.cancelPending(player: 0))
        engine.send(.start(player: 0, sound: id, at: 800))  // sent after the cancel: kept
        _ = renderBlocks(engine, periods: 10, blockSize: 100)
        #expect(events(engine).filter { $0.kind == .started }.map(\.frame) == [600, 800])
    }
}
