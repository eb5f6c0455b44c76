import ArgumentParser
import DrumPlayer
import Foundation
import ProgramHost
import SFZ

/// Options shared by the commands that read a patch.
struct PatchOptions: ParsableArguments {
    @Option(name: .long, help: "The patch file to play: JSON (version 1 or 2) or an SFZ instrument (.sfz).")
    var patch: String = "Patches/drums.json"

    @Option(name: .long, help: "Tempo in quarter notes per minute, overriding the patch's (1 ≤ tempo ≤ 1000).")
    var tempo: Double?

    @Option(name: .long, help: "Play this pattern (default: the patch's song, or its first pattern; a version 1 patch's is named \"pattern\").")
    var pattern: String?

    @Flag(name: .long, help: "Play the patch's song.")
    var song = false

    @Flag(inversion: .prefixedNo, help: "Loop the song or pattern, or stop at its end (default: a song as the patch says, a pattern loops).")
    var loop: Bool?

    func validate() throws {
        if let tempo, !(tempo >= 1 && tempo <= 1000) {
            throw ValidationError("--tempo must be a number between 1 and 1000, got \(tempo)")
        }
        if pattern != nil && song { throw ValidationError("--pattern and --song cannot be used together") }
    }

    func makeProgram(oscPort: String? = nil, oscHost: String = "127.0.0.1", oscRoot: String? = nil, link: Bool = false) throws -> any LiveProgram {
        let selection: PatchSelection = song ? .song : pattern.map { .pattern($0) } ?? .automatic
        if patch.lowercased().hasSuffix(".sfz") {
            let imported = try SFZImporter.importSFZ(path: patch)
            for note in imported.notes { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }
            return try PatchProgram(kit: imported.kit, selection: selection, loop: loop, tempo: tempo, oscPort: oscPort, oscHost: oscHost,
                                    oscRoot: oscRoot, link: link)
        }
        return try PatchProgram(path: patch, selection: selection, loop: loop, tempo: tempo, oscPort: oscPort, oscHost: oscHost, oscRoot: oscRoot, link: link)
    }
}
