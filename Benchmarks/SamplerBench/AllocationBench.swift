import MallocInterposerSwift
import SamplerCore

/// 3: allocations in the render path. malloc-interposer counts every allocation of the process
/// while hooked; it is hooked around `Engine.render` calls only (what JACK's process callback
/// runs, besides two RT-safe JACK calls), while the control side sends every kind of command and
/// drains the events in between, unhooked. Returns the count (which must be 0).
func benchAllocations(pool: SoundPool, report: Report) -> Int {
    report.section("3. Allocations and locks in the render path")
    // Without this check a zero below could mean nothing was being counted.
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.reset()
    MallocInterposerSwift.hook()
    var arrays: [[Int]] = []
    for i in 0..<100 { arrays.append([i, i + 1]) }
    MallocInterposerSwift.unhook()
    let seen = MallocInterposerSwift.getStatistics().mallocCount
    guard seen >= 100, arrays.count == 100 else {
        report.fail("malloc-interposer did not see 100 deliberate allocations (saw \(seen)): counting is not working")
        return -1
    }

    let players = 64, frames = 128, periods = 6000
    let engine = Engine(configuration: .init(maxPlayers: players))
    let mono = pool.sounds(.mono, count: 4).map { try! engine.register($0) }
    let stereo = pool.sounds(.stereo, count: 4).map { try! engine.register($0) }
    let left = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
    defer { left.deallocate(); right.deallocate() }
    var random = SplitMix(state: 99)
    var commands = 0, events = 0
    MallocInterposerSwift.reset()
    for period in 0..<periods {
        let start = Frame(period * frames)
        // Control side: a busy mix of every command, landing inside the coming periods.
        if period % 4 == 0 {
            for _ in 0..<24 {
                let p = Int(random.next() % UInt64(players))
                let at = start + Frame(random.next() % UInt64(2 * frames))
                let command: Command
                switch random.next() % 10 {
                case 0, 1, 2:
                    let sounds = random.next() % 2 == 0 ? mono : stereo
                    command = .start(player: p, sound: sounds[Int(random.next() % 4)], at: at,
                                     from: Frame(random.next() % 20_000), loops: Int(random.next() % 3) - 1,
                                     gain: Gain(linear: random.unit()), pan: PanGains(pan: 2 * random.unit() - 1))
                case 3: command = .stop(player: p, at: at, fadeFrames: Int(random.next() % 300))
                case 4: command = .setGain(player: p, Gain(linear: random.unit()), fadeFrames: Int(random.next() % 1000), at: at)
                case 5: command = .setPan(player: p, 2 * random.unit() - 1, at: at)
                case 6: command = .setLoops(player: p, Int(random.next() % 3) - 1, at: at)
                case 7: command = .seek(player: p, to: Frame(random.next() % 30_000), at: at)
                case 8: command = Command(kind: random.next() % 2 == 0 ? .pause : .resume, player: Int32(p), frame: at)
                default: command = period % 400 == 0 ? Command(kind: .stopAll, player: 0, frame: at)
                                                     : .setPan(player: p, 0, at: at)
                }
                if engine.send(command) { commands += 1 }
            }
        }
        MallocInterposerSwift.hook()
        engine.render(frameCount: frames, periodStart: start, left: left, right: right)
        MallocInterposerSwift.unhook()
        engine.drainEvents { _ in events += 1 }
    }
    let count = MallocInterposerSwift.getStatistics().mallocCount
    report.line("  \(periods) periods of \(frames) frames, \(players) players, \(commands) commands of every kind "
        + "(start, stop ± fade, gain ramps, pan, loops, seek, pause/resume, stop-all), \(events) events:")
    report.line("  allocations while rendering: \(count) (\(String(format: "%.3f", Double(count) / Double(periods))) per period)")
    report.line("  lock operations: not counted. The render path is checked by the compiler: Engine.render and")
    report.line("  everything it calls are @_noLocks @_noAllocation, so a build that could lock or allocate there fails.")
    report.set("allocations", ["periods": periods, "commands": commands, "events": events, "mallocCount": count,
                               "locks": "compiler-checked @_noLocks @_noAllocation; not counted at run time"])
    return count
}
