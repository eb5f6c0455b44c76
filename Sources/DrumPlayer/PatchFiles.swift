import Foundation
import Patches
import SamplerCore
import SoundFiles

/// What `sampler convert` and `sampler validate` do with a patch file. Control thread only.
package enum PatchFiles {
    /// Writes the patch at `path` (version 1 or 2) to `out` in the current format (version 2),
    /// with its sample paths rewritten to name the same files from `out`'s directory, after
    /// checking that the written text reads back as the same patch. Returns the line to print.
    package static func convert(path patch: String, to out: String) throws -> String {
        let kit: Patch
        do { kit = try PatchLoader.load(path: patch) } catch { throw SamplerError("\(error)") }
        let directory = URL(fileURLWithPath: out).deletingLastPathComponent().path
        let text = kit.withSamplePaths(relativeTo: directory).patchJSON()
        // The written patch must read back as the same patch: fail here rather than in `play`.
        do {
            let back = try PatchLoader.decode(Data(text.utf8), file: out, baseDirectory: directory)
            var expected = kit
            expected.version = 2
            expected.file = out
            guard Self.sameButPaths(back, expected) else {
                throw SamplerError("the converted patch does not read back as the original (please report this)")
            }
        } catch let error as PatchError {
            throw SamplerError("the converted patch does not validate: \(error)")
        }
        do { try text.write(toFile: out, atomically: true, encoding: .utf8) } catch {
            throw SamplerError("\(out): cannot write the patch (\(error.localizedDescription))")
        }
        return "wrote \(out): version 2, \(kit.instruments.count) instruments, \(kit.patterns.count) pattern\(kit.patterns.count == 1 ? "" : "s") from \(patch) (version \(kit.version))"
    }

    private static func sameButPaths(_ a: Patch, _ b: Patch) -> Bool {
        func normalized(_ p: Patch) -> Patch {
            var p = p
            for i in p.instruments.indices {
                p.instruments[i].gainDb = Double(Gain(decibels: p.instruments[i].gainDb).linear)
                for l in p.instruments[i].layers.indices {
                    for s in p.instruments[i].layers[l].samples.indices {
                        p.instruments[i].layers[l].samples[s].path = p.instruments[i].layers[l].samples[s].resolvedPath
                    }
                }
            }
            p.file = ""
            return p
        }
        return normalized(a) == normalized(b)
    }

    /// Loads the patch at `path` and every sound file it names; returns the summary lines to print
    /// (the first names the file: "PATH: OK: …"). Throws the first error, naming its file.
    package static func validate(path patch: String) throws -> [String] {
        let kit: Patch
        do { kit = try PatchLoader.load(path: patch) } catch { throw SamplerError("\(error)") }
        return try report(kit, patch: patch)
    }

    /// Checks a patch made from another format (an imported SFZ instrument) and every sound file
    /// it names, as `validate(path:)` checks a patch file: the summary and one line per
    /// instrument and pattern. Control thread.
    package static func validate(kit: Patch, from path: String) throws -> [String] {
        try report(kit, patch: path)
    }

    private static func report(_ kit: Patch, patch: String) throws -> [String] {
        let loader = SoundFileLoader()
        // Each file is decoded once, however many layers name it.
        var described: [String: String] = [:]
        var lines: [String] = []
        let notes = kit.resolvedMIDINotes
        for (i, instrument) in kit.instruments.enumerated() {
            var samples: [String] = []
            for (l, layer) in instrument.layers.enumerated() {
                for (s, sample) in layer.samples.enumerated() {
                    do {
                        if described[sample.resolvedPath] == nil {
                            described[sample.resolvedPath] = describe(try sample.data.map { try loader.load(bytes: $0, name: sample.path) }
                                                                      ?? loader.load(path: sample.resolvedPath))
                        }
                        samples.append("\(sample.path) (\(described[sample.resolvedPath]!))")
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
        return [summary] + lines
    }

    private static func describe(_ sound: Sound) -> String {
        "\(sound.channelCount) ch, \(Int(sound.sampleRate)) Hz, \(String(format: "%.3f", sound.duration)) s"
    }

    private static func formatTempo(_ t: Double) -> String {
        t == t.rounded() ? String(Int(t)) : String(t)
    }
}
