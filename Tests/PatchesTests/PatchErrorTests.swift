import Foundation
import Patches
import Testing

/// Every error names the file, the JSON path and what is wrong, with the offending value.
@Suite struct PatchErrorTests {
    @Test func countsBeyondTheLimitsAreErrorsNamingThePath() {
        let players = (0..<4097).map { #"{ "id": "p\#($0)", "sound": "kick" }"# }.joined(separator: ", ")
        #expect(errorDescription(patchJSON(players: "[\(players)]")) == "drums.json: players: at most 4096 players, got 4097")
        let sounds = (0..<100_001).map { #""s\#($0)": "s.wav""# }.joined(separator: ", ")
        #expect(errorDescription(patchJSON(sounds: "{\(sounds)}")) == "drums.json: sounds: at most 100000 sounds, got 100001")
    }

    @Test func descriptionIsFilePathAndMessage() {
        #expect(PatchError(file: "a.json", path: "players[0]", message: "broken").description == "a.json: players[0]: broken")
        #expect(PatchError(file: "a.json", path: "", message: "broken").description == "a.json: broken")
    }

    @Test func wrongTypeShowsTheValue() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick" }, { "id": "snare", "sound": "snare" }, { "id": "hat", "sound": "kick", "pan": "left" } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[2].pan: expected a number between -1 and 1, got "left""#)
    }

    @Test func wrongTypeForAContainerNamesItsKind() {
        #expect(errorDescription(patchJSON(sounds: #"["kick.wav"]"#)) == "drums.json: sounds: expected an object, got an array")
        #expect(errorDescription(patchJSON(players: "{}")) == "drums.json: players: expected an array, got an empty object")
        #expect(errorDescription("[]") == "drums.json: expected an object, got an empty array")
    }

    @Test func boolIsNotANumber() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "gain": true } ]"#)
        #expect(errorDescription(json) == "drums.json: players[0].gain: expected a number between 0 and 16, got true")
    }

    @Test func nullIsNotANumber() {
        #expect(errorDescription(patchJSON(tempo: "null")) == "drums.json: tempo: expected a number between 1 and 1000, got null")
    }

    @Test func panOutOfRange() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "pan": 1.5 } ]"#)
        #expect(errorDescription(json) == "drums.json: players[0].pan: expected a number between -1 and 1, got 1.5")
    }

    @Test func gainOutOfRange() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "gain": -0.5 } ]"#)
        #expect(errorDescription(json) == "drums.json: players[0].gain: expected a number between 0 and 16, got -0.5")
    }

    @Test func gainDbOutOfRange() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "gainDb": 30 } ]"#)
        #expect(errorDescription(json) == "drums.json: players[0].gainDb: expected a number between -120 and 24, got 30")
    }

    @Test func tempoMustBePositive() {
        #expect(errorDescription(patchJSON(tempo: "0")) == "drums.json: tempo: expected a number between 1 and 1000, got 0")
        #expect(errorDescription(patchJSON(tempo: "0.5")) == "drums.json: tempo: expected a number between 1 and 1000, got 0.5")
    }

    @Test func tempoAtMostAThousand() {
        #expect(errorDescription(patchJSON(tempo: "1000.5")) == "drums.json: tempo: expected a number between 1 and 1000, got 1000.5")
    }

    @Test func gainAndGainDbTogether() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "gain": 1, "gainDb": 0 } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[0]: give either "gain" or "gainDb", not both"#)
    }

    @Test func unknownTopLevelKey() {
        #expect(errorDescription(patchJSON(extra: #""swing": 0.1"#)) == "drums.json: swing: unknown key (expected one of: version, tempo, sounds, players, pattern)")
    }

    @Test func unknownPlayerKey() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick" }, { "id": "snare", "sound": "snare", "volume": 0.5 } ]"#)
        #expect(errorDescription(json) == "drums.json: players[1].volume: unknown key (expected one of: id, sound, gain, gainDb, pan, loops, stream, preload)")
    }

    @Test func unknownPatternKey() {
        let json = patchJSON(pattern: #"{ "stepsPerBar": 16, "steps": [[]] }"#)
        #expect(errorDescription(json) == "drums.json: pattern.stepsPerBar: unknown key (expected one of: stepsPerBeat, beatsPerBar, steps)")
    }

    @Test func missingRequiredKey() {
        let json = patchJSON(players: #"[ { "id": "kick" } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[0]: missing required key "sound""#)
    }

    @Test func missingVersion() {
        #expect(errorDescription(#"{ "tempo": 120 }"#) == #"drums.json: missing required key "version""#)
    }

    @Test func playerNamingAnUnknownSound() {
        let json = patchJSON(players: #"[ { "id": "bell", "sound": "cowbell" } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[0].sound: unknown sound "cowbell" (expected one of: kick, snare)"#)
    }

    @Test func stepNamingAnUnknownPlayer() {
        let json = patchJSON(pattern: #"{ "steps": [["kick"], [], ["snare", "tom"]] }"#)
        #expect(errorDescription(json) == #"drums.json: pattern.steps[2][1]: unknown player "tom" (expected one of: kick, snare)"#)
    }

    @Test func playerTwiceInOneStep() {
        let json = patchJSON(pattern: #"{ "steps": [["kick", "kick"]] }"#)
        #expect(errorDescription(json) == #"drums.json: pattern.steps[0][1]: player "kick" appears twice in this step"#)
    }

    @Test func emptyPattern() {
        #expect(errorDescription(patchJSON(pattern: #"{ "steps": [] }"#)) == "drums.json: pattern.steps: expected at least one step, got an empty array")
    }

    @Test func stepsPerBeatOutOfRange() {
        let json = patchJSON(pattern: #"{ "stepsPerBeat": 0, "steps": [[]] }"#)
        #expect(errorDescription(json) == "drums.json: pattern.stepsPerBeat: expected an integer between 1 and 64, got 0")
    }

    @Test func duplicatePlayerID() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick" }, { "id": "snare", "sound": "snare" }, { "id": "kick", "sound": "snare" } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[2].id: duplicate player id "kick" (first used by players[0])"#)
    }

    @Test func emptyPlayerID() {
        let json = patchJSON(players: #"[ { "id": "", "sound": "kick" } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[0].id: expected a non-empty string, got """#)
    }

    @Test func emptySoundPath() {
        #expect(errorDescription(patchJSON(sounds: #"{ "kick": "" }"#)) == #"drums.json: sounds.kick: expected a non-empty string, got """#)
    }

    @Test func nonIntegerLoops() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "loops": 1.5 } ]"#)
        #expect(errorDescription(json) == "drums.json: players[0].loops: expected an integer of at least -1, got 1.5")
    }

    @Test func loopsBelowMinusOne() {
        let json = patchJSON(players: #"[ { "id": "kick", "sound": "kick", "loops": -2 } ]"#)
        #expect(errorDescription(json) == "drums.json: players[0].loops: expected an integer of at least -1, got -2")
    }

    @Test func unsupportedVersion() {
        #expect(errorDescription(patchJSON(version: "3")) == "drums.json: version: unsupported version 3 (this build reads versions 1 and 2)")
    }

    @Test func versionMustBeAnInteger() {
        #expect(errorDescription(patchJSON(version: #""1""#)) == #"drums.json: version: expected an integer, got "1""#)
    }

    @Test func emptyPlayersArray() {
        #expect(errorDescription(patchJSON(players: "[]")) == "drums.json: players: expected at least one player, got an empty array")
    }

    @Test func malformedJSONNamesLineAndColumn() {
        let json = """
            {
              "version": 1,
              "sounds": { "kick": "kick.wav" }
              "players": []
            }
            """
        #expect(errorDescription(json) == "drums.json: invalid JSON at line 4, column 3: expected ',' or '}', got a string")
    }

    @Test func missingFile() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nope-\(UUID().uuidString).json").path
        #expect(throws: PatchError(file: path, path: "", message: "cannot read the file (no such file)")) {
            try PatchLoader.load(path: path)
        }
    }

    @Test func missingFileIsNamedAsGiven() {
        #expect(throws: PatchError(file: "nope.json", message: "cannot read the file (no such file)")) {
            try PatchLoader.load(path: "nope.json")
        }
        let error = PatchError(file: "nope.json", message: "cannot read the file (no such file)")
        #expect(error.description == "nope.json: cannot read the file (no such file)")
    }

    @Test func directoryIsNotAPatch() {
        let path = FileManager.default.temporaryDirectory.path
        #expect(throws: PatchError(file: path, message: "cannot read the file (it is a directory)")) {
            try PatchLoader.load(path: path)
        }
    }

    @Test func pathsQuoteKeysThatAreNotIdentifiers() {
        #expect(errorDescription(patchJSON(sounds: #"{ "big kick": 3 }"#)) == #"drums.json: sounds["big kick"]: expected a non-empty string, got 3"#)
    }

    @Test func longStringsAreShortened() {
        let json = patchJSON(tempo: #""\#(String(repeating: "a", count: 50))""#)
        #expect(errorDescription(json) == #"drums.json: tempo: expected a number between 1 and 1000, got "\#(String(repeating: "a", count: 40))…""#)
    }
}
