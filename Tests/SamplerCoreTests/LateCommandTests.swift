@testable import SamplerCore
import Testing

/// A pause, resume, seek or rate change that reaches the render thread after its frame has the
/// effect it would have had on time (issue 34): what was heard before it arrived cannot be taken
/// back, but from then on the voice plays what the on-time render plays. Seeded random programs,
/// reproducible: each is rendered with every command on time and with every command after the
/// start arriving one to six periods late; after the last arrival the two are the same.
@Suite struct LateCommandTests {
    static let period = 256
    static let sound = try! Sound(channels: [(0..<400_000).map { Float($0 + 1) / 1_000_000 }], sampleRate: 48000)

    /// The program of `seed`: a start, then pauses, resumes, seeks and rate changes, far enough
    /// apart that each arrives late before the next one's frame; with each command's lateness.
    static func program(seed: UInt64) -> [(command: Command, late: Int)] {
        var random = SeededRandom(state: seed)
        var frame = Frame(random.int(0...300))
        var program: [(Command, Int)] = [(.start(player: 0, sound: SoundID(rawValue: 0), at: frame), 0)]
        var paused = false
        for _ in 0..<10 {
            let late = random.int(period...(6 * period))
            frame += Frame(late + period + random.int(0...3000))
            var c: Command
            switch random.int(0...3) {
            case 0: c = Command(kind: paused ? .resume : .pause, player: 0, frame: frame); paused.toggle()
            case 1: c = .seek(player: 0, to: Frame(random.int(0...50_000)), at: frame)
            default: c = .setRate(player: 0, [0.5, 1, 1.5, 2][random.int(0...3)], at: frame)
            }
            program.append((c, late))
        }
        return program
    }

    /// Renders `program` to `end`, each command sent before the period that holds its frame plus
    /// its lateness (`late`), or its frame (on time).
    static func render(_ program: [(command: Command, late: Int)], late: Bool, end: Frame) -> (samples: [Float], lateCount: Int) {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        _ = try! engine.register(sound)
        var out: [Float] = []
        var next = 0
        var start: Frame = 0
        let l = UnsafeMutablePointer<Float>.allocate(capacity: period), r = UnsafeMutablePointer<Float>.allocate(capacity: period)
        defer { l.deallocate(); r.deallocate() }
        while start < end {
            while next < program.count, program[next].command.frame + Frame(late ? program[next].late : 0) < start + Frame(period) {
                engine.send(program[next].command)
                next += 1
            }
            engine.render(frameCount: period, periodStart: start, left: l, right: r)
            out += (0..<period).map { l[$0] }
            start += Frame(period)
        }
        return (out, engine.lateCommandCount)
    }

    @Test func lateVoiceCommandsLeaveTheVoiceWhereOnTimeOnesDo() {
        var approximated = 0
        for seed in UInt64(1)...100 {
            let program = Self.program(seed: seed)
            let last = program.map { $0.command.frame + Frame($0.late) }.max()!
            // From the period after the last arrival, for a second.
            let from = (Int(last) / Self.period + 1) * Self.period
            let end = Frame(from + 48000)
            let onTime = Self.render(program, late: false, end: end).samples
            let (late, count) = Self.render(program, late: true, end: end)
            approximated += count
            guard count == 0 else { continue }
            let a = Array(onTime[from...]), b = Array(late[from...])
            if a != b {
                let i = (0..<a.count).first { a[$0] != b[$0] }!
                Issue.record("seed \(seed): frame \(from + i) differs: on time \(a[i]), late \(b[i]); program \(program.map { ($0.command.kind, $0.command.frame, $0.late) })")
                return
            }
        }
        // Within one pass of a long sound, without ramps, every late command can be placed.
        #expect(approximated == 0)
    }

    /// A late `setLoops` on a looping voice: the wraps since its frame count against the new
    /// value, as they would have on time.
    @Test(arguments: [(3, 300), (8, 700), (20, 1100), (-1, 900), (0, 250)])
    func aLateSetLoopsCountsTheWrapsSinceItsFrame(loops: Int, late: Int) throws {
        let sound = try Sound(channels: [(0..<100).map { Float($0 + 1) / 1000 }], sampleRate: 48000)
        /// Renders 100 periods of 64 frames, the setLoops sent before the period holding `arrival`.
        func render(arrival: Int) -> [Float] {
            let engine = Engine(configuration: .init(maxPlayers: 1))
            let id = try! engine.register(sound)
            engine.send(.start(player: 0, sound: id, at: 10, loops: 40))
            var out: [Float] = []
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 64), r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            defer { l.deallocate(); r.deallocate() }
            for p in 0..<100 {
                if p == arrival / 64 { engine.send(.setLoops(player: 0, loops, at: 1000)) }
                engine.render(frameCount: 64, periodStart: Frame(p * 64), left: l, right: r)
                out += (0..<64).map { l[$0] }
            }
            #expect(engine.lateCommandCount == 0)
            return out
        }
        let onTime = render(arrival: 1000), delayed = render(arrival: 1000 + late)
        let from = ((1000 + late) / 64 + 1) * 64
        #expect(Array(onTime[from...]) == Array(delayed[from...]))
    }

    /// Late triggers (issue 34): the start takes up its sound where it would be, the declick tail
    /// of the sound it replaces and the choke fade of its group are where they would be, and a
    /// random layer picks what it picks on time.
    @Test(arguments: [1, 100, 190, 330, 900])
    func lateTriggersSoundAsOnTimeOnesFromTheirArrival(late: Int) throws {
        let long = try Sound(channels: [(0..<20_000).map { Float($0 % 500 + 1) / 1000 }], sampleRate: 48000)
        let other = try Sound(channels: [(0..<20_000).map { -Float($0 % 300 + 1) / 700 }], sampleRate: 48000)
        /// Renders 60 periods of 128 frames; the triggers due on 3000 and 3100 are sent before
        /// the period holding `arrival`.
        func render(arrival: Int) -> ([Float], Int) {
            let engine = Engine(configuration: .init(maxPlayers: 4))
            let a = try! engine.register(long), b = try! engine.register(other)
            engine.setInstruments([
                InstrumentDefinition(firstPlayer: 0, chokeGroup: 1, layers: [InstrumentLayer(sounds: [a, b], selection: .random(seed: 3))],
                                     declickFrames: 200, chokeFadeFrames: 400),
                InstrumentDefinition(firstPlayer: 1, pan: 0.5, chokeGroup: 1, layers: [InstrumentLayer(sounds: [b])]),
            ])
            engine.send(.trigger(instrument: 0, velocity: 100, at: 1000))
            var out: [Float] = []
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 128), r = UnsafeMutablePointer<Float>.allocate(capacity: 128)
            defer { l.deallocate(); r.deallocate() }
            for p in 0..<60 {
                if p == arrival / 128 {
                    engine.send(.trigger(instrument: 0, velocity: 90, at: 3000))
                    engine.send(.trigger(instrument: 1, velocity: 110, at: 3100))
                }
                engine.render(frameCount: 128, periodStart: Frame(p * 128), left: l, right: r)
                out += (0..<128).map { l[$0] }
            }
            return (out, engine.lateCommandCount)
        }
        let (onTime, _) = render(arrival: 2900)
        let (delayed, counted) = render(arrival: 3100 + late)
        #expect(counted == 0)
        let from = ((3100 + late) / 128 + 1) * 128
        #expect(Array(onTime[from...]) == Array(delayed[from...]))
    }

    /// A command that arrives after a later start on its player was meant for the sound before
    /// that start: it is refused and counted, and the new sound plays as on time (a stop for
    /// the old sound does not stop the new one).
    @Test(arguments: [Command.stop(player: 0, at: 3000), .setGain(player: 0, Gain(linear: 0.1), at: 3000),
                      Command(kind: .pause, player: 0, frame: 3000), .seek(player: 0, to: 10, at: 3000),
                      .setRate(player: 0, 2, at: 3000), .setLoops(player: 0, 5, at: 3000)])
    func aCommandForTheSoundBeforeALaterStartIsRefused(command: Command) throws {
        func render(arrival: Int) throws -> ([Float], Int) {
            let engine = Engine(configuration: .init(maxPlayers: 1))
            let id = try engine.register(rampSound(frames: 20_000))
            engine.send(.start(player: 0, sound: id, at: 0))
            engine.send(.start(player: 0, sound: id, at: 5000, from: 100))
            var out: [Float] = []
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
            defer { l.deallocate(); r.deallocate() }
            for p in 0..<40 {
                if p == arrival / 256 { engine.send(command) }
                engine.render(frameCount: 256, periodStart: Frame(p * 256), left: l, right: r)
                out += (0..<256).map { l[$0] }
            }
            return (out, engine.lateCommandCount)
        }
        let (onTime, none) = try render(arrival: 2900)
        let (late, counted) = try render(arrival: 6000)
        #expect(none == 0 && counted == 1)
        #expect(Array(onTime[6144...]) == Array(late[6144...]))
    }

    /// A late gain ramp on a voice paused since its frame: advanced only over what the voice
    /// played before its pause, from the level it had on the ramp's frame (mid-way through an
    /// earlier ramp), as on time.
    @Test func aLateGainChangeOnAVoicePausedSinceItsFrameIsPlacedAsOnTime() throws {
        func run(late: Bool) throws -> ([Float], Int) {
            let engine = Engine(configuration: .init(maxPlayers: 1))
            let id = try engine.register(Sound(channels: [[Float](repeating: 0.5, count: 100_000)], sampleRate: 48000))
            engine.send(.start(player: 0, sound: id, at: 0))
            engine.send(.setGain(player: 0, Gain(linear: 0), fadeFrames: 1000, at: 100))
            engine.send(Command(kind: .pause, player: 0, frame: 640))
            let gain = Command.setGain(player: 0, Gain(linear: 1), fadeFrames: 1000, at: 400)
            if !late { engine.send(gain) }
            var out = renderBlocks(engine, periods: 11, blockSize: 64, start: 0).left  // to 704
            if late { engine.send(gain) }
            engine.send(Command(kind: .resume, player: 0, frame: 768))
            out += renderBlocks(engine, periods: 30, blockSize: 64, start: 704).left
            return (out, engine.lateCommandCount)
        }
        let (onTime, _) = try run(late: false), (late, counted) = try run(late: true)
        #expect(counted == 0)
        #expect(Array(onTime[704...]) == Array(late[704...]))
    }
}
