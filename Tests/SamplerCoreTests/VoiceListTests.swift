import Testing
@testable import SamplerCore

/// The render thread walks a sorted list of the sounding voices instead of every player slot:
/// the output must not depend on the order voices started in, idle players must keep publishing
/// the right status, and the voice record must stay on whole cache lines.
@Suite struct VoiceListTests {
    @Test func aVoiceIsWholeCacheLinesWithThePlainPathsFieldsInTheFirst() {
        #expect(MemoryLayout<Voice>.stride % 64 == 0)
        for field: PartialKeyPath<Voice> in [\.position, \.frames, \.left, \.right, \.level, \.panLeft, \.panRight,
                                           \.rampFramesLeft, \.isActive, \.isPaused, \.generalPath, \.isStreamed, \.isVarispeed] {
            #expect(MemoryLayout<Voice>.offset(of: field)! < 64)
        }
        #expect(MemoryLayout<Voice>.offset(of: \Voice.rate)! >= 64)
        // `Voice.isSoundingStreamIntoMainMix` reads these as one word.
        let flags: [(PartialKeyPath<Voice>, Int)] = [(\.isActive, 0), (\.isPaused, 1), (\.generalPath, 2), (\.isStreamed, 5),
                                                     (\.isVarispeed, 6), (\.output, 7)]
        for (field, byte) in flags { #expect(MemoryLayout<Voice>.offset(of: field)! == Voice.flagsOffset + byte) }
    }

    /// The one-word checks of a voice's flags agree with the flags one by one.
    @Test func theOneWordFlagCheckAgreesWithTheFlags() {
        let v = UnsafeMutablePointer<Voice>.allocate(capacity: 1)
        defer { v.deallocate() }
        for bits in 0..<512 {
            v.initialize(to: Voice())
            v.pointee.isActive = bits & 1 != 0
            v.pointee.isPaused = bits & 2 != 0
            v.pointee.isMetered = bits & 4 != 0
            v.pointee.stopsAfterRamp = bits & 8 != 0
            v.pointee.isStereo = bits & 16 != 0
            v.pointee.isStreamed = bits & 32 != 0
            v.pointee.isVarispeed = bits & 64 != 0
            v.pointee.output = bits & 128 != 0 ? UInt8(1 + bits % 7) : 0
            v.pointee.isFiltered = bits & 256 != 0
            let expected = v.pointee.isActive && !v.pointee.isPaused && !v.pointee.isMetered && !v.pointee.isFiltered && v.pointee.isStreamed
                && v.pointee.output == 0
            #expect(Voice.isSoundingStreamIntoMainMix(v) == expected)
            let plain = v.pointee.isActive && !v.pointee.isPaused && !v.pointee.isMetered && !v.pointee.isFiltered && !v.pointee.isStreamed
                && !v.pointee.isVarispeed && v.pointee.output == 0
            #expect(Voice.isSoundingAtRateOneIntoMainMix(v) == plain)
        }
    }

    @Test func keysStaySortedWhateverTheInsertionOrder() {
        let list = UnsafeVoiceList.allocate(players: 64)
        defer { list.deallocate() }
        var generator = SystemRandomNumberGenerator()
        var inserted = Set<UInt32>()
        for _ in 0..<200 {
            let player = Int.random(in: 0..<64, using: &generator), tail = Bool.random(using: &generator)
            list.insert(player: player, tail: tail)
            inserted.insert(UInt32(2 * player + (tail ? 1 : 0)))
        }
        let keys = (0..<list.count).map { list.key(at: $0) }
        #expect(keys.map { UInt32($0.rawValue) } == inserted.sorted())
        // Dropping every other key and re-inserting it restores the same list.
        var kept = 0
        for i in 0..<list.count {
            if i % 2 == 0 { list.keep(i, at: kept); kept += 1 } else { list.drop(i) }
        }
        list.truncate(kept)
        for key in keys { list.insert(player: key.player, tail: key.isTail) }
        #expect((0..<list.count).map { list.key(at: $0) } == keys)
    }

    /// Values whose float sum depends on the order of addition: the engine must add voices in
    /// player order, however they were started.
    @Test func theMixIsSummedInPlayerOrderWhateverTheStartOrder() throws {
        let values: [Float] = [1e8, 1, -1e8, 0.5, 3.25e-3, -7, 1e-4, 12345.678]
        func mix(startOrder: [Int]) throws -> [Float] {
            let engine = Engine()
            for p in startOrder {
                let id = try engine.register(Sound(channels: [[Float](repeating: values[p], count: 256)], sampleRate: 48000))
                engine.send(.start(player: p, sound: id, at: 0, pan: PanGains(monoLeft: 1, monoRight: 1, stereoLeft: 1, stereoRight: 1)))
            }
            return renderBlocks(engine, periods: 2, blockSize: 64).left
        }
        var expected: Float = 0
        for v in values { expected += v }
        let inOrder = try mix(startOrder: Array(0..<values.count))
        #expect(inOrder[0] == expected)
        #expect(try mix(startOrder: Array((0..<values.count).reversed())) == inOrder)
        #expect(try mix(startOrder: [3, 7, 0, 5, 1, 6, 2, 4]) == inOrder)
    }

    @Test func aFinishedPlayerPublishesItsEndOnceAndStaysIdle() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 100)], sampleRate: 48000))
        engine.send(.start(player: 5, sound: id, at: 0))
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(engine.isActive(player: 5) && engine.position(ofPlayer: 5) == 64 && engine.activeVoiceCount == 1)
        _ = renderBlocks(engine, periods: 3, blockSize: 64, start: 64)
        #expect(!engine.isActive(player: 5) && engine.position(ofPlayer: 5) == 100 && engine.activeVoiceCount == 0)
        #expect(engine.voiceList.count == 0)
    }

    @Test func commandsOnAnIdlePlayerArePublished() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 1000)], sampleRate: 48000))
        engine.send(.start(player: 2, sound: id, at: 0))
        engine.send(.stop(player: 2, at: 10))
        _ = renderBlocks(engine, periods: 2, blockSize: 64)
        #expect(!engine.isActive(player: 2) && engine.position(ofPlayer: 2) == 10)
        engine.send(.seek(player: 2, to: 700))
        engine.send(Command(kind: .pause, player: 2, frame: Command.immediately))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 128)
        #expect(engine.position(ofPlayer: 2) == 700 && engine.isPaused(player: 2) && !engine.isActive(player: 2))
    }

    @Test func aMeteredIdlePlayerKeepsCountingFrames() throws {
        let engine = Engine()
        engine.send(.setMetering(player: 9, true))
        _ = renderBlocks(engine, periods: 4, blockSize: 64)
        #expect(engine.takeMeters(ofPlayer: 9).frames == 256)
        _ = renderBlocks(engine, periods: 2, blockSize: 64, start: 256)
        #expect(engine.takeMeters(ofPlayer: 9).frames == 128)
    }

    @Test func stopAllAndResetEmptyTheList() throws {
        let engine = Engine()
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 10_000)], sampleRate: 48000))
        for p in [7, 1, 4] { engine.send(.start(player: p, sound: id, at: 0, loops: -1)) }
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(engine.activeVoiceCount == 3 && engine.voiceList.count == 3)
        engine.send(Command(kind: .stopAll, player: 0, frame: 64))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 64)
        let stopped = events(engine).filter { $0.kind == .stopped }.map(\.player)
        #expect(stopped == [1, 4, 7])
        #expect(engine.activeVoiceCount == 0 && engine.voiceList.count == 0)
        for p in [3, 0] { engine.send(.start(player: p, sound: id, at: 128, loops: -1)) }
        engine.send(Command(kind: .reset, player: 0, frame: Command.immediately))
        let out = renderBlocks(engine, periods: 2, blockSize: 64, start: 128)
        #expect(out.left.allSatisfy { $0 == 0 } && engine.voiceList.count == 0)
    }
}
