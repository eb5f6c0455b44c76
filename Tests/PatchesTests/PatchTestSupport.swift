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

/// A small valid version 2 patch; each argument replaces one part (JSON text).
func kitJSON(
    instruments: String = #"""
    [ { "id": "kick", "layers": [ { "samples": ["kick.wav"] } ] },
      { "id": "snare", "layers": [ { "velocity": [1, 63], "samples": ["soft.wav"] },
                                   { "velocity": [64, 127], "samples": ["hard1.wav", "hard2.wav"], "selection": "random", "seed": 9 } ],
        "gainDb": -3, "pan": -0.5, "tune": 2, "midiNote": 40, "chokeGroup": 0, "voices": 3 } ]
    """#,
    pattern: String = #"""
    { "name": "beat", "beatsPerBar": 2, "stepsPerBeat": 2, "bars": 1, "swing": 25, "seed": 3,
      "humanize": { "seed": 5, "frames": 10, "velocity": 4 },
      "tracks": { "kick": [100, 0, 0, 0], "snare": { "steps": [0, 0, 90, 30], "probability": [1, 1, 0.5, 1] } } }
    """#,
    song: String? = #"{ "sequence": [ { "pattern": "beat", "repeats": 2 }, { "pattern": "beat", "tempo": 90 } ], "loop": true }"#,
    extra: String = ""
) -> String {
    var members = [#""version": 2"#, #""tempo": 120"#, #""instruments": \#(instruments)"#, #""patterns": [\#(pattern)]"#]
    if let song { members.append(#""song": \#(song)"#) }
    if !extra.isEmpty { members.append(extra) }
    return "{\n  " + members.joined(separator: ",\n  ") + "\n}\n"
}

func decodeKit(_ json: String) throws(PatchError) -> Patch {
    let kit = try PatchLoader.decode(Data(json.utf8), file: "kit.json", baseDirectory: "/kits")
    guard kit.version == 2 else { throw PatchError(file: "kit.json", message: "decoded as version \(kit.version)") }
    return kit
}

func kitError(_ json: String) -> String? {
    do {
        _ = try decodeKit(json)
        return nil
    } catch {
        return error.description
    }
}
