import SamplerCore

/// A metronome that can be handed over to another one on an exact frame (a tempo change at the
/// next bar, a stop, a restart, a new transport position): the old one plays up to that frame,
/// the new one from it. Control thread only.
package struct MetronomeTrack: TriggerSource {
    /// The metronome playing at the last horizon produced (nil: silent).
    package private(set) var current: Metronome?
    /// The one before it, kept to answer `position(at:)` for frames just before a handover.
    private var previous: Metronome?
    /// Handovers not reached yet, in frame order.
    private var pending: [(from: Frame, metronome: Metronome?)] = []
    /// Every click before this frame has been produced.
    package private(set) var producedBefore: Frame = .min

    package init(_ metronome: Metronome?) {
        current = metronome
    }

    /// From `frame` on, `next` plays (nil: nothing) instead of whatever would play then. Clicks
    /// already produced at or after `frame` are the caller's to cancel.
    package mutating func hand(over frame: Frame, to next: Metronome?) {
        pending.removeAll { $0.from >= frame }
        if pending.isEmpty {
            current?.stop(at: frame)
        } else {
            pending[pending.count - 1].metronome?.stop(at: frame)
        }
        if frame <= producedBefore {
            previous = current
            current = next
        } else {
            pending.append((frame, next))
        }
    }

    /// Stops the clicks from `frame` on.
    package mutating func stop(at frame: Frame) { hand(over: frame, to: nil) }

    package var endFrame: Frame? {
        let last = pending.last.map { $0.metronome } ?? current
        guard let last else { return max(producedBefore, pending.last?.from ?? .min) }
        return last.endFrame
    }

    package mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        while let first = pending.first, first.from < horizon {
            current?.produce(before: first.from, body)
            previous = current
            current = first.metronome
            pending.removeFirst()
        }
        current?.produce(before: horizon, body)
        producedBefore = max(producedBefore, horizon)
    }

    /// The metronome that plays `frame` as far as is known now.
    package func metronome(at frame: Frame) -> Metronome? {
        if let p = pending.last(where: { $0.from <= frame }) { return p.metronome }
        return current
    }

    /// Where `frame` is in the music, from whichever metronome plays it.
    package func position(at frame: Frame) -> Metronome.Position? {
        metronome(at: frame)?.position(at: frame) ?? previous?.position(at: frame)
    }
}
