import Foundation
@testable import Patches

/// A small valid version 1 patch; each argument replaces one top-level value (given as JSON text)
/// so that a test can break exactly one thing.
func patchJSON(
    version: String = "1",
    tempo: String = "120",
    sounds: String = #"{ "kick": "kick.wav", "snare": "drums/snare.wav" }"#,
    players: String = #"[ { "id": "kick", "sound": "kick" }, { "id": "snare", "sound": "snare" } ]"#,
    pattern: String? = #"{ "steps": [["kick"], [], ["snare"], []] }"#,
    extra: String = ""
) -> String {
    var members = [
        #""version": \#(version)"#,
        #""tempo": \#(tempo)"#,
        #""sounds": \#(sounds)"#,
        #""players": \#(players)"#,
    ]
    if let pattern { members.append(#""pattern": \#(pattern)"#) }
    if !extra.isEmpty { members.append(extra) }
    return "{\n  " + members.joined(separator: ",\n  ") + "\n}\n"
}

/// Decodes `json` as if read from `/patches/drums.json`.
func decode(_ json: String) throws(PatchError) -> Patch {
    try PatchLoader.decode(Data(json.utf8), file: "drums.json", baseDirectory: "/patches")
}

/// The description of the error decoding `json` throws, or nil if it decodes.
func errorDescription(_ json: String) -> String? {
    do {
        _ = try decode(json)
        return nil
    } catch {
        return error.description
    }
}

/// The package's root directory, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // PatchesTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()
