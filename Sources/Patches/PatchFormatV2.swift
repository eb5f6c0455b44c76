import Foundation
import SamplerCore

/// Version 2 of the patch file format: a drum kit with patterns and a song (see
/// `Patches/README.md` and `schema/patch-v2.schema.json`):
///
/// ```json
/// {
///   "version": 2,
///   "tempo": 120,
///   "instruments": [ { "id": "kick", "layers": [ { "samples": ["../Samples/kick.wav"] } ] } ],
///   "patterns": [ { "name": "beat", "tracks": { "kick": [100, 0, 0, 0, 100, 0, 0, 0,
///                                                       100, 0, 0, 0, 100, 0, 0, 0] } } ],
///   "song": { "sequence": [ { "pattern": "beat", "repeats": 4 } ], "loop": true }
/// }
/// ```
enum PatchFormatV2 {
    static let keys = ["version", "tempo", "instruments", "patterns", "song", "panLaw", "controllers", "keySwitch", "headFrames"]
    static let instrumentKeys = ["id", "layers", "gain", "gainDb", "pan", "tune", "loops", "midiNote", "chokeGroup", "voices", "shareNote",
                                 "roundRobinAcrossLayers", "envelope", "trigger", "output", "conditions", "controllerTrigger", "modulations",
                                 "bend", "channelControllers", "group", "offBy", "silent", "sustain", "random", "filter", "delay", "heldDecay", "loopUntilRelease"]
    static let filterKeys = ["type", "cutoff", "resonance", "keytrack", "keycenter", "veltrack", "random"]
    static let randomKeys = ["gainDb", "cents", "offset", "delay"]
    static let conditionKeys = ["controllers", "keySwitch", "channels", "keyDown", "keyUp", "previousKey", "legato", "bend", "channelPressure",
                                "polyPressure"]
    static let controllerTriggerKeys = ["controller", "range"]
    static let modulationKeys = ["controller", "target", "depth", "curve", "smooth"]
    static let controllerNumberRange = NumberRange.between(0, Double(Controller.count - 1))
    static let controllerValueRange = NumberRange.between(0, 127)
    static let groupRange = NumberRange.between(-2_147_483_648, 2_147_483_647)
    static let envelopeKeys = ["delay", "start", "attack", "hold", "decay", "sustain", "release", "noteOff", "choke", "velocity"]
    static let envelopeVelocityKeys = ["delay", "attack", "hold", "decay", "sustain", "release"]
    static let layerKeys = ["velocity", "samples", "selection", "seed", "gainDb", "velocityCurve", "velocityTrack"]
    static let patternKeys = ["name", "beatsPerBar", "stepsPerBeat", "bars", "stepCount", "tracks", "swing", "seed", "humanize"]
    static let sampleKeys = ["path", "stream", "preload", "offset", "end", "reverse", "loop", "data"]
    static let trackKeys = ["steps", "probability"]
    static let humanizeKeys = ["seed", "frames", "velocity"]
    static let songKeys = ["sequence", "loop"]
    static let entryKeys = ["pattern", "repeats", "tempo"]

    // At least 1 bpm: slower grids overflow 64-bit frame positions within the song lengths allowed.
    static let tempoRange = NumberRange.between(1, 1000)
    static let gainDbRange = NumberRange.between(-120, 24)
    static let gainRange = NumberRange.between(0, 16)
    static let panRange = NumberRange.between(-1, 1)
    static let tuneRange = NumberRange.between(-48, 48)
    static let loopsRange = NumberRange.atLeast(-1)
    static let noteRange = NumberRange.between(0, 127)
    static let velocityRange = NumberRange.between(1, 127)
    static let stepVelocityRange = NumberRange.between(0, 127)
    static let chokeRange = NumberRange.between(0, 1000)
    static let voicesRange = NumberRange.between(1, 64)
    static let seedRange = NumberRange.between(0, 9_007_199_254_740_991)
    static let meterRange = NumberRange.between(1, 64)
    // Any number of bars, as long as one play has at most `PatchLimits.steps` steps.
    static let barsRange = NumberRange.between(1, Double(PatchLimits.steps))
    static let swingRange = NumberRange.between(0, 90)
    static let probabilityRange = NumberRange.between(0, 1)
    static let humanizeFramesRange = NumberRange.between(0, 48000)
    static let repeatsRange = NumberRange.between(1, 10000)
    /// Frames of a long sample kept in memory when the patch streams tails per voice.
    static let headFramesRange = NumberRange.between(64, 1_048_576)

    static func decode(_ root: JSONObjectNode, file: String, baseDirectory: URL) throws(PatchError) -> Patch {
        try root.rejectUnknownKeys(allowed: keys)
        let tempo = try root.required("tempo").number(in: tempoRange)
        let instruments = try decodeInstruments(root.required("instruments"), baseDirectory: baseDirectory)
        // Without patterns every instrument plays once, from the start (what a version 1 patch
        // without a pattern does).
        let patterns = try root.optional("patterns").map { node throws(PatchError) in
            try decodePatterns(node, instrumentIDs: instruments.map(\.id))
        } ?? []
        let song = try root.optional("song").map { node throws(PatchError) in
            try decodeSong(node, patternNames: patterns.map(\.name))
        }
        var panLaw = PanLawSetting.constantPower
        if let lawNode = root.optional("panLaw") {
            guard let law = PanLawSetting(rawValue: try lawNode.string()) else {
                throw lawNode.mismatch(expected: #""constant-power", "balance" or "constant-power-stereo""#)
            }
            panLaw = law
        }
        var patch = Patch(tempo: tempo, instruments: instruments, patterns: patterns, song: song, file: file, panLaw: panLaw)
        if let node = root.optional("controllers") {
            for (key, valueNode) in try node.object().entries {
                guard let number = Int(key), (0..<Controller.count).contains(number) else {
                    throw valueNode.error("a controller number is 0 to \(Controller.count - 1), got \(JSONValue.quoted(key))")
                }
                patch.controllers.defaults[number] = Float(try valueNode.number(in: controllerValueRange) / 127)
            }
        }
        patch.controllers.keySwitch = try root.optional("keySwitch")?.integer(in: noteRange)
        patch.headFrames = try root.optional("headFrames")?.integer(in: headFramesRange)
        return patch
    }

    /// `[low, high]` of a controller's values (0…127, fractions allowed), as a range of normalized values.
    private static func controllerRange(_ node: JSONNode, controller: Int) throws(PatchError) -> ControllerRange {
        let bounds = try node.array()
        guard bounds.count == 2 else { throw node.mismatch(expected: "[low, high] with 0 ≤ low ≤ high ≤ 127") }
        let low = try bounds[0].number(in: controllerValueRange), high = try bounds[1].number(in: controllerValueRange)
        guard low <= high else { throw node.error("the range's low end (\(Patch.number(low))) is above its high end (\(Patch.number(high)))") }
        return ControllerRange(controller: controller, low: Float(low) / 127, high: Float(high) / 127)
    }

    /// The controller parts of an instrument: conditions, controller trigger, modulations, bend,
    /// channel controllers, one-way chokes, silence.
    private static func decodeControls(_ object: JSONObjectNode, into instrument: inout DrumInstrument) throws(PatchError) {
        if let node = object.optional("conditions") {
            let c = try node.object(allowedKeys: conditionKeys)
            if let controllers = c.optional("controllers") {
                let entries = try controllers.object().entries
                try PatchLimits.check(entries.count, 16, "controller conditions", at: controllers)
                for (key, rangeNode) in entries {
                    guard let number = Int(key), (0..<Controller.count).contains(number) else {
                        throw rangeNode.error("a controller number is 0 to \(Controller.count - 1), got \(JSONValue.quoted(key))")
                    }
                    instrument.conditions.append(try controllerRange(rangeNode, controller: number))
                }
            }
            instrument.keySwitch = try c.optional("keySwitch")?.integer(in: noteRange)
            instrument.keyDown = try c.optional("keyDown")?.integer(in: noteRange)
            instrument.keyUp = try c.optional("keyUp")?.integer(in: noteRange)
            instrument.previousKey = try c.optional("previousKey")?.integer(in: noteRange)
            instrument.legato = try c.optional("legato")?.bool()
            if let bendNode = c.optional("bend") {
                let bounds = try bendNode.array()
                guard bounds.count == 2 else { throw bendNode.mismatch(expected: "[low, high] with -8192 ≤ low ≤ high ≤ 8191") }
                let low = try bounds[0].number(in: .between(-8192, 8191)), high = try bounds[1].number(in: .between(-8192, 8191))
                guard low <= high else { throw bendNode.error("the range's low end (\(Patch.number(low))) is above its high end (\(Patch.number(high)))") }
                func normalized(_ v: Double) -> Float { Float(v >= 0 ? v / 8191 : v / 8192) }
                instrument.conditions.append(ControllerRange(controller: Controller.pitchBend, low: normalized(low), high: normalized(high)))
            }
            if let node = c.optional("channelPressure") {
                instrument.conditions.append(try controllerRange(node, controller: Controller.channelPressure))
            }
            if let node = c.optional("polyPressure") {
                instrument.conditions.append(try controllerRange(node, controller: Controller.polyPressure))
            }
            if let channelsNode = c.optional("channels") {
                let bounds = try channelsNode.array()
                guard bounds.count == 2 else { throw channelsNode.mismatch(expected: "[first, last] with 1 ≤ first ≤ last ≤ 16") }
                let first = try bounds[0].integer(in: .between(1, 16)), last = try bounds[1].integer(in: .between(1, 16))
                guard first <= last else { throw channelsNode.error("the first channel (\(first)) is after the last (\(last))") }
                instrument.channels = first...last
            }
        }
        if let node = object.optional("controllerTrigger") {
            let t = try node.object(allowedKeys: controllerTriggerKeys)
            let number = try t.required("controller").integer(in: .between(0, 127))
            instrument.controllerTrigger = try controllerRange(t.required("range"), controller: number)
        }
        if let node = object.optional("modulations") {
            let elements = try node.array()
            try PatchLimits.check(elements.count, 16, "modulations", at: node)
            for element in elements {
                let m = try element.object(allowedKeys: modulationKeys)
                let number = try m.required("controller").integer(in: controllerNumberRange)
                let targetNode = try m.required("target")
                let target: ModulationTarget
                switch try targetNode.string() {
                case "amplitude": target = .amplitude
                case "volume": target = .volume
                case "pan": target = .pan
                case "pitch": target = .pitch
                case "cutoff": target = .cutoff
                case "resonance": target = .resonance
                default: throw targetNode.mismatch(expected: #""amplitude", "volume", "pan", "pitch", "cutoff" or "resonance""#)
                }
                let depth = try m.required("depth").number(in: target == .cutoff ? .between(-12_000, 12_000) : .between(-9600, 9600))
                var curve: [Float]?
                if let curveNode = m.optional("curve") {
                    if case .number = curveNode.value {
                        let index = try curveNode.integer(in: .between(0, 6))
                        curve = ControllerModulation.sfzCurve(index)
                    } else {
                        let points = try curveNode.array()
                        guard points.count == 128 else { throw curveNode.mismatch(expected: "a curve number 0 to 6, or 128 numbers") }
                        var values: [Float] = []
                        for point in points { values.append(Float(try point.number(in: .between(-1e6, 1e6)))) }
                        curve = values
                    }
                }
                let smooth = try m.optional("smooth")?.number(in: .between(0, 10_000)) ?? 0
                instrument.modulations.append(ControllerModulation(controller: number, target: target, depth: Float(depth), curve: curve,
                                                                   smoothing: Float(smooth)))
            }
        }
        if let node = object.optional("bend") {
            let bounds = try node.array()
            guard bounds.count == 2 else { throw node.mismatch(expected: "[cents up, cents down], each -9600 to 9600") }
            instrument.bendUp = try bounds[0].number(in: .between(-9600, 9600))
            instrument.bendDown = try bounds[1].number(in: .between(-9600, 9600))
        }
        instrument.followsChannelControllers = try object.optional("channelControllers")?.bool() ?? true
        instrument.group = try object.optional("group")?.integer(in: groupRange)
        instrument.offBy = try object.optional("offBy")?.integer(in: groupRange)
        instrument.isSilent = try object.optional("silent")?.bool() ?? false
        if let node = object.optional("random") {
            let r = try node.object(allowedKeys: randomKeys)
            instrument.randomGainDb = try r.optional("gainDb")?.number(in: .between(0, 48)) ?? 0
            instrument.randomCents = try r.optional("cents")?.number(in: .between(-9600, 9600)) ?? 0
            instrument.randomOffset = try r.optional("offset")?.integer(in: .between(0, 1_073_741_824)) ?? 0
            instrument.randomDelay = try r.optional("delay")?.number(in: .between(0, 10)) ?? 0
        }
        instrument.delay = try object.optional("delay")?.number(in: .between(0, 10)) ?? 0
        instrument.heldDecay = try object.optional("heldDecay")?.number(in: .between(0, 200)) ?? 0
        instrument.loopsUntilRelease = try object.optional("loopUntilRelease")?.bool() ?? false
        if let node = object.optional("filter") {
            let f = try node.object(allowedKeys: filterKeys)
            let typeNode = try f.required("type")
            let names = FilterKind.allCases.filter { $0 != .none }.map(\.sfzName)
            guard let kind = FilterKind(sfzName: try typeNode.string()) else {
                throw typeNode.mismatch(expected: names.map { "\"\($0)\"" }.joined(separator: ", "))
            }
            instrument.filter = VoiceFilter(
                kind: kind, cutoff: Float(try f.required("cutoff").number(in: .between(0, 20_000))),
                resonance: Float(try f.optional("resonance")?.number(in: .between(-60, 60)) ?? 0),
                keytrack: Float(try f.optional("keytrack")?.number(in: .between(-1200, 1200)) ?? 0),
                keycenter: try f.optional("keycenter")?.integer(in: noteRange) ?? 60,
                veltrack: Float(try f.optional("veltrack")?.number(in: .between(-12_000, 12_000)) ?? 0),
                random: Float(try f.optional("random")?.number(in: .between(-12_000, 12_000)) ?? 0))
        }
        if let node = object.optional("sustain") {
            if case .bool = node.value {
                guard try !node.bool() else { throw node.mismatch(expected: "a controller number (0 to 127), or false for none") }
                instrument.sustainController = nil
            } else {
                instrument.sustainController = try node.integer(in: .between(0, 127))
            }
        }
    }

    private static func decodeInstruments(_ node: JSONNode, baseDirectory: URL) throws(PatchError) -> [DrumInstrument] {
        let elements = try node.array()
        guard !elements.isEmpty else { throw node.error("expected at least one instrument, got an empty array") }
        try PatchLimits.check(elements.count, PatchLimits.instruments, "instruments", at: node)
        var instruments: [DrumInstrument] = []
        var firstUse: [String: JSONPath] = [:]
        var noteUse: [Int: (path: JSONPath, shares: Bool)] = [:]
        for element in elements {
            let object = try element.object(allowedKeys: instrumentKeys)
            let idNode = try object.required("id")
            let id = try idNode.nonEmptyString()
            if let first = firstUse[id] {
                throw idNode.error("duplicate instrument id \(JSONValue.quoted(id)) (first used by \(first))")
            }
            firstUse[id] = element.path
            let layersNode = try object.required("layers")
            let layerNodes = try layersNode.array()
            try PatchLimits.check(layerNodes.count, PatchLimits.layersPerInstrument, "layers", at: layersNode)
            guard !layerNodes.isEmpty else { throw layersNode.error("expected at least one layer, got an empty array") }
            var layers: [DrumLayer] = []
            for layerNode in layerNodes {
                layers.append(try decodeLayer(layerNode, baseDirectory: baseDirectory))
            }
            // A streamed instrument plays one file: its ring is cued on the control thread, so
            // its trigger cannot pick among samples on the render thread.
            if layers.count > 1 || layers[0].samples.count > 1 {
                for (l, layer) in layers.enumerated() {
                    guard let s = layer.samples.firstIndex(where: { $0.loading == .stream }) else { continue }
                    let node = try layerNodes[l].object().required("samples").array()[s]
                    throw node.error("a streamed sample must be its instrument's only sample (one layer, one sample)")
                }
            }
            var gainDb = 0.0
            switch (object.optional("gain"), object.optional("gainDb")) {
            case (_?, _?):
                throw object.error("give either \"gain\" or \"gainDb\", not both")
            case (let linear?, nil):
                let gain = try linear.number(in: gainRange)
                gainDb = gain == 1 ? 0 : 20 * log10(gain)
            case (nil, let decibels?):
                gainDb = try decibels.number(in: gainDbRange)
            case (nil, nil):
                break
            }
            var midiNote: Int?
            let sharesNote = try object.optional("shareNote")?.bool() ?? false
            if let noteNode = object.optional("midiNote") {
                let note = try noteNode.integer(in: noteRange)
                if let first = noteUse[note], !(sharesNote && first.shares) {
                    throw noteNode.error("MIDI note \(note) is already used by \(first.path) (instruments that sound together on one note both say \"shareNote\": true)")
                }
                noteUse[note] = (noteNode.path, sharesNote)
                midiNote = note
            }
            instruments.append(DrumInstrument(
                id: id, layers: layers,
                gainDb: gainDb,
                pan: try object.optional("pan")?.number(in: panRange) ?? 0,
                tune: try object.optional("tune")?.number(in: tuneRange) ?? 0,
                loops: try object.optional("loops")?.integer(in: loopsRange) ?? 0,
                midiNote: midiNote,
                chokeGroup: try object.optional("chokeGroup")?.integer(in: chokeRange) ?? 0,
                voices: try object.optional("voices")?.integer(in: voicesRange) ?? 1, sharesNote: sharesNote))
            instruments[instruments.count - 1].roundRobinAcrossLayers = try object.optional("roundRobinAcrossLayers")?.bool() ?? false
            if let outputNode = object.optional("output") {
                let name = try outputNode.string()
                if let problem = DrumInstrument.outputNameProblem(name) { throw outputNode.error(problem) }
                var names = Set(instruments.compactMap(\.output))
                names.insert(name)
                if names.count > Engine.maxOutputCount - 1 {
                    throw outputNode.error("a patch has at most \(Engine.maxOutputCount - 1) outputs besides the main mix; this is output \(names.count)")
                }
                instruments[instruments.count - 1].output = name
            }
            try decodeControls(object, into: &instruments[instruments.count - 1])
            if let triggerNode = object.optional("trigger") {
                switch try triggerNode.string() {
                case "noteOn": break
                case "noteOff": instruments[instruments.count - 1].triggersOnNoteOff = true
                default: throw triggerNode.mismatch(expected: #""noteOn" or "noteOff""#)
                }
            }
            if let envelopeNode = object.optional("envelope") {
                let e = try envelopeNode.object(allowedKeys: envelopeKeys)
                func seconds(_ key: String, _ d: Double) throws(PatchError) -> Double {
                    try e.optional(key)?.number(in: .between(0, 100)) ?? d
                }
                instruments[instruments.count - 1].envelope = Envelope(
                    attack: try seconds("attack", 0), hold: try seconds("hold", 0), decay: try seconds("decay", 0),
                    sustain: try e.optional("sustain")?.number(in: .between(0, 1)) ?? 1,
                    release: try seconds("release", 0.006), noteOff: try e.optional("noteOff")?.bool() ?? true,
                    choke: try e.optional("choke")?.number(in: .between(0, 100)),
                    delay: try seconds("delay", 0), start: try e.optional("start")?.number(in: .between(0, 1)) ?? 0)
                if let velocityNode = e.optional("velocity") {
                    let v = try velocityNode.object(allowedKeys: envelopeVelocityKeys)
                    func change(_ key: String) throws(PatchError) -> Double { try v.optional(key)?.number(in: .between(-100, 100)) ?? 0 }
                    instruments[instruments.count - 1].envelope?.velocity = EnvelopeStages(
                        delay: try change("delay"), attack: try change("attack"), hold: try change("hold"), decay: try change("decay"),
                        sustain: try v.optional("sustain")?.number(in: .between(-1, 1)) ?? 0, release: try change("release"))
                }
            }
            // Looping until released needs something that releases it.
            if let node = object.optional("loopUntilRelease"), instruments[instruments.count - 1].loopsUntilRelease,
               instruments[instruments.count - 1].envelope?.noteOff != true {
                throw node.error("loopUntilRelease needs an \"envelope\" that follows note-offs (its release ends the loop)")
            }
        }
        return instruments
    }

    private static func decodeLayer(_ node: JSONNode, baseDirectory: URL) throws(PatchError) -> DrumLayer {
        let object = try node.object(allowedKeys: layerKeys)
        var velocities = 1...127
        if let rangeNode = object.optional("velocity") {
            let bounds = try rangeNode.array()
            guard bounds.count == 2 else {
                throw rangeNode.mismatch(expected: "[min, max] with 1 ≤ min ≤ max ≤ 127")
            }
            let low = try bounds[0].integer(in: velocityRange), high = try bounds[1].integer(in: velocityRange)
            guard low <= high else {
                throw rangeNode.error("expected [min, max] with 1 ≤ min ≤ max ≤ 127, got [\(low), \(high)]")
            }
            velocities = low...high
        }
        let samplesNode = try object.required("samples")
        let sampleNodes = try samplesNode.array()
        guard !sampleNodes.isEmpty else { throw samplesNode.error("expected at least one sample path, got an empty array") }
        try PatchLimits.check(sampleNodes.count, PatchLimits.samplesPerLayer, "samples", at: samplesNode)
        var samples: [SampleFile] = []
        for sampleNode in sampleNodes {
            // "path", or { "path": "…", "stream": true } / { "path": "…", "preload": true }.
            if case .object = sampleNode.value {
                let sample = try sampleNode.object(allowedKeys: sampleKeys)
                let path = try sample.required("path").nonEmptyString()
                let offset = try sample.optional("offset")?.integer(in: .between(0, 1_099_511_627_776)) ?? 0
                var end: Int?
                if let endNode = sample.optional("end") {
                    let e = try endNode.integer(in: .between(0, 1_099_511_627_776))
                    guard e >= offset else { throw endNode.error("the last frame played (\(e)) is before the offset (\(offset))") }
                    end = e
                }
                let loading = try PatchFormatV1.decodeLoading(sample)
                let reverse = try sample.optional("reverse")?.bool() ?? false
                var loop: ClosedRange<Int>?
                if let loopNode = sample.optional("loop") {
                    let bounds = try loopNode.array()
                    let expected = "[first, last] frames of the file, offset ≤ first ≤ last (≤ end)"
                    guard bounds.count == 2 else { throw loopNode.mismatch(expected: expected) }
                    let first = try bounds[0].integer(in: .between(0, 1_099_511_627_776))
                    let last = try bounds[1].integer(in: .between(0, 1_099_511_627_776))
                    guard first >= offset, first <= last, last <= (end ?? last) else {
                        throw loopNode.error("expected \(expected), got [\(first), \(last)] with offset \(offset)\(end.map { " and end \($0)" } ?? "")")
                    }
                    loop = first...last
                }
                var data: [UInt8]?
                if let dataNode = sample.optional("data") {
                    guard let bytes = Data(base64Encoded: try dataNode.string()), !bytes.isEmpty else {
                        throw dataNode.mismatch(expected: "the sound file's bytes in base64")
                    }
                    data = [UInt8](bytes)
                }
                if loading == .stream, offset != 0 || end != nil || reverse || loop != nil || data != nil {
                    throw sampleNode.error("a streamed sample plays the whole file forwards: \"offset\", \"end\", \"reverse\", \"loop\" and \"data\" need it in memory")
                }
                // No place: its indices name it (`instruments[i].layers[l].samples[s]`, its JSON path).
                samples.append(SampleFile(path: path, resolvedPath: data != nil ? path : resolve(path, against: baseDirectory),
                                          loading: loading, offset: offset, end: end, reverse: reverse, loop: loop, data: data))
            } else {
                let path = try sampleNode.nonEmptyString()
                samples.append(SampleFile(path: path, resolvedPath: resolve(path, against: baseDirectory)))
            }
        }
        var selection = LayerSelection.roundRobin
        if let selectionNode = object.optional("selection") {
            switch try selectionNode.string() {
            case "roundRobin": selection = .roundRobin
            case "random": selection = .random(seed: try object.optional("seed")?.unsignedSeed() ?? 1)
            default: throw selectionNode.mismatch(expected: #""roundRobin" or "random""#)
            }
        }
        if case .roundRobin = selection, let seedNode = object.optional("seed") {
            throw seedNode.error(#"a seed needs "selection": "random""#)
        }
        // "velocityCurve": "linear" | "squared" | [[velocity, level], …]; "velocityTrack": -1…1.
        var curve: VelocityCurve?
        if let curveNode = object.optional("velocityCurve") {
            if case .array = curveNode.value {
                let pointNodes = try curveNode.array()
                guard !pointNodes.isEmpty, pointNodes.count <= 128 else {
                    throw curveNode.mismatch(expected: "1 to 128 [velocity, level] points")
                }
                var points: [VelocityCurve.Point] = []
                for pointNode in pointNodes {
                    let pair = try pointNode.array()
                    guard pair.count == 2 else { throw pointNode.mismatch(expected: "[velocity, level] with velocity 0…127 and level 0…1") }
                    let v = try pair[0].integer(in: .between(0, 127))
                    guard points.last.map({ $0.velocity < v }) ?? true else {
                        throw pointNode.error("the points' velocities must rise, got \(v) after \(points.last!.velocity)")
                    }
                    points.append(VelocityCurve.Point(velocity: v, level: try pair[1].number(in: .between(0, 1))))
                }
                curve = VelocityCurve(shape: .points(points))
            } else {
                switch try curveNode.string() {
                case "linear": curve = VelocityCurve(shape: .linear)
                case "squared": curve = VelocityCurve(shape: .squared)
                default: throw curveNode.mismatch(expected: #""linear", "squared" or [[velocity, level], …]"#)
                }
            }
        }
        if let trackNode = object.optional("velocityTrack") {
            let track = try trackNode.number(in: .between(-1, 1))
            curve = VelocityCurve(shape: curve?.shape ?? .linear, track: track)
        }
        if curve == VelocityCurve(shape: .linear) { curve = nil }
        return DrumLayer(velocities: velocities, samples: samples, selection: selection,
                         gainDb: try object.optional("gainDb")?.number(in: gainDbRange) ?? 0, velocityCurve: curve)
    }

    private static func decodePatterns(_ node: JSONNode, instrumentIDs: [String]) throws(PatchError) -> [DrumPattern] {
        let elements = try node.array()
        guard !elements.isEmpty else { throw node.error("expected at least one pattern, got an empty array") }
        var patterns: [DrumPattern] = []
        var firstUse: [String: JSONPath] = [:]
        for element in elements {
            let object = try element.object(allowedKeys: patternKeys)
            let nameNode = try object.required("name")
            let name = try nameNode.nonEmptyString()
            if let first = firstUse[name] {
                throw nameNode.error("duplicate pattern name \(JSONValue.quoted(name)) (first used by \(first))")
            }
            firstUse[name] = element.path
            let beatsPerBar = try object.optional("beatsPerBar")?.integer(in: meterRange) ?? 4
            let stepsPerBeat = try object.optional("stepsPerBeat")?.integer(in: meterRange) ?? 4
            let bars = try object.optional("bars")?.integer(in: barsRange) ?? 1
            let fullBars = beatsPerBar * stepsPerBeat * bars
            var stepCount = fullBars
            if let countNode = object.optional("stepCount") {
                // A pattern that ends inside its last bar.
                stepCount = try countNode.integer(in: .between(Double((bars - 1) * beatsPerBar * stepsPerBeat + 1), Double(fullBars)))
            }
            if stepCount > PatchLimits.steps {
                throw element.error("at most \(PatchLimits.steps) steps in a pattern, got \(stepCount) (\(beatsPerBar) beats × \(stepsPerBeat) steps × \(bars) bars)")
            }
            var tracks: [DrumTrack] = []
            for (id, trackNode) in try object.required("tracks").object().entries {
                guard let instrument = instrumentIDs.firstIndex(of: id) else {
                    throw trackNode.error(
                        "unknown instrument \(JSONValue.quoted(id)) (expected one of: \(instrumentIDs.joined(separator: ", ")))")
                }
                tracks.append(try decodeTrack(trackNode, instrument: instrument, stepCount: stepCount,
                                              shape: stepCount == fullBars ? "\(beatsPerBar) beats × \(stepsPerBeat) steps × \(bars) bars"
                                                  : "stepCount"))
            }
            var humanize: Humanize?
            if let humanizeNode = object.optional("humanize") {
                let h = try humanizeNode.object(allowedKeys: humanizeKeys)
                humanize = Humanize(seed: try h.required("seed").unsignedSeed(),
                                    frames: try h.optional("frames")?.integer(in: humanizeFramesRange) ?? 0,
                                    velocity: try h.optional("velocity")?.integer(in: stepVelocityRange) ?? 0)
            }
            patterns.append(DrumPattern(
                name: name, beatsPerBar: beatsPerBar, stepsPerBeat: stepsPerBeat, bars: bars, tracks: tracks,
                swing: try object.optional("swing")?.number(in: swingRange) ?? 0,
                seed: try object.optional("seed")?.unsignedSeed() ?? 1, humanize: humanize, stepCount: stepCount))
        }
        return patterns
    }

    /// `[v, v, …]`, or `{ "steps": [v, …], "probability": p or [p, …] }`.
    private static func decodeTrack(_ node: JSONNode, instrument: Int, stepCount: Int, shape: String) throws(PatchError) -> DrumTrack {
        var stepsNode = node
        var probabilityNode: JSONNode?
        if case .object = node.value {
            let object = try node.object(allowedKeys: trackKeys)
            stepsNode = try object.required("steps")
            probabilityNode = object.optional("probability")
        }
        let steps = try stepsNode.array()
        guard steps.count == stepCount else {
            throw stepsNode.error("expected \(stepCount) steps (\(shape)), got \(steps.count)")
        }
        var velocities: [Int] = []
        for step in steps { velocities.append(try step.integer(in: stepVelocityRange)) }
        var probabilities = Array(repeating: 1.0, count: stepCount)
        if let probabilityNode {
            if case .array = probabilityNode.value {
                let values = try probabilityNode.array()
                guard values.count == stepCount else {
                    throw probabilityNode.error("expected \(stepCount) probabilities (one per step), got \(values.count)")
                }
                for (i, value) in values.enumerated() { probabilities[i] = try value.number(in: probabilityRange) }
            } else {
                let p = try probabilityNode.number(in: probabilityRange)
                probabilities = Array(repeating: p, count: stepCount)
            }
        }
        return DrumTrack(instrument: instrument, velocities: velocities, probabilities: probabilities)
    }

    private static func decodeSong(_ node: JSONNode, patternNames: [String]) throws(PatchError) -> Song {
        let object = try node.object(allowedKeys: songKeys)
        let sequenceNode = try object.required("sequence")
        let elements = try sequenceNode.array()
        guard !elements.isEmpty else { throw sequenceNode.error("expected at least one song entry, got an empty array") }
        var entries: [Song.Entry] = []
        for element in elements {
            let entry = try element.object(allowedKeys: entryKeys)
            let patternNode = try entry.required("pattern")
            let name = try patternNode.string()
            guard let pattern = patternNames.firstIndex(of: name) else {
                throw patternNode.error(
                    "unknown pattern \(JSONValue.quoted(name)) (expected one of: \(patternNames.joined(separator: ", ")))")
            }
            entries.append(Song.Entry(pattern: pattern, repeats: try entry.optional("repeats")?.integer(in: repeatsRange) ?? 1,
                                      tempo: try entry.optional("tempo")?.number(in: tempoRange)))
        }
        return Song(entries: entries, loop: try object.optional("loop")?.bool() ?? false)
    }

    static func resolve(_ path: String, against directory: URL) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: path, relativeTo: directory).standardizedFileURL.path
    }
}

extension JSONNode {
    func bool() throws(PatchError) -> Bool {
        guard case .bool(let value) = value else { throw mismatch(expected: "true or false") }
        return value
    }

    /// A seed: a whole number from 0 to 2^53 - 1 (what a JSON number holds exactly).
    func unsignedSeed() throws(PatchError) -> UInt64 {
        UInt64(try integer(in: PatchFormatV2.seedRange))
    }
}
