import Foundation
import SamplerCore

/// Where an OSC message acts on the device timeline, or why it was refused.
package enum OSCPlacement: Equatable {
    /// On `frame`; `when` says how that was decided, for the log line.
    case at(frame: Frame, when: String)
    /// Due further ahead than the hold horizon: kept by the `OSCTimedQueue` until it comes near,
    /// then placed again (`OSCTimedQueue.due`).
    case held
    /// Not acted on; the reason goes back to the sender in an error reply.
    case refused(String)
}

extension OSCMessage {
    /// A timetag further ahead than this is refused: one hour.
    package static let maximumLeadSeconds = 3600.0

    /// The device frame this message acts on, and how that was decided (for the log line): its
    /// timetag's frame (`frameAt` maps host time to device frames); as soon as possible (two
    /// periods ahead of what `engine` has rendered) when it has none; as soon as possible too,
    /// reported late, when that frame is no longer reachable. A timetag more than
    /// `maximumLeadSeconds` ahead is refused. With a `queue`, a timed message due beyond the
    /// queue's horizon is held there (`.held`) and mapped to a frame only when it comes near,
    /// and a timed message is refused while as many as the queue allows are waiting, held or
    /// for their frames. Control thread. `hostNow`: the device's host clock now, in microseconds.
    package func placement(engine: Engine, sampleRate: Double, hostNow now: UInt64, frameAt: (UInt64) -> Frame,
                           limit queue: OSCTimedQueue? = nil) -> OSCPlacement {
        let period = max(1, engine.renderedFrame - engine.lastPeriodStart)
        let soonest = engine.renderedFrame + 2 * period
        guard let hostTime else { return .at(frame: soonest, when: "as soon as possible") }
        // Compare host times before any conversion to frames: a timetag hours ahead must not
        // reach JACK's 32-bit frame arithmetic.
        if hostTime > now, Double(hostTime - now) > Self.maximumLeadSeconds * 1e6 {
            return .refused(String(format: "its timetag is %.0f s ahead; at most %.0f s (one hour) is accepted",
                                   Double(hostTime - now) / 1e6, Self.maximumLeadSeconds))
        }
        // Built only when a message is refused (this runs for every timed message).
        func full() -> String { "\(queue?.capacity ?? 0) timed messages are already waiting for their frames: the queue is full" }
        if let queue, hostTime > now, hostTime - now > OSCTimedQueue.horizonMicroseconds(period: period, sampleRate: sampleRate) {
            return queue.hold(self, rendered: engine.renderedFrame) ? .held : .refused(full())
        }
        let wanted = frameAt(hostTime)
        if wanted >= soonest {
            if let queue, !queue.admit(wanted, rendered: engine.renderedFrame) { return .refused(full()) }
            return .at(frame: wanted, when: "on its timetag")
        }
        return .at(frame: soonest, when: String(format: "late by %.1f ms", Double(soonest - wanted) / sampleRate * 1000))
    }
}

/// The timed OSC messages of one program, from their arrival to their frames.
///
/// A message due further ahead than the horizon (`horizonMicroseconds`: 100 ms, or four periods
/// when they are longer) is held here, and mapped to a device frame only when it comes within
/// the horizon. JACK's time-to-frame mapping extrapolates from the latest cycle with the rate it
/// estimates, and a device clock that drifts or loses time (a dummy server starved of CPU does
/// both) moves every frame mapped before it: mapped 1.2 to 1.8 s ahead, starts on a loaded VM
/// played 3 to 13 ms from their timetags; mapped within the horizon, the mapping is as fresh as
/// the device's latest cycle. Its timetag is converted to host time again on release, so a wall
/// clock slewed by NTP over a long lead is followed too.
///
/// At most `capacity` messages wait at a time, held or admitted to the engine and not yet
/// rendered, so that a flood of bundles cannot fill the engine's schedule: MIDI notes and the
/// program's own commands always have room in it (the engine holds
/// `EngineConfiguration.scheduleCapacity`, 8,192 by default). Control thread only.
package final class OSCTimedQueue {
    package let capacity: Int
    /// The frames of the admitted messages not yet rendered, in order.
    private var frames: [Frame] = []
    /// Messages held until they come within the horizon, by due time (arrival order among equals).
    private var held: [OSCMessage] = []

    package init(capacity: Int = 1024) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// How far ahead of its host time a timed message is mapped to its frame: 100 ms, or four
    /// periods of `period` frames when that is longer (two periods are the soonest a command can
    /// act; the control thread's ticks, 10 ms apart, may come late under load).
    package static func horizonMicroseconds(period: Frame, sampleRate: Double) -> UInt64 {
        max(100_000, UInt64((4 * Double(max(1, period)) / max(1, sampleRate) * 1e6).rounded(.up)))
    }

    /// Admits a message due on `frame` unless `capacity` are waiting after `rendered`.
    package func admit(_ frame: Frame, rendered: Frame) -> Bool {
        purge(rendered: rendered)
        guard waiting < capacity else { return false }
        let index = frames.firstIndex { $0 > frame } ?? frames.count
        frames.insert(frame, at: index)
        return true
    }

    /// Holds `message` (timed) unless `capacity` are waiting after `rendered`.
    package func hold(_ message: OSCMessage, rendered: Frame) -> Bool {
        purge(rendered: rendered)
        guard waiting < capacity, let due = message.hostTime else { return false }
        let index = held.firstIndex { ($0.hostTime ?? 0) > due } ?? held.count
        held.insert(message, at: index)
        return true
    }

    /// The held messages now within the horizon, in order, removed from the queue, each with its
    /// timetag converted to host time afresh by `clock` (the device's host clock), to be placed
    /// again (`placement`). `hostNow`: the device's host clock now.
    package func due(engine: Engine, sampleRate: Double, hostNow: UInt64, clock: () -> UInt64) -> [OSCMessage] {
        guard !held.isEmpty else { return [] }
        let period = max(1, engine.renderedFrame - engine.lastPeriodStart)
        let until = hostNow + Self.horizonMicroseconds(period: period, sampleRate: sampleRate)
        let count = held.firstIndex { ($0.hostTime ?? 0) > until } ?? held.count
        guard count > 0 else { return [] }
        var released = Array(held.prefix(count))
        held.removeFirst(count)
        for i in released.indices {
            if let unix = released[i].unixMicroseconds { released[i].hostTime = OSCTime.hostTime(unixMicroseconds: unix, hostNow: clock) }
        }
        return released
    }

    /// Messages waiting: held, or admitted and not yet rendered (as of the last call).
    package var waiting: Int { held.count + frames.count }

    /// Messages held for later.
    package var heldCount: Int { held.count }

    private func purge(rendered: Frame) {
        let done = frames.firstIndex { $0 > rendered } ?? frames.count
        frames.removeFirst(done)
    }
}
