import ArgumentParser
import Foundation
import Patches
import SamplerCore
import SamplerKit

/// `sampler convert old.json --out new.json`: a patch of any version written in the current one.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a patch (version 1 or 2) in the current format (version 2).",
        discussion: """
        A version 1 patch's players become instruments of one sample each (gain, pan, loops and \
        "stream"/"preload" kept), its pattern a pattern named "pattern" that plays them at full \
        velocity for as many steps as it had. Relative sample paths are rewritten to name the same \
        files from the new patch's directory. The converted patch plays frame for frame as the old one.
        """
    )

    @Argument(help: "The patch file to convert.")
    var patch: String

    @Option(help: "The patch file to write (may be the same file).")
    var out: String

    func run() throws {
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
        print("wrote \(out): version 2, \(kit.instruments.count) instruments, \(kit.patterns.count) pattern\(kit.patterns.count == 1 ? "" : "s") from \(patch) (version \(kit.version))")
    }

    /// Whether `a` and `b` are the same patch once their samples are compared by resolved path
    /// and their gains as the engine applies them (a factor written for a level beyond the
    /// decibel range reads back within a rounding error).
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
}
