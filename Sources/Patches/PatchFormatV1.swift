import Foundation

/// Version 1 of the patch file format:
///
/// ```json
/// {
///   "version": 1,
///   "tempo": 120,
///   "sounds": { "kick": "../Samples/kick.wav" },
///   "players": [ { "id": "kick", "sound": "kick", "gainDb": -3, "pan": 0, "loops": 0 },
///                { "id": "backing", "sound": "song", "stream": true } ],
///   "pattern": { "stepsPerBeat": 4, "beatsPerBar": 4, "steps": [["kick"], [], ["kick"], []] }
/// }
/// ```
///
/// It reads into the one model (`Patch`): each player becomes an instrument of one layer holding
/// its sound (so a player hit by its General MIDI name, e.g. "kick", also answers that MIDI note),
/// its gain, pan, loops and streaming kept; the pattern becomes a pattern named "pattern" whose
/// tracks play the players on their steps at velocity 127 (unity gain), `stepCount` steps long.
enum PatchFormatV1 {
    static let keys = ["version", "tempo", "sounds", "players", "pattern"]
    static let playerKeys = ["id", "sound", "gain", "gainDb", "pan", "loops", "stream", "preload"]
    static let patternKeys = ["stepsPerBeat", "beatsPerBar", "steps"]

    // At least 1 bpm: slower grids overflow 64-bit frame positions within the song lengths allowed.
    static let tempoRange = NumberRange.between(1, 1000)
    static let gainRange = NumberRange.between(0, 16)
    static let gainDbRange = NumberRange.between(-120, 24)
    static let panRange = NumberRange.between(-1, 1)
    static let loopsRange = NumberRange.atLeast(-1)
    static let stepsPerBeatRange = NumberRange.between(1, 64)
    static let beatsPerBarRange = NumberRange.between(1, 64)

    static func decode(_ root: JSONObjectNode, file: String, baseDirectory: URL) throws(PatchError) -> Patch {
        try root.rejectUnknownKeys(allowed: keys)
        let tempo = try root.required("tempo").number(in: tempoRange)
        let sounds = try decodeSounds(root.required("sounds"), baseDirectory: baseDirectory)
        let players = try decodePlayers(root.required("players"), sounds: sounds)
        let pattern = try root.optional("pattern").map { node throws(PatchError) in
            try decodePattern(node, playerIDs: players.map(\.id))
        }
        return Patch(tempo: tempo, instruments: players, patterns: pattern.map { [$0] } ?? [], song: nil, file: file,
                     version: 1)
    }

    /// `{ "id": "path", … }`: id → the file.
    private static func decodeSounds(_ node: JSONNode, baseDirectory: URL) throws(PatchError) -> [String: SampleFile] {
        var sounds: [String: SampleFile] = [:]
        let entries = try node.object().entries
        try PatchLimits.check(entries.count, PatchLimits.sounds, "sounds", at: node)
        for (id, pathNode) in entries {
            let path = try pathNode.nonEmptyString()
            sounds[id] = SampleFile(path: path, resolvedPath: resolve(path, against: baseDirectory), place: pathNode.path.description)
        }
        return sounds
    }

    private static func resolve(_ path: String, against directory: URL) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: path, relativeTo: directory).standardizedFileURL.path
    }

    private static func decodePlayers(_ node: JSONNode, sounds: [String: SampleFile]) throws(PatchError) -> [DrumInstrument] {
        let soundIDs = sounds.keys.sorted()
        let elements = try node.array()
        guard !elements.isEmpty else { throw node.error("expected at least one player, got an empty array") }
        try PatchLimits.check(elements.count, PatchLimits.players, "players", at: node)
        var players: [DrumInstrument] = []
        var firstUse: [String: JSONPath] = [:]
        for element in elements {
            let object = try element.object(allowedKeys: playerKeys)
            let idNode = try object.required("id")
            let id = try idNode.nonEmptyString()
            if let first = firstUse[id] {
                throw idNode.error("duplicate player id \(JSONValue.quoted(id)) (first used by \(first))")
            }
            firstUse[id] = element.path

            let soundNode = try object.required("sound")
            let sound = try soundNode.string()
            guard var sample = sounds[sound] else {
                throw soundNode.error(
                    "unknown sound \(JSONValue.quoted(sound)) (expected one of: \(soundIDs.joined(separator: ", ")))")
            }

            var gain = 1.0
            switch (object.optional("gain"), object.optional("gainDb")) {
            case (_?, _?):
                throw object.error("give either \"gain\" or \"gainDb\", not both")
            case (let linear?, nil):
                gain = try linear.number(in: gainRange)
            case (nil, let decibels?):
                gain = pow(10, try decibels.number(in: gainDbRange) / 20)
            case (nil, nil):
                break
            }
            let pan = try object.optional("pan")?.number(in: panRange) ?? 0
            let loops = try object.optional("loops")?.integer(in: loopsRange) ?? 0
            sample.loading = try decodeLoading(object)
            // gain 0 is silence: -infinity dB (written back as "gain": 0).
            players.append(DrumInstrument(id: id, layers: [DrumLayer(samples: [sample])],
                                          gainDb: gain == 1 ? 0 : 20 * log10(gain), pan: pan, loops: loops))
        }
        return players
    }

    /// `"stream": true` or `"preload": true` (at most one of them true).
    static func decodeLoading(_ object: JSONObjectNode) throws(PatchError) -> SampleLoading {
        func flag(_ key: String) throws(PatchError) -> Bool {
            guard let node = object.optional(key) else { return false }
            guard case .bool(let value) = node.value else { throw node.mismatch(expected: "true or false") }
            return value
        }
        switch (try flag("stream"), try flag("preload")) {
        case (true, true): throw object.error("give either \"stream\" or \"preload\", not both")
        case (true, false): return .stream
        case (false, true): return .preload
        case (false, false): return .automatic
        }
    }

    private static func decodePattern(_ node: JSONNode, playerIDs: [String]) throws(PatchError) -> DrumPattern {
        let object = try node.object(allowedKeys: patternKeys)
        let stepsPerBeat = try object.optional("stepsPerBeat")?.integer(in: stepsPerBeatRange) ?? 4
        let beatsPerBar = try object.optional("beatsPerBar")?.integer(in: beatsPerBarRange) ?? 4
        let stepsNode = try object.required("steps")
        let stepNodes = try stepsNode.array()
        guard !stepNodes.isEmpty else { throw stepsNode.error("expected at least one step, got an empty array") }
        try PatchLimits.check(stepNodes.count, PatchLimits.steps, "steps", at: stepsNode)

        var steps: [[Int]] = []
        for stepNode in stepNodes {
            var step: [Int] = []
            for playerNode in try stepNode.array() {
                let id = try playerNode.string()
                guard let index = playerIDs.firstIndex(of: id) else {
                    throw playerNode.error(
                        "unknown player \(JSONValue.quoted(id)) (expected one of: \(playerIDs.joined(separator: ", ")))")
                }
                // Triggering one player twice at the same instant would only restart it.
                guard !step.contains(index) else {
                    throw playerNode.error("player \(JSONValue.quoted(id)) appears twice in this step")
                }
                step.append(index)
            }
            steps.append(step)
        }
        // One track per player that plays, velocity 127 on its steps.
        var tracks: [DrumTrack] = []
        for player in playerIDs.indices where steps.contains(where: { $0.contains(player) }) {
            tracks.append(DrumTrack(instrument: player, velocities: steps.map { $0.contains(player) ? 127 : 0 }))
        }
        let perBar = beatsPerBar * stepsPerBeat
        return DrumPattern(name: "pattern", beatsPerBar: beatsPerBar, stepsPerBeat: stepsPerBeat,
                           bars: (steps.count + perBar - 1) / perBar, tracks: tracks, stepCount: steps.count)
    }
}
