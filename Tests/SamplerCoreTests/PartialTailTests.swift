import Glibc
import Synchronization
import Testing
@testable import SamplerCore

/// Tails streamed per voice are read only as far as their voices play: the render thread says
/// each period how far a voice may read by the end of the next one, and a voice that reaches the
/// end of what was read goes on once more is read. A filler that reads exactly that far (never
/// ahead) gives the bits of the whole sound in memory, at any rate, with the rate changed under
/// way, and a voice that stops leaves the rest of its tail unread.
@Suite struct PartialTailTests {
    /// Where `a` and `b` first differ (nil: equal), without printing them.
    static func firstDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Int? {
        if a.count != b.count { return min(a.count, b.count) }
        return zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    }

    static let frames = 40_000
    static let headFrames = 1_025

    /// A stereo noise sound of `frames` frames.
    static func noise() throws -> Sound {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max) * 0.5
        }
        let left = (0..<frames).map { _ in next() }, right = (0..<frames).map { _ in next() }
        return try Sound(channels: [left, right], sampleRate: 48_000)
    }

    /// A filler that reads each tail exactly as far as the render thread asks, from `whole`;
    /// `short` frames less for requests `shortFor` says (a disk that falls behind). It writes
    /// frame j of a tail at slot j mod the buffer's capacity (the ring's second mapping takes
    /// what runs past its end), never a capacity past the floor.
    final class ExactFiller {
        let engine: Engine
        let whole: Sound
        var active: [TailRequest] = []
        var written: [Int32: Int] = [:]
        var framesRead = 0
        var abandoned = 0

        init(engine: Engine, whole: Sound) {
            self.engine = engine
            self.whole = whole
        }

        func serve(short: Int = 0) {
            while let request = engine.nextTailRequest() {
                active.append(request)
                written[request.buffer] = 0
            }
            var still: [TailRequest] = []
            for request in active {
                let need = engine.tailNeed(of: request)
                if need.abandoned {
                    abandoned += 1
                    engine.finishTailRequest(request)
                    continue
                }
                let length = engine.tailLength(of: request)
                let memory = engine.tailBufferMemory(Int(request.buffer))
                let target = max(0, min(length, need.frames - short, need.floor + memory.capacity))
                let from = written[request.buffer] ?? 0
                if target > from {
                    let at = Int(request.from)
                    var j = from
                    while j < target {
                        let n = min(target - j, memory.capacity)
                        (memory.left + j % memory.capacity).update(from: whole.left + at + j, count: n)
                        (memory.right + j % memory.capacity).update(from: whole.right + at + j, count: n)
                        j += n
                    }
                    framesRead += target - from
                    written[request.buffer] = target
                    engine.publishTailFrames(request, frames: target, peak: whole.peak)
                }
                if target == length {
                    engine.finishTailRequest(request)
                } else {
                    still.append(request)
                }
            }
            active = still
        }
    }

    /// Two engines, one playing `whole`, one its head with the tail streamed; `commands` sent to
    /// both (the sound's id filled in), rendered in 256-frame blocks for `frames` frames.
    static func renderBoth(frames: Int, capacity: Int = Self.frames, short: (Int) -> Int = { _ in 0 },
                           commands: (SoundID) -> [Command]) throws -> (whole: [Float], streamed: [Float], engine: Engine, filler: ExactFiller) {
        let whole = try noise()
        let reference = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        let wholeID = try reference.register(whole)
        let engine = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        let head = Sound(slicing: whole, from: 0, count: headFrames)
        let headID = try engine.register(head, tail: TailSource(id: 0, frames: Self.frames, peak: .infinity))
        try engine.attachTailBuffers(count: 4, capacity: capacity, stereo: true)
        for c in commands(wholeID) { reference.send(c) }
        for c in commands(headID) { engine.send(c) }
        let filler = ExactFiller(engine: engine, whole: whole)
        var a: [Float] = [], b: [Float] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { l.deallocate(); r.deallocate() }
        var at: Frame = 0
        var block = 0
        while at < Frame(frames) {
            reference.render(frameCount: 256, periodStart: at, left: l, right: r)
            a += UnsafeBufferPointer(start: l, count: 256)
            a += UnsafeBufferPointer(start: r, count: 256)
            filler.serve(short: short(block))
            engine.render(frameCount: 256, periodStart: at, left: l, right: r)
            b += UnsafeBufferPointer(start: l, count: 256)
            b += UnsafeBufferPointer(start: r, count: 256)
            reference.drainEvents { _ in }
            engine.drainEvents { _ in }
            at += 256
            block += 1
        }
        return (a, b, engine, filler)
    }

    /// Tail buffers the system cannot map are an error, not a trap, and leave the engine
    /// without any (it may attach them again).
    @Test func tailBuffersTheSystemRefusesAreAnError() throws {
        let engine = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        #expect(throws: EngineError.self) { try engine.attachTailBuffers(count: 2, capacity: Int.max / 8, stereo: true) }
        #expect(engine.tailBufferShape.count == 0)
        try engine.attachTailBuffers(count: 2, capacity: 48_000, stereo: true)
        // Rings of whole pages (mapped twice).
        let page = sysconf(Int32(_SC_PAGESIZE)) / 4
        #expect(engine.tailBufferShape == (2, (48_000 + page - 1) / page * page, true))
    }

    /// A tail ten times as long as its ring: the filler writes each frame over one the voice
    /// has played, never more than a ring's length past where the voice is, and the voice plays
    /// the bits of the whole sound in memory at any rate.
    @Test func aTailLongerThanItsRingPlaysAsTheWholeSound() throws {
        for rate in [1.0, 0.61, 1.5, 3.7] {
            let run = try Self.renderBoth(frames: 20_480, capacity: 4_096) { id in
                [.start(player: 0, sound: id, at: 100, rate: rate),
                 .setRate(player: 0, 4, at: 4_000),
                 .setRate(player: 0, 0.25, at: 10_000)]
            }
            #expect(run.engine.tailBufferShape.capacity == 4_096)
            #expect(run.engine.tailUnderrunCount == 0, "rate \(rate)")
            #expect(run.filler.framesRead > 3 * 4_096, "rate \(rate): the ring wrapped")
            let first = Self.firstDifference(run.whole[...], run.streamed[...])
            #expect(first == nil, "rate \(rate): differs from sample \(first ?? -1)")
        }
    }

    /// The filler writes a ring through one of its two mappings and the voice reads through
    /// either: every page the filler published is mapped at both addresses by then, so the render
    /// thread takes no page fault on a tail (counted by the kernel for this thread, over every
    /// block from the fourth on, with the tail wrapping its ring ten times).
    @Test func theRenderThreadTakesNoPageFaultOnARing() throws {
        func faults() -> Int {
            var usage = rusage()
            // RUSAGE_THREAD
            getrusage(__rusage_who_t(1), &usage)
            return usage.ru_minflt
        }
        let whole = try Self.noise()
        let engine = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        let head = Sound(slicing: whole, from: 0, count: Self.headFrames)
        let id = try engine.register(head, tail: TailSource(id: 0, frames: Self.frames, peak: .infinity))
        try engine.attachTailBuffers(count: 4, capacity: 4_096, stereo: true)
        engine.send(.start(player: 0, sound: id, at: 0))
        let filler = ExactFiller(engine: engine, whole: whole)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { l.deallocate(); r.deallocate() }
        var faulted = 0
        for k in 0..<150 {
            filler.serve()
            let before = faults()
            engine.render(frameCount: 256, periodStart: Frame(k * 256), left: l, right: r)
            if k >= 3 { faulted += faults() - before }
            engine.drainEvents { _ in }
        }
        #expect(engine.tailUnderrunCount == 0)
        #expect(filler.framesRead > 9 * 4_096)
        #expect(faulted == 0)
    }

    /// In a ring that has wrapped, a seek back to where the voice was at the period's start
    /// plays as in memory; one further back (the filler may have written over it) ends the voice
    /// there (counted), silent, never playing other frames.
    @Test func aSeekBackInARingGoesNoFurtherThanItsFloor() throws {
        let within = try Self.renderBoth(frames: 16_384, capacity: 4_096) { id in
            [.start(player: 0, sound: id, at: 0), .seek(player: 0, to: 12_290, at: 12_400)]
        }
        #expect(within.engine.tailUnderrunCount == 0)
        let first = Self.firstDifference(within.whole[...], within.streamed[...])
        #expect(first == nil, "differs from sample \(first ?? -1)")
        let before = try Self.renderBoth(frames: 16_384, capacity: 4_096) { id in
            [.start(player: 0, sound: id, at: 0), .seek(player: 0, to: 9_000, at: 12_400)]
        }
        #expect(before.engine.tailUnderrunCount == 1)
        // Blocks of 256 frames, left then right: the seek's block is the 48th.
        let cut = 2 * 12_288
        #expect(Self.firstDifference(before.whole[0..<cut], before.streamed[0..<cut]) == nil)
        #expect(before.streamed[(cut + 2 * 256)...].allSatisfy { $0 == 0 } && before.whole[(cut + 2 * 256)...].contains { $0 != 0 })
    }

    @Test func aTailReadOnlyAsFarAsEachPeriodNeedsPlaysAsTheWholeSoundAtAnyRate() throws {
        for rate in [1.0, 0.61, 1.5, 3.7] {
            let run = try Self.renderBoth(frames: 20_480) { id in
                [.start(player: 0, sound: id, at: 100, rate: rate),
                 .setRate(player: 0, 4, at: 4_000),
                 .setRate(player: 0, 0.25, at: 6_000)]
            }
            #expect(run.engine.tailUnderrunCount == 0, "rate \(rate)")
            #expect(run.whole.contains { $0 != 0 })
            let first = zip(run.whole, run.streamed).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(first == nil, "rate \(rate): differs from sample \(first ?? -1)")
        }
    }

    @Test func aStoppedVoiceLeavesTheRestOfItsTailUnread() throws {
        let run = try Self.renderBoth(frames: 20_480) { id in
            [.start(player: 0, sound: id, at: 0), .stop(player: 0, at: 3_000)]
        }
        #expect(Self.firstDifference(run.whole[...], run.streamed[...]) == nil)
        #expect(run.filler.abandoned == 1)
        // Up to the stop, and two periods at the fastest a voice may be told to play beyond it.
        #expect(run.filler.framesRead > 3_000 - Self.headFrames && run.filler.framesRead < 3_000 + 2 * 256 * 4 + 8)
        #expect(run.filler.active.isEmpty)
    }

    /// A bend up four octaves on an instrument's voice, sent while the voice plays: the voice plays
    /// sixteen times as fast from the bend's frame, and the tail was read ahead of it.
    @Test func aBendThatSpeedsTheVoiceUpFindsItsTailRead() throws {
        func instrument(_ id: SoundID) -> InstrumentDefinition {
            var d = InstrumentDefinition(firstPlayer: 0, voiceCount: 1, loops: 0, layers: [InstrumentLayer(sounds: [id])], declickFrames: 0)
            d.bendUp = 4_800
            return d
        }
        let whole = try Self.noise()
        let reference = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        let wholeID = try reference.register(whole)
        reference.setInstruments([instrument(wholeID)])
        let engine = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        let headID = try engine.register(Sound(slicing: whole, from: 0, count: Self.headFrames),
                                          tail: TailSource(id: 0, frames: Self.frames, peak: .infinity))
        try engine.attachTailBuffers(count: 4, capacity: Self.frames, stereo: true)
        engine.setInstruments([instrument(headID)])
        for e in [reference, engine] {
            e.send(.trigger(instrument: 0, velocity: 127, at: 10))
            e.send(.channelMessage(Command.ChannelMessage.pitchBend, channel: 1, value: 1, at: 2_048))
        }
        let filler = ExactFiller(engine: engine, whole: whole)
        var a: [Float] = [], b: [Float] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { l.deallocate(); r.deallocate() }
        for k in 0..<40 {
            reference.render(frameCount: 256, periodStart: Frame(k * 256), left: l, right: r)
            a += UnsafeBufferPointer(start: l, count: 256)
            filler.serve()
            engine.render(frameCount: 256, periodStart: Frame(k * 256), left: l, right: r)
            b += UnsafeBufferPointer(start: l, count: 256)
        }
        // The bend is heard: without it the voice plays on at rate 1.
        let unbent = Engine(configuration: .init(maxPlayers: 4, maxSounds: 16))
        unbent.setInstruments([instrument(try unbent.register(whole))])
        unbent.send(.trigger(instrument: 0, velocity: 127, at: 10))
        var c: [Float] = []
        for k in 0..<40 {
            unbent.render(frameCount: 256, periodStart: Frame(k * 256), left: l, right: r)
            c += UnsafeBufferPointer(start: l, count: 256)
        }
        #expect(Self.firstDifference(a[0..<2_048], c[0..<2_048]) == nil && Self.firstDifference(a[...], c[...]) != nil)
        #expect(engine.tailUnderrunCount == 0)
        #expect(a.contains { $0 != 0 })
        let first = Self.firstDifference(a[...], b[...])
        #expect(first == nil, "differs from frame \(first ?? -1)")
    }

    /// A seek far into a tail not read that far: the voice ends there (counted), silent, never
    /// playing from the end of what was read instead.
    @Test func aSeekPastWhatWasReadIsSilenceNotAShift() throws {
        let run = try Self.renderBoth(frames: 10_240) { id in
            [.start(player: 0, sound: id, at: 0), .seek(player: 0, to: 30_000, at: 4_096)]
        }
        #expect(run.engine.tailUnderrunCount == 1)
        #expect(Self.firstDifference(run.whole[0..<(2 * 4_096)], run.streamed[0..<(2 * 4_096)]) == nil)
        #expect(run.streamed[(2 * 4_096)...].allSatisfy { $0 == 0 } && run.whole[(2 * 4_096)...].contains { $0 != 0 })
    }

    /// A seek back into the head of a voice playing its tail: its buffer holds nothing there, so
    /// the voice ends (counted), silent, never reading before its buffer.
    @Test func aSeekBackIntoTheHeadFromTheTailEndsTheVoice() throws {
        let run = try Self.renderBoth(frames: 8_192) { id in
            [.start(player: 0, sound: id, at: 0), .seek(player: 0, to: 100, at: 3_072)]
        }
        #expect(run.engine.tailUnderrunCount == 1)
        #expect(Self.firstDifference(run.whole[0..<(2 * 3_072)], run.streamed[0..<(2 * 3_072)]) == nil)
        #expect(run.streamed[(2 * 3_072)...].allSatisfy { $0 == 0 })
    }

    /// Repeats asked of a voice playing its tail are not taken: it plays its sound once (its
    /// buffer holds nothing before the tail to wrap to), as the whole sound told to play once.
    @Test func aVoiceInItsTailPlaysItOnceWhateverItsLoopsSay() throws {
        let once = try Self.renderBoth(frames: 45_056) { id in [.start(player: 0, sound: id, at: 0)] }
        let looped = try Self.renderBoth(frames: 45_056) { id in
            [.start(player: 0, sound: id, at: 0), .setLoops(player: 0, 3, at: 3_072)]
        }
        let first = Self.firstDifference(looped.streamed[...], once.whole[...])
        #expect(first == nil, "differs from sample \(first ?? -1)")
        #expect(looped.engine.tailUnderrunCount == 0)
    }

    /// A disk that falls behind for one period: the voice ends where its tail was read (counted),
    /// every frame before it as in memory, silence after, never a shift.
    @Test func aTailReadTooLateEndsItsVoiceWhereItWasRead() throws {
        let run = try Self.renderBoth(frames: 10_240, short: { $0 >= 12 ? 2_000 : 0 }) { id in
            [.start(player: 0, sound: id, at: 0)]
        }
        #expect(run.engine.tailUnderrunCount == 1)
        // The first block whose left channel is silent here and not in memory.
        func silentHere(_ k: Int) -> Bool {
            let range = (512 * k)..<(512 * k + 256)
            let streamed: ArraySlice<Float> = run.streamed[range], whole: ArraySlice<Float> = run.whole[range]
            return streamed.allSatisfy { $0 == 0 } && whole.contains { $0 != 0 }
        }
        let blocks = run.streamed.count / 512
        let end = try #require((0..<blocks).first(where: silentHere))
        #expect(end >= 12)
        #expect(Self.firstDifference(run.whole[0..<(512 * (end - 1))], run.streamed[0..<(512 * (end - 1))]) == nil)
        #expect(run.streamed[(512 * end)...].allSatisfy { $0 == 0 })
    }
}
