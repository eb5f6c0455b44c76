import Foundation
import SamplerCore

extension Patch {
    /// A controller value (normalized) as the patch writes it: 0…127.
    private static func controllerValue(_ v: Float) -> String { number((Double(v) * 127 * 1e4).rounded() / 1e4) }

    /// The controller parts of an instrument, as `"key": value` fields.
    private static func controlFields(_ instrument: DrumInstrument) -> [String] {
        var fields: [String] = []
        var conditions: [String] = []
        let ranges = instrument.conditions.filter { $0.controller < Controller.count }
        if !ranges.isEmpty {
            let list = ranges.map { #""\#($0.controller)": [\#(controllerValue($0.low)), \#(controllerValue($0.high))]"# }
            conditions.append(#""controllers": { \#(list.joined(separator: ", ")) }"#)
        }
        if let k = instrument.keySwitch { conditions.append(#""keySwitch": \#(k)"#) }
        if let k = instrument.keyDown { conditions.append(#""keyDown": \#(k)"#) }
        if let k = instrument.keyUp { conditions.append(#""keyUp": \#(k)"#) }
        if let k = instrument.previousKey { conditions.append(#""previousKey": \#(k)"#) }
        if let l = instrument.legato { conditions.append(#""legato": \#(l)"#) }
        func bendValue(_ v: Float) -> String { number((Double(v) * (v >= 0 ? 8191 : 8192)).rounded()) }
        for c in instrument.conditions {
            if c.controller == Controller.pitchBend { conditions.append(#""bend": [\#(bendValue(c.low)), \#(bendValue(c.high))]"#) }
            if c.controller == Controller.channelPressure {
                conditions.append(#""channelPressure": [\#(controllerValue(c.low)), \#(controllerValue(c.high))]"#)
            }
            if c.controller == Controller.polyPressure {
                conditions.append(#""polyPressure": [\#(controllerValue(c.low)), \#(controllerValue(c.high))]"#)
            }
        }
        if instrument.channels != 1...16 { conditions.append(#""channels": [\#(instrument.channels.lowerBound), \#(instrument.channels.upperBound)]"#) }
        if !conditions.isEmpty { fields.append(#""conditions": { \#(conditions.joined(separator: ", ")) }"#) }
        if let t = instrument.controllerTrigger {
            fields.append(#""controllerTrigger": { "controller": \#(t.controller), "range": [\#(controllerValue(t.low)), \#(controllerValue(t.high))] }"#)
        }
        if !instrument.modulations.isEmpty {
            let list = instrument.modulations.map { m -> String in
                let target = switch m.target {
                case .amplitude: "amplitude"
                case .volume: "volume"
                case .pan: "pan"
                case .pitch: "pitch"
                case .cutoff: "cutoff"
                case .resonance: "resonance"
                }
                var parts = [#""controller": \#(m.controller)"#, #""target": "\#(target)""#, #""depth": \#(number(Double(m.depth)))"#]
                if let curve = m.curve {
                    if let k = (0...6).first(where: { ControllerModulation.sfzCurve($0) == curve }) {
                        parts.append(#""curve": \#(k)"#)
                    } else {
                        parts.append(#""curve": [\#(curve.map { number(Double($0)) }.joined(separator: ", "))]"#)
                    }
                }
                if m.smoothing > 0 { parts.append(#""smooth": \#(number(Double(m.smoothing)))"#) }
                return "{ " + parts.joined(separator: ", ") + " }"
            }
            fields.append(#""modulations": [\#(list.joined(separator: ", "))]"#)
        }
        if instrument.bendUp != 0 || instrument.bendDown != 0 {
            fields.append(#""bend": [\#(number(instrument.bendUp)), \#(number(instrument.bendDown))]"#)
        }
        if !instrument.followsChannelControllers { fields.append(#""channelControllers": false"#) }
        if instrument.delay != 0 { fields.append(#""delay": \#(number(instrument.delay))"#) }
        if instrument.loopsUntilRelease { fields.append(#""loopUntilRelease": true"#) }
        if instrument.heldDecay != 0 { fields.append(#""heldDecay": \#(number(instrument.heldDecay))"#) }
        if let f = instrument.filter, f.kind != .none {
            var parts = [#""type": "\#(f.kind.sfzName)""#, #""cutoff": \#(number(Double(f.cutoff)))"#]
            if f.resonance != 0 { parts.append(#""resonance": \#(number(Double(f.resonance)))"#) }
            if f.keytrack != 0 { parts.append(#""keytrack": \#(number(Double(f.keytrack)))"#) }
            if f.keycenter != 60 { parts.append(#""keycenter": \#(f.keycenter)"#) }
            if f.veltrack != 0 { parts.append(#""veltrack": \#(number(Double(f.veltrack)))"#) }
            if f.random != 0 { parts.append(#""random": \#(number(Double(f.random)))"#) }
            fields.append(#""filter": { \#(parts.joined(separator: ", ")) }"#)
        }
        if let g = instrument.group { fields.append(#""group": \#(g)"#) }
        if let o = instrument.offBy { fields.append(#""offBy": \#(o)"#) }
        if instrument.isSilent { fields.append(#""silent": true"#) }
        if instrument.randomGainDb != 0 || instrument.randomCents != 0 || instrument.randomOffset != 0 || instrument.randomDelay != 0 {
            var parts: [String] = []
            if instrument.randomGainDb != 0 { parts.append(#""gainDb": \#(number(instrument.randomGainDb))"#) }
            if instrument.randomCents != 0 { parts.append(#""cents": \#(number(instrument.randomCents))"#) }
            if instrument.randomOffset != 0 { parts.append(#""offset": \#(instrument.randomOffset)"#) }
            if instrument.randomDelay != 0 { parts.append(#""delay": \#(number(instrument.randomDelay))"#) }
            fields.append(#""random": { \#(parts.joined(separator: ", ")) }"#)
        }
        if instrument.sustainController != 64 {
            fields.append(#""sustain": \#(instrument.sustainController.map(String.init) ?? "false")"#)
        }
        return fields
    }

    /// The patch as a file of the current version (2), whatever version it was read from
    /// (sample paths as `SampleFile.path` holds them), laid out for people: one line per layer,
    /// per track and per song entry. Decoding the text gives the patch back (with `version` 2).
    package func patchJSON() -> String {
        var lines = ["{", #"  "version": 2,"#, #"  "tempo": \#(Self.number(tempo)),"#]
        if panLaw != .constantPower { lines.append(#"  "panLaw": "\#(panLaw.rawValue)","#) }
        if let headFrames { lines.append(#"  "headFrames": \#(headFrames),"#) }
        if !controllers.defaults.isEmpty {
            let values = controllers.defaults.sorted { $0.key < $1.key }.map { #""\#($0.key)": \#(Self.controllerValue($0.value))"# }
            lines.append(#"  "controllers": { \#(values.joined(separator: ", ")) },"#)
        }
        if let k = controllers.keySwitch { lines.append(#"  "keySwitch": \#(k),"#) }
        lines.append(#"  "instruments": ["#)
        for (i, instrument) in instruments.enumerated() {
            var fields = [#""id": \#(JSONValue.quoted(instrument.id))"#]
            if (-120...24).contains(instrument.gainDb) {
                if instrument.gainDb != 0 { fields.append(#""gainDb": \#(Self.number(instrument.gainDb))"#) }
            } else {
                // Silence (-infinity dB) or a version 1 gain beyond +24 dB: as a factor.
                let linear = instrument.gainDb == -.infinity ? 0 : pow(10, instrument.gainDb / 20)
                fields.append(#""gain": \#(Self.number(linear))"#)
            }
            if instrument.pan != 0 { fields.append(#""pan": \#(Self.number(instrument.pan))"#) }
            if instrument.tune != 0 { fields.append(#""tune": \#(Self.number(instrument.tune))"#) }
            if instrument.loops != 0 { fields.append(#""loops": \#(instrument.loops)"#) }
            if let note = instrument.midiNote { fields.append(#""midiNote": \#(note)"#) }
            if instrument.chokeGroup != 0 { fields.append(#""chokeGroup": \#(instrument.chokeGroup)"#) }
            if instrument.voices != 1 { fields.append(#""voices": \#(instrument.voices)"#) }
            if instrument.sharesNote { fields.append(#""shareNote": true"#) }
            if instrument.roundRobinAcrossLayers { fields.append(#""roundRobinAcrossLayers": true"#) }
            if instrument.triggersOnNoteOff { fields.append(#""trigger": "noteOff""#) }
            if let output = instrument.output { fields.append(#""output": \#(JSONValue.quoted(output))"#) }
            fields += Self.controlFields(instrument)
            if let e = instrument.envelope {
                var parts: [String] = []
                if e.delay != 0 { parts.append(#""delay": \#(Self.number(e.delay))"#) }
                if e.start != 0 { parts.append(#""start": \#(Self.number(e.start))"#) }
                if e.attack != 0 { parts.append(#""attack": \#(Self.number(e.attack))"#) }
                if e.hold != 0 { parts.append(#""hold": \#(Self.number(e.hold))"#) }
                if e.decay != 0 { parts.append(#""decay": \#(Self.number(e.decay))"#) }
                if e.sustain != 1 { parts.append(#""sustain": \#(Self.number(e.sustain))"#) }
                if e.release != 0.006 { parts.append(#""release": \#(Self.number(e.release))"#) }
                if !e.noteOff { parts.append(#""noteOff": false"#) }
                if let choke = e.choke { parts.append(#""choke": \#(Self.number(choke))"#) }
                if let v = e.velocity {
                    let stages = [("delay", v.delay), ("attack", v.attack), ("hold", v.hold), ("decay", v.decay), ("sustain", v.sustain), ("release", v.release)]
                    parts.append(#""velocity": { "# + stages.filter { $0.1 != 0 }.map { #""\#($0.0)": \#(Self.number($0.1))"# }.joined(separator: ", ") + " }")
                }
                fields.append(#""envelope": { \#(parts.joined(separator: ", ")) }"#)
            }
            lines.append("    { " + fields.joined(separator: ", ") + #", "layers": ["#)
            for (l, layer) in instrument.layers.enumerated() {
                var parts: [String] = []
                if layer.velocities != 1...127 {
                    parts.append(#""velocity": [\#(layer.velocities.lowerBound), \#(layer.velocities.upperBound)]"#)
                }
                parts.append(#""samples": [\#(layer.samples.map(Self.sample).joined(separator: ", "))]"#)
                if case .random(let seed) = layer.selection { parts.append(#""selection": "random", "seed": \#(seed)"#) }
                if layer.gainDb != 0 { parts.append(#""gainDb": \#(Self.number(layer.gainDb))"#) }
                if let curve = layer.velocityCurve {
                    switch curve.shape {
                    case .linear: if curve.track == 1 { parts.append(#""velocityCurve": "linear""#) }
                    case .squared: parts.append(#""velocityCurve": "squared""#)
                    case .points(let points):
                        let list = points.map { "[\($0.velocity), \(Self.number($0.level))]" }.joined(separator: ", ")
                        parts.append(#""velocityCurve": [\#(list)]"#)
                    }
                    if curve.track != 1 { parts.append(#""velocityTrack": \#(Self.number(curve.track))"#) }
                }
                lines.append("      { " + parts.joined(separator: ", ") + " }" + (l < instrument.layers.count - 1 ? "," : ""))
            }
            lines.append("    ] }" + (i < instruments.count - 1 ? "," : ""))
        }
        lines.append(patterns.isEmpty && song == nil ? "  ]" : "  ],")
        if !patterns.isEmpty { lines.append(#"  "patterns": ["#) }
        for (p, pattern) in patterns.enumerated() {
            var header = [#""name": \#(JSONValue.quoted(pattern.name))"#, #""beatsPerBar": \#(pattern.beatsPerBar)"#,
                          #""stepsPerBeat": \#(pattern.stepsPerBeat)"#, #""bars": \#(pattern.bars)"#]
            if !pattern.fillsItsBars { header.append(#""stepCount": \#(pattern.stepCount)"#) }
            if pattern.swing != 0 { header.append(#""swing": \#(Self.number(pattern.swing))"#) }
            if pattern.seed != 1 { header.append(#""seed": \#(pattern.seed)"#) }
            if let h = pattern.humanize {
                header.append(#""humanize": { "seed": \#(h.seed), "frames": \#(h.frames), "velocity": \#(h.velocity) }"#)
            }
            lines.append("    { " + header.joined(separator: ", ") + #", "tracks": {"#)
            for (t, track) in pattern.tracks.enumerated() {
                let steps = "[" + track.velocities.map(String.init).joined(separator: ", ") + "]"
                var value = steps
                if track.probabilities.contains(where: { $0 != 1 }) {
                    value = #"{ "steps": \#(steps), "probability": [\#(track.probabilities.map(Self.number).joined(separator: ", "))] }"#
                }
                lines.append("      \(JSONValue.quoted(instruments[track.instrument].id)): \(value)" + (t < pattern.tracks.count - 1 ? "," : ""))
            }
            lines.append("    } }" + (p < patterns.count - 1 ? "," : ""))
        }
        if !patterns.isEmpty { lines.append(song == nil ? "  ]" : "  ],") }
        if let song {
            lines.append(#"  "song": { "loop": \#(song.loop), "sequence": ["#)
            for (e, entry) in song.entries.enumerated() {
                var parts = [#""pattern": \#(JSONValue.quoted(patterns[entry.pattern].name))"#, #""repeats": \#(entry.repeats)"#]
                if let tempo = entry.tempo { parts.append(#""tempo": \#(Self.number(tempo))"#) }
                lines.append("    { " + parts.joined(separator: ", ") + " }" + (e < song.entries.count - 1 ? "," : ""))
            }
            lines.append("  ] }")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A sample: its path, or `{ "path": …, "stream": true }` when it says how it is loaded.
    private static func sample(_ file: SampleFile) -> String {
        if file.isTrimmed {
            var fields = [#""path": \#(JSONValue.quoted(file.path))"#]
            if file.loading == .preload { fields.append(#""preload": true"#) }
            if file.offset != 0 { fields.append(#""offset": \#(file.offset)"#) }
            if let end = file.end { fields.append(#""end": \#(end)"#) }
            if file.reverse { fields.append(#""reverse": true"#) }
            if let loop = file.loop { fields.append(#""loop": [\#(loop.lowerBound), \#(loop.upperBound)]"#) }
            if let data = file.data { fields.append(#""data": "\#(Data(data).base64EncodedString())""#) }
            return "{ " + fields.joined(separator: ", ") + " }"
        }
        return switch file.loading {
        case .automatic: JSONValue.quoted(file.path)
        case .stream: #"{ "path": \#(JSONValue.quoted(file.path)), "stream": true }"#
        case .preload: #"{ "path": \#(JSONValue.quoted(file.path)), "preload": true }"#
        }
    }

    /// The patch with every relative sample path rewritten to be relative to `directory` (where
    /// the patch will be written), so that it names the same files from there. Absolute paths stay.
    package func withSamplePaths(relativeTo directory: String) -> Patch {
        var patch = self
        let base = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL.pathComponents
        for i in patch.instruments.indices {
            for l in patch.instruments[i].layers.indices {
                for s in patch.instruments[i].layers[l].samples.indices {
                    let sample = patch.instruments[i].layers[l].samples[s]
                    guard !sample.path.hasPrefix("/") else { continue }
                    let target = URL(fileURLWithPath: sample.resolvedPath).standardizedFileURL.pathComponents
                    var common = 0
                    while common < base.count, common < target.count - 1, base[common] == target[common] { common += 1 }
                    let up = Array(repeating: "..", count: base.count - common)
                    patch.instruments[i].layers[l].samples[s].path = (up + target[common...]).joined(separator: "/")
                }
            }
        }
        return patch
    }

    /// `1` rather than `1.0`; otherwise the shortest text that reads back as the same number.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return "\(value)"
    }
}
