import ArgumentParser
import Patches
import SamplerCore
import SamplerKit
import SoundFiles

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a patch and every sound file it names; print a summary."
    )

    @Argument(help: "The patch file (JSON).")
    var patch: String

    func run() throws {
        let decoded: Patch
        do { decoded = try PatchLoader.load(path: patch) } catch { throw SamplerError("\(error)") }
        let loader = SoundFileLoader()
        var lines: [String] = []
        for entry in decoded.sounds {
            do {
                let sound = try loader.load(path: entry.resolvedPath)
                lines.append("  \(entry.id): \(entry.path) (\(sound.channelCount) ch, \(Int(sound.sampleRate)) Hz, \(String(format: "%.3f", sound.duration)) s)")
            } catch {
                throw SamplerError("\(patch): sounds.\(entry.id): \(error)")
            }
        }
        var summary = "\(patch): OK: version \(decoded.version), \(formatTempo(decoded.tempo)) bpm, \(decoded.sounds.count) sounds, \(decoded.players.count) players"
        if let pattern = decoded.pattern {
            summary += ", pattern of \(pattern.steps.count) steps (\(pattern.stepsPerBeat) per beat, \(pattern.beatsPerBar) beats per bar)"
        }
        print(summary)
        lines.forEach { print($0) }
    }

    private func formatTempo(_ t: Double) -> String {
        t == t.rounded() ? String(Int(t)) : String(t)
    }
}
