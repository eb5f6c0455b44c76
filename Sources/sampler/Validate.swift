import ArgumentParser
import DrumPlayer

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a patch and every sound file it names; print a summary."
    )

    @Argument(help: "The patch file (JSON).")
    var patch: String

    func run() throws {
        try PatchFiles.validate(path: patch).forEach { print($0) }
    }
}
