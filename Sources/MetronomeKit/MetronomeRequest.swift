import Foundation
import ProgramHost
import SamplerCore
import Scheduling
import Sync

/// A metronome as asked for on the command line, in the user's words: checked option by option
/// (`validate`, messages naming the option) and then turned into settings (`makeSettings`, which
/// reads the tempo map file). Control thread only.
package struct MetronomeRequest {
    /// `120`, `97.3`, or klick's speed trainer `80-120/10`; nil with a map (default 120).
    package var tempo: String?
    package var mapFile: String?
    package var label: String?
    package var meter: String?
    package var accents: String?
    /// `quarter` (klick's convention) or `denominator`.
    package var beatUnit = "quarter"
    package var subdivide = 1
    package var countIn: Int?
    package var bars: Int?
    package var multiply: Double?
    package var timbre = "click"
    package var sound: String?
    package var accentSound: String?
    package var volume = 1.0
    package var pan = 0.0

    package init() {}

    /// Checks every option on its own; the first problem comes back as one sentence naming it.
    package func validate() throws(MetronomeOptionError) {
        func fail(_ message: String) -> MetronomeOptionError { MetronomeOptionError(description: message) }
        if tempo != nil && mapFile != nil { throw fail("give either a TEMPO or --map, not both") }
        if mapFile != nil && (meter != nil || accents != nil) {
            throw fail("--meter and --accents cannot be used with --map (each section of the map sets its own)")
        }
        if label != nil && mapFile == nil { throw fail("--label needs --map (labels name sections of a tempo map)") }
        let spec: TempoSpec
        do throws(TempoMapError) { spec = try TempoSpec(parsing: tempo ?? "120") } catch { throw fail(error.description) }
        let meter: Meter
        do throws(TempoMapError) {
            if let text = self.meter { meter = try Meter(parsing: text) } else { meter = .fourFour }
        } catch { throw fail("--meter: \(error.message)") }
        if let accents {
            let pattern: AccentPattern
            do throws(TempoMapError) { pattern = try AccentPattern(parsing: accents) } catch { throw fail("--accents: \(error.message)") }
            if pattern.beats.count != meter.beats {
                throw fail("--accents \"\(accents)\" has \(pattern.beats.count) beats but the meter \(meter) has \(meter.beats)")
            }
        }
        if beatUnit != "quarter" && beatUnit != "denominator" {
            throw fail("--beat-unit must be quarter or denominator, got \"\(beatUnit)\"")
        }
        if !Metronome.subdivisionRange.contains(subdivide) {
            throw fail("--subdivide must be 1 to \(Metronome.subdivisionRange.upperBound) notes per beat, got \(subdivide)")
        }
        if let countIn, !(0...1000).contains(countIn) { throw fail("--count-in must be 0 to 1000 bars (0: two beats), got \(countIn)") }
        if let bars, !(1...10_000_000).contains(bars) { throw fail("--bars must be a positive number of bars, got \(bars)") }
        if let multiply, !(multiply > 0 && multiply <= 100) {
            throw fail("--multiply must be a number greater than 0 and at most 100, got \(formatNumber(multiply))")
        }
        if ClickTimbre(rawValue: timbre) == nil {
            throw fail("--timbre must be \(ClickTimbre.allCases.map(\.rawValue).joined(separator: " or ")), got \"\(timbre)\"")
        }
        if !(volume >= 0 && volume <= 16) { throw fail("--volume must be between 0 and 16, got \(formatNumber(volume))") }
        if !(pan >= -1 && pan <= 1) { throw fail("--pan must be between -1 and 1, got \(formatNumber(pan))") }
        if mapFile == nil {
            // The tempos actually played must be in range too.
            for t in spec.tempos {
                let played = t * (multiply ?? 1) * (beatUnit == "denominator" ? 4 / Double(meter.denominator) : 1)
                if !TempoMap.tempoRange.contains(played) {
                    throw fail(TempoMap.tempoMessage(played) + (multiply != nil || beatUnit == "denominator" ? " (after --multiply and --beat-unit)" : ""))
                }
            }
        }
    }

    /// The settings, reading the tempo map when there is one. Errors: the map file's
    /// (`song.map:3:9: …`) or an option's.
    package func makeSettings() throws -> MetronomeSettings {
        try validate()
        var map: TempoMap
        var title: String
        if let mapFile {
            map = try TempoMap(contentsOfFile: mapFile)
            if let label { map = try map.starting(atLabel: label) }
            title = mapFile + (label.map { " from \($0)" } ?? "")
        } else {
            let meter = try self.meter.map { try Meter(parsing: $0) } ?? .fourFour
            let pattern = try accents.map { try AccentPattern(parsing: $0) }
            switch try TempoSpec(parsing: tempo ?? "120") {
            case .constant(let t):
                map = try .constant(bpm: t, meter: meter, pattern: pattern)
                title = "\(formatNumber(t)) bpm \(meter)"
            case .trainer(let from, let to, let bars):
                map = try .trainer(from: from, to: to, barsPerBPM: bars, meter: meter, pattern: pattern)
                title = "\(formatNumber(from)) to \(formatNumber(to)) bpm, 1 bpm per \(formatNumber(bars)) bars, \(meter)"
            }
        }
        if beatUnit == "denominator" { map = try map.tempoCountingDenominators() }
        if let multiply {
            map = try map.scaled(by: multiply)
            title += " ×\(formatNumber(multiply))"
        }
        if let countIn { map = try map.withCountIn(bars: countIn) }
        var settings = MetronomeSettings(map: map, title: title)
        settings.subdivision = subdivide
        settings.bars = bars
        settings.timbre = ClickTimbre(rawValue: timbre)!
        settings.soundFile = sound
        settings.accentSoundFile = accentSound
        settings.volume = volume
        settings.pan = pan
        settings.allowsTempoChanges = mapFile == nil
        settings.mapFile = mapFile
        return settings
    }
}

/// A bad command-line option, as one sentence naming it.
package struct MetronomeOptionError: Error, CustomStringConvertible, Equatable {
    package let description: String
}

extension TempoSpec {
    var tempos: [Double] {
        switch self {
        case .constant(let t): [t]
        case .trainer(let a, let b, _): [a, b]
        }
    }
}
