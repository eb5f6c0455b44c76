import ArgumentParser
import DrumPlayer

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
        print(try PatchFiles.convert(path: patch, to: out))
    }
}
