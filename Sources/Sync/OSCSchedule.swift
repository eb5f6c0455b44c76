import Foundation
import SamplerCore

/// Where an OSC message acts on the device timeline, or why it was refused.
package enum OSCPlacement: Equatable {
    /// On `frame`; `when` says how that was decided, for the log line.
    case at(frame: Frame, when: String)
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
    /// `maximumLeadSeconds` ahead is refused; `limit`, when given, refuses a timed message while
    /// as many timed messages as it allows are still waiting for their frames. Control thread.
    /// `hostNow`: the device's host clock now, in microseconds.
    package func placement(engine: Engine, sampleRate: Double, hostNow now: UInt64, frameAt: (UInt64) -> Frame,
                           limit: OSCTimedLimit? = nil) -> OSCPlacement {
        let period = max(1, engine.renderedFrame - engine.lastPeriodStart)
        let soonest = engine.renderedFrame + 2 * period
        guard let hostTime else { return .at(frame: soonest, when: "as soon as possible") }
        // Compare host times before any conversion to frames: a timetag hours ahead must not
        // reach JACK's 32-bit frame arithmetic.
        if hostTime > now, Double(hostTime - now) > Self.maximumLeadSeconds * 1e6 {
            return .refused(String(format: "its timetag is %.0f s ahead; at most %.0f s (one hour) is accepted",
                                   Double(hostTime - now) / 1e6, Self.maximumLeadSeconds))
        }
        let wanted = frameAt(hostTime)
        if wanted >= soonest {
            if let limit, !limit.admit(wanted, rendered: engine.renderedFrame) {
                return .refused("\(limit.capacity) timed messages are already waiting for their frames: the queue is full")
            }
            return .at(frame: wanted, when: "on its timetag")
        }
        return .at(frame: soonest, when: String(format: "late by %.1f ms", Double(soonest - wanted) / sampleRate * 1000))
    }
}

/// At most `capacity` timed OSC messages of one program wait for their frames at a time, so that
/// a flood of bundles cannot fill the engine's schedule: MIDI notes and the program's own commands
/// always have room in it (the engine holds `EngineConfiguration.scheduleCapacity`, 8,192 by default).
/// Control thread only.
package final class OSCTimedLimit {
    package let capacity: Int
    /// The frames of the admitted messages not yet rendered, in order.
    private var frames: [Frame] = []

    package init(capacity: Int = 1024) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Admits a message due on `frame` unless `capacity` are waiting after `rendered`.
    package func admit(_ frame: Frame, rendered: Frame) -> Bool {
        let done = frames.firstIndex { $0 > rendered } ?? frames.count
        frames.removeFirst(done)
        guard frames.count < capacity else { return false }
        let index = frames.firstIndex { $0 > frame } ?? frames.count
        frames.insert(frame, at: index)
        return true
    }

    /// Messages admitted and not yet rendered.
    package var waiting: Int { frames.count }
}
