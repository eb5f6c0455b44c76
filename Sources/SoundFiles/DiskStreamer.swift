import Foundation

/// One disk thread serving many `StreamReader`s: it wakes every `wakeInterval` seconds, or at
/// once when a reader is cued, and tops every ring up, emptiest first, a chunk per stream at a
/// time so that one stream never starves the others.
///
/// Without `start()` no thread runs and `fillAll()` does the same work on the calling thread
/// (offline rendering: fill, render a block, fill again; the output is then identical to a live
/// run without underruns).
///
/// Threads: every method may be called from any control thread. Filling is serialized, so
/// `fillAll()` is safe while the thread runs.
///
/// `@unchecked Sendable` by contract: `readers`, `signalled` and `running` are only touched under
/// `condition` (as is `thread`, which is only kept, never used), and fill passes are serialized by
/// `fillLock`.
package final class DiskStreamer: @unchecked Sendable {
    /// Seconds between wake-ups when nothing signals.
    package let wakeInterval: Double
    private let condition = NSCondition()
    private var readers: [StreamReader] = []
    private var signalled = false
    private var running = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let fillLock = NSLock()

    package init(wakeInterval: Double = 0.005) {
        precondition(wakeInterval > 0)
        self.wakeInterval = wakeInterval
    }

    deinit {
        // The thread holds no strong reference to the streamer between passes; it sees this and
        // exits on its own.
        condition.withLock {
            running = false
            condition.signal()
        }
    }

    /// Starts the disk thread (idempotent). Control thread.
    package func start(name: String = "sampler.disk") {
        condition.withLock {
            guard !running else { return }
            running = true
            let thread = Thread { [weak self] in
                // Foundation does not pass the name to the system on Linux; profilers and the
                // stream benchmark find the thread by it.
                try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                while let streamer = self, streamer.runOnce() {}
                self?.finished.signal()
            }
            thread.name = name
            thread.qualityOfService = .userInitiated
            self.thread = thread
            thread.start()
        }
    }

    /// Stops the disk thread and waits for it (idempotent). Control thread.
    package func stop() {
        let wasRunning: Bool = condition.withLock {
            let was = running
            running = false
            condition.signal()
            return was
        }
        if wasRunning { finished.wait() }
        condition.withLock { thread = nil }
    }

    /// Whether the disk thread runs.
    package var isRunning: Bool { condition.withLock { running } }

    /// Serves `reader` from now on. Any thread.
    package func add(_ reader: StreamReader) {
        reader.streamer = self
        condition.withLock {
            if !readers.contains(where: { $0 === reader }) { readers.append(reader) }
            signalled = true
            condition.signal()
        }
    }

    /// Stops serving `reader`. Any thread.
    package func remove(_ reader: StreamReader) {
        condition.withLock { readers.removeAll { $0 === reader } }
        fillLock.withLock {}  // a pass in progress finishes with it before the caller frees it
    }

    /// Wakes the thread now (a cue is waiting). Any thread.
    package func wake() {
        condition.withLock {
            signalled = true
            condition.signal()
        }
    }

    /// Tops every ring up on the calling thread until none takes more. Any thread.
    package func fillAll() {
        while fillPass() {}
    }

    /// One wait and the passes after it; false once stopped.
    private func runOnce() -> Bool {
        condition.lock()
        if running && !signalled { _ = condition.wait(until: Date().addingTimeInterval(wakeInterval)) }
        signalled = false
        let keepRunning = running
        condition.unlock()
        guard keepRunning else { return false }
        fillAll()
        return true
    }

    /// Gives every reader one chunk, emptiest ring first; true if anything was written.
    private func fillPass() -> Bool {
        fillLock.lock()
        defer { fillLock.unlock() }
        let list = condition.withLock { readers }.sorted { $0.bufferedFrames < $1.bufferedFrames }
        var progress = false
        for reader in list where reader.fill(maxFrames: reader.options.chunkFrames) > 0 { progress = true }
        return progress
    }
}
