import ArgumentParser
import Patches
import SamplerKit

/// Options shared by the commands that read a patch.
struct PatchOptions: ParsableArguments {
    @Option(name: .long, help: "The patch file (JSON, version 1 or 2) to play.")
    var patch: String = "Patches/drums.json"

    @Option(name: .long, help: "Tempo in quarter notes per minute, overriding the patch's (1 ≤ tempo ≤ 1000).")
    var tempo: Double?

    @Option(name: .long, help: "Play this pattern of a version 2 patch (default: its song, or its first pattern).")
    var pattern: String?

    @Flag(name: .long, help: "Play the song of a version 2 patch.")
    var song = false

    @Flag(inversion: .prefixedNo, help: "Loop the song or pattern, or stop at its end (default: a song as the patch says, a pattern loops).")
    var loop: Bool?

    func validate() throws {
        if let tempo, !(tempo >= 1 && tempo <= 1000) {
            throw ValidationError("--tempo must be a number between 1 and 1000, got \(tempo)")
        }
        if pattern != nil && song { throw ValidationError("--pattern and --song cannot be used together") }
    }

    func load() throws -> PatchDocument {
        let document: PatchDocument
        do { document = try PatchLoader.loadDocument(path: patch) } catch { throw SamplerError("\(error)") }
        if case .v1 = document, pattern != nil || song || loop != nil {
            throw SamplerError("\(patch): --pattern, --song and --loop/--no-loop need a version 2 patch (this one is version 1)")
        }
        return document
    }

    /// The program for the patch: a v1 patch's pattern, or a v2 kit's song or pattern.
    func makeProgram() throws -> any LiveProgram {
        switch try load() {
        case .v1(let patch):
            return PatchProgram(patch: patch, tempo: tempo)
        case .v2(let kit):
            let selection: DrumKitSelection = song ? .song : pattern.map { .pattern($0) } ?? .automatic
            return try DrumKitProgram(kit: kit, selection: selection, loop: loop, tempo: tempo)
        }
    }
}
