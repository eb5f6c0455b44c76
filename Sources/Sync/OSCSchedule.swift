import Foundation
import SamplerCore

extension OSCMessage {
    /// The device frame this message acts on, and how that was decided (for the log line): its
    /// timetag's frame (`frameAt` maps host time to device frames); as soon as possible (two
    /// periods ahead of what `engine` has rendered) when it has none; as soon as possible too,
    /// reported late, when that frame is no longer reachable. Control thread.
    package func scheduledFrame(engine: Engine, sampleRate: Double, frameAt: (UInt64) -> Frame) -> (frame: Frame, when: String) {
        let period = max(1, engine.renderedFrame - engine.lastPeriodStart)
        let soonest = engine.renderedFrame + 2 * period
        guard let hostTime else { return (soonest, "as soon as possible") }
        let wanted = frameAt(hostTime)
        if wanted >= soonest { return (wanted, "on its timetag") }
        return (soonest, String(format: "late by %.1f ms", Double(soonest - wanted) / sampleRate * 1000))
    }
}
