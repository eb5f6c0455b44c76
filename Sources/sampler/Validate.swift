import Foundation
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
        let kit: Patch
        do { kit = try PatchLoader.load(path: patch) } catch { throw SamplerError("\(error)") }
        try report(kit)
    }

    private func report(_ kit: Patch) throws {
        let loader = SoundFileLoader()
        var lines: [String] = []
        let notes = kit.resolvedMIDINotes
        for (i, instrument) in kit.instruments.enumerated() {
            var samples: [String] = []
            for (l, layer) in instrument.layers.enumerated() {
                for (s, sample) in layer.samples.enumerated() {
                    do {
                        let sound = try loader.load(path: sample.resolvedPath)
                        samples.append("\(sample.path) (\(describe(sound)))")
                    } catch {
                        throw SamplerError("\(LoadedPatch.place(kit, i, l, s)): \(error)")
                    }
                }
            }
            let note = notes[i].map { "note \($0)" } ?? "no note"
            let streamed = instrument.layers.flatMap(\.samples).contains { $0.loading == .stream } ? ", streamed" : ""
            lines.append("  \(instrument.id): \(instrument.layers.count) layer\(instrument.layers.count == 1 ? "" : "s"), \(note), \(instrument.voices) voice\(instrument.voices == 1 ? "" : "s")\(streamed): \(samples.joined(separator: ", "))")
        }
        for pattern in kit.patterns {
            let length = pattern.fillsItsBars ? "" : " (\(pattern.stepCount) steps)"
            lines.append("  pattern \(pattern.name): \(pattern.bars) bar\(pattern.bars == 1 ? "" : "s")\(length) of \(pattern.beatsPerBar) beats, \(pattern.stepsPerBeat) steps per beat, \(pattern.tracks.count) tracks" + (pattern.swing > 0 ? ", swing \(formatTempo(pattern.swing))%" : ""))
        }
        var summary = "\(patch): OK: version \(kit.version), \(formatTempo(kit.tempo)) bpm, \(kit.instruments.count) instruments, \(kit.patterns.count) patterns"
        if let song = kit.song {
            let plays = song.entries.reduce(0) { $0 + $1.repeats }
            summary += ", song of \(song.entries.count) entries (\(plays) pattern plays\(song.loop ? ", looping" : ""))"
        }
        print(summary)
        lines.forEach { print($0) }
    }

    private func describe(_ sound: Sound) -> String {
        "\(sound.channelCount) ch, \(Int(sound.sampleRate)) Hz, \(String(format: "%.3f", sound.duration)) s"
    }

    private func formatTempo(_ t: Double) -> String {
        t == t.rounded() ? String(Int(t)) : String(t)
    }
}
