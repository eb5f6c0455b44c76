@testable import SamplerCore
import Testing

/// A new device clock (a reconnected server, issue 34): nothing made on the old clock plays on
/// the new one, and what is dropped is reported.
@Suite struct NewClockTests {
    @Test func aStartOfTheOldClockIsDroppedAndReported() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(rampSound(frames: 1000))
        _ = renderBlocks(engine, periods: 4, blockSize: 64, start: 1_000_000)
        // Made on the old clock: an hour ahead of the new one's first frames.
        engine.send(.start(player: 0, sound: id, at: 1_000_500, tag: 7))
        engine.beginNewClock()
        engine.send(.start(player: 1, sound: id, at: 100, tag: 8))
        let out = renderBlocks(engine, periods: 4, blockSize: 64, start: 0)
        let reported = events(engine).filter { $0.kind == .staleCommand }
        #expect(reported.map(\.tag) == [7] && reported.first?.value == 1_000_500)
        #expect(engine.staleCommandCount == 1)
        #expect(firstNonZero(out.left) == 100)
    }

    /// A command stamped with an older clock that reaches the render thread after the reset is
    /// dropped, not placed on the new clock's frames.
    @Test func aCommandStampedWithAnOlderClockIsDropped() throws {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let id = try engine.register(rampSound(frames: 1000))
        engine.beginNewClock()
        var stale = Command.start(player: 0, sound: id, at: 10, tag: 3)
        stale.epoch = 0
        let pushed = engine.commands.push(stale)
        #expect(pushed)
        let out = renderBlocks(engine, periods: 2, blockSize: 64)
        #expect(out.left.allSatisfy { $0 == 0 })
        #expect(events(engine).contains { $0.kind == .staleCommand && $0.tag == 3 })
    }

    /// When the queue has no room for the new clock's reset, nothing else is sent before it.
    @Test func theResetGoesFirstWhenTheQueueWasFull() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2, commandCapacity: 4))
        let id = try engine.register(rampSound(frames: 1000))
        while engine.send(.setGain(player: 1, .unity)) {}
        #expect(!engine.beginNewClock())
        #expect(!engine.send(.start(player: 0, sound: id, at: 10)))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 5000)
        #expect(engine.send(.start(player: 0, sound: id, at: 100)))
        let out = renderBlocks(engine, periods: 3, blockSize: 64)
        #expect(firstNonZero(out.left) == 100)
        #expect(engine.staleCommandCount == 0)
    }
}
