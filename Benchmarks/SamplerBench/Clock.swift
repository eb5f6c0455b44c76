import Foundation

/// Monotonic time in nanoseconds.
@inline(__always)
func nowNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
}

/// CPU time of the calling thread in nanoseconds: back-to-back batches are timed with it, so that
/// being preempted by other processes (this is a shared 2-core machine) does not count.
@inline(__always)
func threadCPUNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
}

/// Makes the calling thread real-time (SCHED_FIFO at `priority`), as JACK runs its process
/// thread; returns false when not permitted. `leaveRealTime()` undoes it.
func enterRealTime(priority: Int32 = 60) -> Bool {
    var param = sched_param()
    param.sched_priority = priority
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
}

func leaveRealTime() {
    var param = sched_param()
    param.sched_priority = 0
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &param)
}

/// Sleeps until the monotonic clock reads `deadline` (nanoseconds), like a period wake-up.
func sleep(until deadline: UInt64) {
    var t = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nil) == EINTR {}
}

/// Simple order statistics over a sample of durations.
struct Sample {
    private(set) var values: [Double]

    init(_ values: [Double]) { self.values = values.sorted() }

    var mean: Double { values.reduce(0, +) / Double(Swift.max(values.count, 1)) }
    var median: Double { quantile(0.5) }
    var p99: Double { quantile(0.99) }
    var max: Double { values.last ?? 0 }
    var min: Double { values.first ?? 0 }

    /// The value below which a share `q` of the sample lies (nearest rank).
    func quantile(_ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let rank = Int((q * Double(values.count)).rounded(.up)) - 1
        return values[Swift.max(0, Swift.min(values.count - 1, rank))]
    }
}

/// CPU time (user + system) a process has used, from /proc/PID/stat (clock ticks, 10 ms on
/// Linux), and the finer sum of its threads' run time from /proc/PID/task/*/schedstat (ns).
struct ProcessCPU {
    var statSeconds: Double
    var schedstatSeconds: Double?

    static func read(pid: Int32) -> ProcessCPU? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var threadsNs: Double?
        if let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            var sum = 0.0
            for task in tasks {
                if let s = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                   let first = s.split(separator: " ").first, let ns = Double(first) {
                    sum += ns
                }
            }
            threadsNs = sum
        }
        return ProcessCPU(statSeconds: (utime + stime) / ticks, schedstatSeconds: threadsNs.map { $0 / 1e9 })
    }
}
