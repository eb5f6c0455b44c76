import ArgumentParser
import DrumPlayer
import SFZ

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a patch and every sound file it names; print a summary."
    )

    @Argument(help: "The patch file: JSON (version 1 or 2) or an SFZ instrument (.sfz), checked as `play --patch` reads it.")
    var patch: String

    func run() throws {
        if patch.lowercased().hasSuffix(".sfz") {
            // As `play` imports it: the opcodes it does not carry are listed after the summary.
            let imported = try SFZImporter.importSFZ(path: patch)
            try PatchFiles.validate(kit: imported.kit, from: patch).forEach { print($0) }
            for label in imported.labels { print("  \(label)") }
            for note in imported.notes { print("  note: \(note)") }
        } else {
            try PatchFiles.validate(path: patch).forEach { print($0) }
        }
    }
}
