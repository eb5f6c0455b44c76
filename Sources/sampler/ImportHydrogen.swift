import ArgumentParser
import Foundation
import Hydrogen
import SamplerCore

struct ImportHydrogen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-hydrogen",
        abstract: "Convert a Hydrogen drumkit (drumkit.xml) or song (.h2song) into a version 2 patch.",
        discussion: """
        Instruments, velocity layers with their gains, volume and gain, pan (with Hydrogen's default pan \
        law), pitch, mute groups (as choke groups) and MIDI notes are carried over; the patch names the \
        kit's samples where they are (absolute paths) and has one pattern, "audition", that plays each \
        instrument in turn. A sample file the kit names that is not on disk is a warning (one per file) \
        and an error unless --allow-missing, which writes the kit without it. A song (.h2song) brings its \
        kit (looked up as Hydrogen does), its patterns (on Hydrogen's grid of 48 ticks per quarter note), \
        its pattern sequence as the patch's song (patterns played together merged), its tempo and tempo \
        markers: `sampler render --patch song.json --song` and `sampler play --patch song.json --song` play it. \
        Everything that cannot be carried over is listed as a note.
        """
    )

    @Flag(help: "Write the kit even when sample files it names are missing (they are left out).")
    var allowMissing = false

    @Argument(help: "The Hydrogen drumkit.xml or song (.h2song).")
    var drumkit: String

    @Option(help: "The patch file to write.")
    var out: String

    func run() throws {
        let result = drumkit.lowercased().hasSuffix(".h2song")
            ? try HydrogenSongImporter.importSong(path: drumkit) : try HydrogenKitImporter.importKit(path: drumkit)
        for line in result.missing {
            FileHandle.standardError.write(Data("warning: \(drumkit): missing sample file \(line)\n".utf8))
        }
        if !result.missing.isEmpty && !allowMissing {
            throw SamplerError("\(drumkit): \(result.missing.count) sample file\(result.missing.count == 1 ? " is" : "s are") missing (listed above); nothing written (--allow-missing writes the kit without them)")
        }
        try result.write(to: out)
        result.notes.forEach { print("note: \($0)") }
        print("wrote \(out): \(result.contentsDescription) from \(drumkit)")
    }
}
