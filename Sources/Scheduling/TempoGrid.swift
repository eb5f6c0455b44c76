import SamplerCore

/// A grid of evenly spaced positions at a constant tempo, anchored at an absolute frame.
///
/// Position k lies at `origin + round(k × 60 × sampleRate / (bpm × unitsPerQuarter))`: every
/// position is computed from the anchor and its index, rounded once, never by adding rounded
/// intervals, so a grid never drifts however long it runs. Pure value; any thread.
package struct TempoGrid: Equatable, Sendable {
    /// The frame of position 0.
    package var origin: Frame
    /// Tempo in quarter notes per minute.
    package var bpm: Double
    /// Frames per second.
    package var sampleRate: Double
    /// Grid positions per quarter note (4 for sixteenths, 0.5 for half notes, …).
    package var unitsPerQuarter: Double

    package init(origin: Frame, bpm: Double, sampleRate: Double, unitsPerQuarter: Double = 1) {
        precondition(bpm > 0 && sampleRate > 0 && unitsPerQuarter > 0, "tempo grid needs positive values")
        self.origin = origin
        self.bpm = bpm
        self.sampleRate = sampleRate
        self.unitsPerQuarter = unitsPerQuarter
    }

    /// Frames per grid unit (not rounded).
    package var framesPerUnit: Double { 60 * sampleRate / (bpm * unitsPerQuarter) }

    /// The frame of position `index`.
    package func frame(at index: Int64) -> Frame {
        origin + Frame((Double(index) * 60 * sampleRate / (bpm * unitsPerQuarter)).rounded())
    }

    /// The first position whose frame is at or after `frame`.
    package func firstIndex(atOrAfter frame: Frame) -> Int64 {
        var k = Int64(max(0, (Double(frame - origin) / framesPerUnit).rounded(.down)))
        while k > 0 && self.frame(at: k - 1) >= frame { k -= 1 }
        while self.frame(at: k) < frame { k += 1 }
        return k
    }
}
