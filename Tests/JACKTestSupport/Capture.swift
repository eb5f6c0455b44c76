import Foundation
import SamplerCore

/// A recording made by the independent `sampler-capture` JACK client: what really left the
/// ports under test, with the device frame of its first sample.
public struct Capture {
    public let firstFrame: Int64
    public let sampleRate: Double
    public let channels: [[Float]]
    /// The periods the witness recorded, each placed by JACK's frame time of its cycle alone:
    /// (device frame of its first sample, frames). Frames none of them covers were lost by the
    /// witness and hold silence.
    public let periods: [(start: Int64, count: Int)]
    /// The wall clock against the frame clock, sampled by the witness at its end: device frame
    /// `frame` was played at `realtimeMicroseconds` (µs since 1970, CLOCK_REALTIME).
    public var clock: (frame: Int64, realtimeMicroseconds: Int64)?
    /// Per recorded period, JACK's host-clock stamps of its cycle (µs on `jack_get_time`'s clock:
    /// CLOCK_MONOTONIC_RAW under JACK2, the clock Ableton Link uses; CLOCK_MONOTONIC under
    /// PipeWire): its first frame's and the next cycle's.
    public var periodHostTimes: [(start: Int64, next: Int64)] = []
    /// JACK's host clock against CLOCK_MONOTONIC_RAW, sampled by the witness before and after
    /// recording (`jack` µs on JACK's clock was `raw` µs on CLOCK_MONOTONIC_RAW).
    public var hostClockSamples: [(jack: Int64, raw: Int64)] = []

    /// The CLOCK_MONOTONIC_RAW time (µs) at which device frame `frame` was played: its host time
    /// moved by the offset between the clocks, interpolated between the witness's two samplings
    /// (whatever the server's clock, witnesses on JACK2 and on PipeWire share this axis).
    public func rawMicroseconds(ofFrame frame: Int64) -> Double? {
        guard let t = hostMicroseconds(ofFrame: frame), let first = hostClockSamples.first, let last = hostClockSamples.last else { return nil }
        let o1 = Double(first.raw - first.jack), o2 = Double(last.raw - last.jack)
        let span = Double(last.jack - first.jack)
        let offset = span > 0 ? o1 + (o2 - o1) * (t - Double(first.jack)) / span : o1
        return t + offset
    }

    /// The host time (µs, JACK's clock) at which device frame `frame` was played, by the stamps
    /// of the recorded period holding it (nil when no recorded period does).
    public func hostMicroseconds(ofFrame frame: Int64) -> Double? {
        for (i, p) in periods.enumerated() where i < periodHostTimes.count && frame >= p.start && frame < p.start + Int64(max(1, p.count)) {
            let t = periodHostTimes[i]
            guard t.start >= 0, t.next > t.start else { return nil }
            // The next cycle's stamp is a full period (JACK's buffer size) later, even for the
            // recording's last, shorter period.
            let length = Double(periods.first?.count ?? p.count)
            return Double(t.start) + Double(frame - p.start) * Double(t.next - t.start) / max(1, length)
        }
        return nil
    }

    /// The wall-clock time (µs since 1970) device frame `frame` was played at, by `clock`.
    public func realtimeMicroseconds(ofFrame frame: Int64) -> Double? {
        guard let clock else { return nil }
        return Double(clock.realtimeMicroseconds) + Double(frame - clock.frame) * 1_000_000 / sampleRate
    }

    public init(firstFrame: Int64, sampleRate: Double, channels: [[Float]], periods: [(start: Int64, count: Int)]? = nil) {
        self.firstFrame = firstFrame
        self.sampleRate = sampleRate
        self.channels = channels
        self.periods = periods ?? [(firstFrame, channels.first?.count ?? 0)]
    }

    /// Frames of the recording's span that no recorded period covered.
    public var lostFrames: Int {
        let total = channels.first?.count ?? 0
        var covered = [Bool](repeating: false, count: total)
        for p in periods {
            let from = Int(p.start - firstFrame)
            for i in max(0, from)..<min(total, from + p.count) { covered[i] = true }
        }
        return covered.filter { !$0 }.count
    }

    /// Whether every frame within `margin` of `frame` was recorded (no period JACK skipped the
    /// witness for lies there): an onset there is where the recording says it is.
    public func isClear(around frame: Int64, margin: Int64 = 2048) -> Bool {
        var next = frame - margin
        for p in periods.sorted(by: { $0.start < $1.start }) where p.start + Int64(p.count) > next {
            if p.start > next { return false }
            next = p.start + Int64(p.count)
            if next > frame + margin { return true }
        }
        return false
    }

    /// Absolute device frames where a sound begins in `channel`: the first sample whose magnitude
    /// exceeds `threshold` after at least `quietGap` samples at or below it.
    public func onsets(channel: Int, threshold: Float = 0.02, quietGap: Int = 8) -> [Int64] {
        var result: [Int64] = []
        var quiet = quietGap
        for (i, x) in channels[channel].enumerated() {
            if abs(x) > threshold {
                if quiet >= quietGap { result.append(firstFrame + Int64(i)) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return result
    }

    /// The wall-clock time (µs since 1970) at which device frame `frame` was played: the host
    /// stamps of the recorded period holding it (`hostMicroseconds`) and `wallMinusHost`
    /// (`wallMinusHostMicroseconds()`). nil when no recorded period holds it.
    /// (`wallMinusHost`: CLOCK_REALTIME minus CLOCK_MONOTONIC_RAW, `wallMinusHostMicroseconds`;
    /// the frame's host time is moved to CLOCK_MONOTONIC_RAW first when the witness sampled its
    /// clock against it, as on PipeWire, whose JACK clock is CLOCK_MONOTONIC.)
    public func wallMicroseconds(ofFrame frame: Int64, wallMinusHost: Double) -> Double? {
        (rawMicroseconds(ofFrame: frame) ?? hostMicroseconds(ofFrame: frame)).map { $0 + wallMinusHost }
    }

    /// Whether the server kept time over the `seconds` before `frame`: every two recorded periods
    /// there have host stamps as far apart as their frames at the nominal rate, to within
    /// `tolerance` µs. A dummy server starved of CPU loses time (JACK's timed driver takes a new
    /// anchor after a late cycle, and its clock restarts from the late wake-up), and every frame
    /// after the loss plays that much later on the wall clock: a frame chosen for a time before
    /// the loss is played after it by the device, not the sampler. False when fewer than two
    /// recorded periods lie there (nothing to judge by).
    public func keptTime(before frame: Int64, seconds: Double, tolerance: Double = 500) -> Bool {
        let from = frame - Int64(seconds * sampleRate)
        var previous: (frame: Int64, host: Int64)?
        var pairs = 0
        for (i, p) in periods.enumerated() where i < periodHostTimes.count && p.start + Int64(p.count) > from && p.start <= frame {
            let host = periodHostTimes[i].start
            guard host >= 0 else { continue }
            if let previous {
                let expected = Double(p.start - previous.frame) * 1_000_000 / sampleRate
                if abs(Double(host - previous.host) - expected) > tolerance { return false }
                pairs += 1
            }
            previous = (p.start, host)
        }
        return pairs > 0
    }

    /// The sample at absolute device frame `frame` (0 outside the recording).
    public func sample(channel: Int, at frame: Int64) -> Float {
        let i = frame - firstFrame
        guard i >= 0, i < Int64(channels[channel].count) else { return 0 }
        return channels[channel][Int(i)]
    }
}

/// A running `sampler-capture` process recording `ports`.
public final class CaptureProcess {
    private let process = Process()
    private let output = Pipe()
    private let file: URL
    private var startHostClock: [(jack: Int64, raw: Int64)] = []

    /// Starts recording `frames` frames of `ports` on `server`; returns once the capture client
    /// has connected to every port (it prints "ready").
    public init(server: JACKServer, ports: [String], frames: Int, name: String? = nil, connect: Bool = true) throws {
        file = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID().uuidString).bin")
        process.executableURL = productsDirectory.appendingPathComponent("sampler-capture")
        process.arguments = ["--server", server.name, "--ports", ports.joined(separator: ","),
                             "--frames", "\(frames)", "--out", file.path] + (name.map { ["--name", $0] } ?? [])
            + (connect ? [] : ["--no-connect"])
        process.environment = ProcessInfo.processInfo.environment.merging(server.environment) { $1 }
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        // "hostclock …" (the clocks sampled before recording), then "ready".
        var line = readLine()
        if let l = line, l.hasPrefix("hostclock ") {
            let fields = l.split(separator: " ").dropFirst().compactMap { f -> Int64? in f.split(separator: "=").last.flatMap { Int64($0) } }
            if fields.count == 2 { startHostClock = [(fields[0], fields[1])] }
            line = readLine()
        }
        guard line == "ready" else { throw TestFailure("sampler-capture did not get ready") }
    }

    private func readLine() -> String? { output.fileHandleForReading.readLineUnbuffered() }

    /// Waits for the recording to finish and reads it.
    public func finish() throws -> Capture {
        var clock: (frame: Int64, realtimeMicroseconds: Int64)?
        var hostClock = startHostClock
        while let line = readLine(), line != "done" {
            let fields = Dictionary(line.split(separator: " ").dropFirst().compactMap { field -> (String, Int64)? in
                let kv = field.split(separator: "=")
                guard kv.count == 2, let v = Int64(kv[1]) else { return nil }
                return (String(kv[0]), v)
            }, uniquingKeysWith: { a, _ in a })
            if line.hasPrefix("clock "), let f = fields["frame"], let r = fields["realtime_us"] { clock = (f, r) }
            if line.hasPrefix("hostclock "), let j = fields["jack_us"], let r = fields["raw_us"] { hostClock.append((j, r)) }
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("sampler-capture failed") }
        let data = try Data(contentsOf: file)
        try? FileManager.default.removeItem(at: file)
        var capture = data.withUnsafeBytes { raw in
            let channels = Int(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            let first = raw.loadUnaligned(fromByteOffset: 8, as: Int64.self)
            let frames = Int(raw.loadUnaligned(fromByteOffset: 16, as: Int64.self))
            let rate = Double(bitPattern: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            var planes: [[Float]] = []
            for c in 0..<channels {
                let base = 32 + c * frames * 4
                planes.append((0..<frames).map { raw.loadUnaligned(fromByteOffset: base + $0 * 4, as: Float.self) })
            }
            var at = 32 + channels * frames * 4
            let count = Int(raw.loadUnaligned(fromByteOffset: at, as: Int64.self))
            at += 8
            var periods: [(start: Int64, count: Int)] = []
            for i in 0..<count {
                periods.append((raw.loadUnaligned(fromByteOffset: at + i * 16, as: Int64.self),
                                Int(raw.loadUnaligned(fromByteOffset: at + i * 16 + 8, as: Int64.self))))
            }
            at += count * 16
            var c = Capture(firstFrame: first, sampleRate: rate, channels: planes, periods: periods)
            if raw.count >= at + count * 16 {
                c.periodHostTimes = (0..<count).map { i in
                    (raw.loadUnaligned(fromByteOffset: at + i * 16, as: Int64.self), raw.loadUnaligned(fromByteOffset: at + i * 16 + 8, as: Int64.self))
                }
            }
            return c
        }
        capture.clock = clock
        capture.hostClockSamples = hostClock
        return capture
    }

    /// Kills the capture client at once (its ports vanish from the server). SIGKILL: a child
    /// spawned from a thread that blocks SIGTERM inherits the block.
    public func kill() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { kill() }
}

/// A click with an attack on its very first sample that dies out within 6 frames, so onsets a
/// few frames apart stay distinct in a capture.
public func shortClick() throws -> Sound {
    try Sound(channels: [[1, 0.5, 0.25, 0.125, 0.0625, 0.03]], sampleRate: 48000)
}

extension FileHandle {
    /// The next line (without its newline), read a byte at a time so that nothing after it is
    /// taken from the pipe; nil at the end. For the capture clients' "ready" handshakes.
    public func readLineUnbuffered() -> String? {
        var bytes: [UInt8] = []
        while true {
            let chunk = readData(ofLength: 1)
            if chunk.isEmpty { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if chunk[0] == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(chunk[0])
        }
    }
}

extension FileHandle {
    /// The UDP port of the sampler's "OSC: … port N of HOST" line, read line by line (nothing
    /// after it taken from the pipe), and the lines read up to it; port nil when the output
    /// ended first.
    public func readOSCPort() -> (port: String?, head: [String]) {
        var head: [String] = []
        while let line = readLineUnbuffered() {
            head.append(line)
            if line.hasPrefix("OSC:"), let range = line.range(of: #"port \d+"#, options: .regularExpression) {
                return (String(line[range].dropFirst(5)), head)
            }
        }
        return (nil, head)
    }
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC_RAW (JACK's host clock) now, in µs: the tightest of
/// three readings (a reading preempted between its two clocks is wide).
public func wallMinusHostMicroseconds() -> Double {
    func now(_ clock: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(clock, &t)
        return Double(t.tv_sec) * 1e6 + Double(t.tv_nsec) / 1e3
    }
    var best: (width: Double, offset: Double) = (.infinity, 0)
    for _ in 0..<3 {
        let before = now(CLOCK_MONOTONIC_RAW), wall = now(CLOCK_REALTIME), after = now(CLOCK_MONOTONIC_RAW)
        if after - before < best.width { best = (after - before, wall - (before + after) / 2) }
    }
    return best.offset
}
