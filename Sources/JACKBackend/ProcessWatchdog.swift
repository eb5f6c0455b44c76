/// Notices that JACK has stopped running a client while its server goes on: the client's process
/// callback has not run for `limit` seconds, yet the server's cycles (its `jack_last_frame_time`)
/// advanced by at least half that time. An asynchronous server then skips the client in every
/// cycle and its outputs stay silent; nothing in the client can make JACK wake it again.
///
/// Two causes are known. A client upstream of this one (feeding its inputs) hangs. Or JACK2's bug
/// jackaudio/jack2#721: a client that was still opening when another client closed keeps a stale
/// wake-up for the closed client's number; when the next client to take that number is
/// downstream of it (e.g. its MIDI input is fed by it), JACK never wakes that client again.
///
/// Pure bookkeeping, fed by the caller (so it can be tested with made-up clocks). Control thread
/// only: one value, checked from the loop that drives the client.
package struct ProcessWatchdog: Sendable {
    /// Seconds without a period before `check` reports.
    package let limit: Double
    package let sampleRate: Double
    private var periods: Int?
    private var since = 0.0
    private var serverFrame: UInt32 = 0

    package init(limit: Double = 5, sampleRate: Double) {
        self.limit = limit
        self.sampleRate = sampleRate
    }

    /// What the watchdog found when no period came for `limit` seconds.
    package struct Stall: Sendable, Equatable {
        /// Seconds since the last period (or since watching began).
        package let seconds: Double
        /// Seconds of cycles the server ran meanwhile.
        package let serverSeconds: Double
        /// True when the server ran on (at least half the time): JACK is skipping this client.
        package let serverRan: Bool
        /// Whether the client had rendered any period before.
        package let hadStarted: Bool

        /// One line for the user, naming the client.
        package func message(client: String) -> String {
            let waited = Int(seconds.rounded())
            guard serverRan else {
                return "the JACK server is not running its process cycle (no cycle in \(waited) s)"
            }
            let what = hadStarted ? "has stopped running" : "never ran"
            return "JACK \(what) this client (\(client)) for \(waited) s while its server ran on: a client feeding "
                + "its inputs may be hung, or a JACK2 bug (jackaudio/jack2#721: a client that opened while another "
                + "closed keeps a stale wake-up) left it unwoken; restart the program feeding \(client), or this one"
        }
    }

    /// Call often (e.g. every 10 ms) with the client's period count, the server's current cycle
    /// frame (`jack_last_frame_time`, 32 bits, wrapping) and a monotonic time in seconds. Returns
    /// a stall once no period has come for `limit` seconds; nil otherwise.
    package mutating func check(periods count: Int, serverFrame frame: UInt32, now: Double) -> Stall? {
        guard let last = periods, last == count else {
            periods = count
            since = now
            serverFrame = frame
            return nil
        }
        let waited = now - since
        guard waited >= limit else { return nil }
        let ran = Double(frame &- serverFrame) / sampleRate
        return Stall(seconds: waited, serverSeconds: ran, serverRan: ran >= waited / 2, hadStarted: count > 0)
    }
}
