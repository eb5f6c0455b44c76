// sampler-capture: an independent JACK client that records ports together with the device-clock
// frame of the first recorded sample, so tests can check on which absolute frame a sound left
// another client's ports.
//
//   sampler-capture --server NAME --ports a:out_L,a:out_R --frames N --out FILE [--name N] [--no-connect]
//
// With --summary it keeps nothing and prints, at the end, "summary periods=P lost-frames=L
// repeated-frames=R xruns=X nonfinite=N" (for runs too long to record, e.g. the soak). Without it,
// it prints "clock frame=F realtime_us=R" before "done": the wall clock against the frame clock.
// With --no-connect it only registers one input per listed port (in_0, in_1, …) and leaves
// connecting to others.
// It connects the given ports to its inputs, prints "ready" once connected, records N frames
// from the next period on, writes FILE and exits. File layout (little-endian): "SCAP", UInt32
// channel count, Int64 frame time of the first sample (32-bit JACK frame time, zero-extended),
// Int64 frame count, Float64 sample rate, then each channel's Float32 samples in turn, then
// Int64 period count and, per period, Int64 stamp and Int64 length (the periods recorded, each
// placed by JACK's frame time of its cycle alone; frames no period covered were lost), then per
// period Int64 host time of its cycle and Int64 of the next cycle (jack_get_cycle_times, µs on
// JACK's clock; -1 when unknown).
import CJACK
import Foundation
import Synchronization
import ToolSupport

/// `@unchecked Sendable`: the buffers, period lists and counters are written only by JACK's process thread while `done` is
/// false and read by the main thread only after it has seen `done` (acquiring) and closed the
/// client; `client` and the ports are set before `armed` is stored (releasing).
final class Recorder: @unchecked Sendable {
    var client: OpaquePointer?
    var ports: [OpaquePointer] = []
    let buffers: [UnsafeMutablePointer<Float>]
    let capacity: Int
    let armed = Atomic<Bool>(false)
    let done = Atomic<Bool>(false)
    /// The device frame of buffer index 0 (the first recorded period).
    var firstFrame: Int64 = 0
    private var haveFirst = false
    /// Every period recorded: its stamp (device frame of its first sample) and its length, in
    /// memory allocated up front. Frames no period covered were lost (left as silence).
    let periodStamps: UnsafeMutablePointer<Int64>
    let periodLengths: UnsafeMutablePointer<Int32>
    /// Per period, JACK's host-clock stamps of its cycle (`jack_get_cycle_times`: the estimated
    /// time of its first frame and of the next cycle's, µs on jack_get_time's clock).
    let periodMicros: UnsafeMutablePointer<Int64>
    let periodNextMicros: UnsafeMutablePointer<Int64>
    let periodCapacity: Int
    var periodCount = 0

    // Each period is stamped with JACK's frame time for its cycle and nothing else: no rule of
    // the engine's is repeated here, so a mistake in the engine's clock cannot cancel out. The
    // 32-bit value is widened to the 64-bit frame nearest the previous stamp.
    private var stamp: Int64 = 0

    /// Summary mode (`--summary`): nothing is stored; periods, lost and repeated frames,
    /// non-finite samples and xruns are counted (for runs too long to keep, e.g. the soak).
    let summary: Bool
    var lostFrames = 0
    var repeatedFrames = 0
    var nonFinite = 0
    let xruns = Atomic<Int>(0)
    private var next: Int64 = 0

    init(channels: Int, frames: Int, summary: Bool) {
        capacity = frames
        self.summary = summary
        buffers = summary ? [] : (0..<channels).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: frames)
            p.initialize(repeating: 0, count: frames)
            return p
        }
        periodCapacity = summary ? 0 : frames / 16 + 64
        periodStamps = .allocate(capacity: periodCapacity)
        periodLengths = .allocate(capacity: periodCapacity)
        periodMicros = .allocate(capacity: periodCapacity)
        periodNextMicros = .allocate(capacity: periodCapacity)
    }

    func process(_ n: UInt32) -> Int32 {
        guard armed.load(ordering: .acquiring), !done.load(ordering: .relaxed), let client else { return 0 }
        let raw = jack_last_frame_time(client)
        if !haveFirst {
            haveFirst = true
            stamp = Int64(raw)
            firstFrame = stamp
        } else {
            stamp += Int64(Int32(bitPattern: raw &- UInt32(truncatingIfNeeded: stamp)))
        }
        if summary {
            if periodCount > 0 {
                if stamp > next { lostFrames += Int(stamp - next) } else if stamp < next { repeatedFrames += Int(min(next - stamp, Int64(n))) }
            }
            periodCount += 1
            next = max(next, stamp + Int64(n))
            for port in ports {
                let src = jack_port_get_buffer(port, n)!.assumingMemoryBound(to: Float.self)
                for i in 0..<Int(n) where !src[i].isFinite { nonFinite += 1 }
            }
            if stamp + Int64(n) - firstFrame >= Int64(capacity) { done.store(true, ordering: .releasing) }
            return 0
        }
        let at = Int(stamp - firstFrame)
        guard at >= 0, at < capacity else {
            if at >= capacity { done.store(true, ordering: .releasing) }
            return 0
        }
        let count = min(Int(n), capacity - at)
        for (i, port) in ports.enumerated() {
            let src = jack_port_get_buffer(port, n)!.assumingMemoryBound(to: Float.self)
            (buffers[i] + at).update(from: src, count: count)
        }
        if periodCount < periodCapacity {
            periodStamps[periodCount] = stamp
            periodLengths[periodCount] = Int32(count)
            var frames: jack_nframes_t = 0, current: jack_time_t = 0, next: jack_time_t = 0, period: Float = 0
            if jack_get_cycle_times(client, &frames, &current, &next, &period) == 0 {
                periodMicros[periodCount] = Int64(current)
                periodNextMicros[periodCount] = Int64(next)
            } else {
                periodMicros[periodCount] = -1
                periodNextMicros[periodCount] = -1
            }
            periodCount += 1
        }
        if at + count == capacity { done.store(true, ordering: .releasing) }
        return 0
    }
}

/// JACK's process callback. A function, not a closure in this file's top-level code: such a
/// closure would be isolated to the main actor (Swift 6), and JACK calls it on its own thread.
func processCallback(_ n: UInt32, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<Recorder>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(n) }
}

/// JACK's xrun callback (a function for the same reason as `processCallback`).
func xrunCallback(_ arg: UnsafeMutableRawPointer?) -> Int32 {
    _ = Unmanaged<Recorder>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.xruns.add(1, ordering: .relaxed) }
    return 0
}

func fail(_ message: String) -> Never { toolFail("sampler-capture", message) }

var server: String?
var clientName = "capture"
var connectSources = true
var sources: [String] = []
var frames = 0
var outPath = ""
var summaryOnly = false
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--server": server = args.next()
    case "--ports": sources = (args.next() ?? "").split(separator: ",").map(String.init)
    case "--frames": frames = Int(args.next() ?? "") ?? 0
    case "--out": outPath = args.next() ?? ""
    case "--name": clientName = args.next() ?? "capture"
    case "--no-connect": connectSources = false
    case "--summary": summaryOnly = true
    default: fail("unknown option \(a)")
    }
}
guard !sources.isEmpty, frames > 0, !outPath.isEmpty || summaryOnly else {
    fail("usage: --server NAME --ports A,B --frames N (--out FILE | --summary)")
}

let jack = ToolClient(tool: "sampler-capture", name: clientName, server: server)
let client = jack.client
let recorder = Recorder(channels: sources.count, frames: frames, summary: summaryOnly)
recorder.client = client
for i in sources.indices {
    recorder.ports.append(jack.register("in_\(i)", type: JACK_DEFAULT_AUDIO_TYPE, flags: JackPortIsInput))
}
jack_set_process_callback(client, processCallback, Unmanaged.passUnretained(recorder).toOpaque())
jack_set_xrun_callback(client, xrunCallback, Unmanaged.passUnretained(recorder).toOpaque())
jack.activate()

let ownName = jack.name
for (i, source) in sources.enumerated() where connectSources {
    // The source client may still be starting: wait for its port (up to 10 s).
    guard jack.waitForPort(source, tries: 1000) else { fail("no port \(source)") }
    // A port that has just appeared may not accept connections for a moment: retry briefly.
    let result = jack.connect(from: source, to: "\(ownName):in_\(i)", tries: 200)
    guard result == 0 else { fail("cannot connect \(source) (error \(result))") }
}
/// JACK's host clock (`jack_get_time`: CLOCK_MONOTONIC_RAW under JACK2, CLOCK_MONOTONIC under
/// PipeWire) against CLOCK_MONOTONIC_RAW (Ableton Link's), sampled (the tightest of three
/// readings of one between two of the other) at the start and at the end of the recording:
/// "hostclock jack_us=J raw_us=R", so a test can put the period stamps of witnesses on different
/// servers on one axis, following the clocks' drift between the two samplings.
func printHostClock() {
    func raw() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
    var best: (width: Int64, jack: Int64, raw: Int64) = (.max, 0, 0)
    for _ in 0..<3 {
        let before = raw(), jackNow = Int64(jack_get_time()), after = raw()
        if after - before < best.width { best = (after - before, jackNow, before + (after - before) / 2) }
    }
    print("hostclock jack_us=\(best.jack) raw_us=\(best.raw)")
}
printHostClock()
recorder.armed.store(true, ordering: .releasing)
print("ready"); fflush(nil)
let rate = Double(jack_get_sample_rate(client))
let deadline = Date().addingTimeInterval(Double(frames) / rate * 3 + 10)
while !recorder.done.load(ordering: .acquiring) {
    if Date() > deadline { fail("timed out waiting for \(frames) frames") }
    usleep(20_000)
}
// The wall clock against the device clock, sampled once (a JACK frame-time reading between two
// CLOCK_REALTIME readings), so a test can tell the wall-clock time a recorded frame was played
// at: "clock frame=F realtime_us=R" (F as JACK's 32-bit frame time, zero-extended).
func realtimeMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}
// The tightest of three samplings (a preemption between the readings widens one).
var wallBefore: Int64 = 0, wallAfter = Int64.max, frameNow: jack_nframes_t = 0
for _ in 0..<3 {
    let before = realtimeMicroseconds(), frame = jack_frame_time(client), after = realtimeMicroseconds()
    if after - before < wallAfter - wallBefore { (wallBefore, frameNow, wallAfter) = (before, frame, after) }
}
printHostClock()
jack.close()
if !summaryOnly { print("clock frame=\(frameNow) realtime_us=\(wallBefore + (wallAfter - wallBefore) / 2)") }
if summaryOnly {
    print("summary periods=\(recorder.periodCount) lost-frames=\(recorder.lostFrames) repeated-frames=\(recorder.repeatedFrames) "
          + "xruns=\(recorder.xruns.load(ordering: .relaxed)) nonfinite=\(recorder.nonFinite)")
    print("done"); fflush(nil)
    exit(0)
}

var data = Data("SCAP".utf8)
@MainActor func append<T>(_ value: T) { withUnsafeBytes(of: value) { data.append(contentsOf: $0) } }
append(UInt32(sources.count).littleEndian)
append(recorder.firstFrame.littleEndian)
append(Int64(frames).littleEndian)
append(rate.bitPattern.littleEndian)
for b in recorder.buffers { data.append(UnsafeBufferPointer(start: b, count: frames)) }
append(Int64(recorder.periodCount).littleEndian)
for i in 0..<recorder.periodCount {
    append(recorder.periodStamps[i].littleEndian)
    append(Int64(recorder.periodLengths[i]).littleEndian)
}
for i in 0..<recorder.periodCount {
    append(recorder.periodMicros[i].littleEndian)
    append(recorder.periodNextMicros[i].littleEndian)
}
do { try data.write(to: URL(fileURLWithPath: outPath)) } catch { fail("cannot write \(outPath): \(error)") }
print("done"); fflush(nil)
