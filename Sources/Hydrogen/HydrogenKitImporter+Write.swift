import Foundation
import Patches
import SamplerCore

extension HydrogenKitImporter.Result {
    /// Writes the imported kit (or song) to `out` as a patch, after checking that the written
    /// text reads back as a valid patch (so a bad import fails here rather than in `play`).
    /// Control thread only.
    package func write(to out: String) throws {
        let text = kit.patchJSON()
        do {
            _ = try PatchLoader.decode(Data(text.utf8), file: out, baseDirectory: "/")
        } catch {
            throw SamplerError("the converted patch does not validate: \(error)")
        }
        do { try text.write(toFile: out, atomically: true, encoding: .utf8) } catch {
            throw SamplerError("\(out): cannot write the patch (\(error.localizedDescription))")
        }
    }

    /// What was written, for the last line `sampler import-hydrogen` prints.
    package var contentsDescription: String {
        var what = "\(kit.instruments.count) instruments"
        if let song = kit.song {
            what += ", \(kit.patterns.count) patterns, a song of \(song.entries.reduce(0) { $0 + $1.repeats }) columns"
        }
        return what
    }
}
