import Foundation
import ProgramHost
import SamplerCore
import Sync

/// The built-in metronome sounds, synthesized in code at whatever rate the server runs.
///
/// Every one starts at its peak on its first sample (a sum of cosines, all at phase 0), so the
/// click is heard exactly on the frame it was scheduled for, and decays exponentially to
/// silence (−60 dB) within a few tens of milliseconds. Accents are higher and louder.
package enum ClickTimbre: String, CaseIterable, Sendable {
    /// A short, bright electronic click.
    case click
    /// A hollow, woody knock (two inharmonic modes and a bright transient).
    case woodblock

    /// One partial: frequency (Hz), amplitude, decay time constant (s).
    typealias Partial = (frequency: Double, amplitude: Double, tau: Double)

    func partials(accent: Bool) -> [Partial] {
        switch (self, accent) {
        case (.click, true): [(2640, 0.8, 0.0020), (5280, 0.2, 0.0010)]
        case (.click, false): [(1760, 0.8, 0.0020), (3520, 0.2, 0.0010)]
        case (.woodblock, true): [(1240, 0.55, 0.018), (2170, 0.3, 0.009), (4700, 0.15, 0.002)]
        case (.woodblock, false): [(880, 0.55, 0.018), (1540, 0.3, 0.009), (3900, 0.15, 0.002)]
        }
    }
}

package enum ClickSounds {
    /// Peak level of a normal click relative to an accent.
    package static let normalLevel = 0.7

    /// The samples of `timbre` at `sampleRate` (mono; the first sample is the peak).
    package static func samples(_ timbre: ClickTimbre, accent: Bool, sampleRate: Double) -> [Float] {
        let partials = timbre.partials(accent: accent)
        let level = accent ? 1 : normalLevel
        // Long enough for the slowest partial to fall 60 dB (ln 1000 ≈ 6.9 time constants).
        let frames = max(1, Int((partials.map(\.tau).max()! * 6.9 * sampleRate).rounded(.up)))
        return (0..<frames).map { n in
            let t = Double(n) / sampleRate
            var x = 0.0
            for p in partials { x += p.amplitude * cos(2 * .pi * p.frequency * t) * exp(-t / p.tau) }
            return Float(level * x)
        }
    }

    /// `samples` as a `Sound`.
    package static func sound(_ timbre: ClickTimbre, accent: Bool, sampleRate: Double) -> Sound {
        // Cannot fail: one channel, at least one frame, a positive rate.
        try! Sound(channels: [samples(timbre, accent: accent, sampleRate: sampleRate)], sampleRate: sampleRate)
    }
}
