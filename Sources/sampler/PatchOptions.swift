import ArgumentParser
import Patches
import SamplerKit

/// Options shared by the commands that read a patch.
struct PatchOptions: ParsableArguments {
    @Option(name: .long, help: "The patch file (JSON) to play.")
    var patch: String = "Patches/drums.json"

    @Option(name: .long, help: "Tempo in quarter notes per minute, overriding the patch's (0 < tempo ≤ 1000).")
    var tempo: Double?

    func validate() throws {
        if let tempo, !(tempo > 0 && tempo <= 1000) {
            throw ValidationError("--tempo must be a number greater than 0 and at most 1000, got \(tempo)")
        }
    }

    func load() throws -> Patch {
        do { return try PatchLoader.load(path: patch) } catch { throw SamplerError("\(error)") }
    }
}
