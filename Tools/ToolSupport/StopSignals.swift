// SIGINT and SIGTERM as something to wait for rather than handlers, for the instruments that run
// until they are told to stop.
import Foundation

/// SIGINT and SIGTERM, blocked so that `wait(seconds:)` can take them with sigtimedwait.
public struct StopSignals {
    private let set: sigset_t

    /// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts afterwards.
    /// Main thread, before `ToolClient.init`: JACK's threads inherit the mask, so the signals can
    /// then only be taken by `wait(seconds:)`.
    public static func block() -> StopSignals {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        return StopSignals(set: blocked)
    }

    private init(set: sigset_t) { self.set = set }

    /// Waits until SIGINT or SIGTERM arrives or `seconds` have passed (infinity: about 34 years).
    /// The signal is consumed. Main thread (the thread that called `block()`).
    public func wait(seconds: Double) {
        var blocked = set
        var timeout = timespec(tv_sec: seconds.isFinite ? Int(seconds) : 1 << 30,
                               tv_nsec: seconds.isFinite ? Int((seconds - seconds.rounded(.down)) * 1e9) : 0)
        _ = sigtimedwait(&blocked, nil, &timeout)
    }
}
