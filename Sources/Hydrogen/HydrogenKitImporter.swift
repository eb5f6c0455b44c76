import Foundation
import SafeFiles
import SamplerCore
#if canImport(FoundationXML)
import FoundationXML
#endif
import Patches

/// Converts a Hydrogen drumkit (`drumkit.xml`) into a version 2 kit: instruments with their
/// velocity layers and per-layer gains, volume and gain, pan (with Hydrogen 1.2's default pan
/// law, "balance"), pitch, mute groups and MIDI notes, referencing the samples where they are
/// (absolute paths). Sample files that are not on disk are listed in `missing` and left out. Understands the old layout (`<layer>` or `<filename>` right under
/// `<instrument>`, `pan_L`/`pan_R`) and the new one (`<instrumentComponent>`, `<pan>`). Adds one
/// pattern, `audition`, that plays each instrument in turn. Control thread only.
package enum HydrogenKitImporter {
    /// What could not be carried over exactly, one line each (e.g. per-layer gains).
    package struct Result {
        package var kit: Patch
        package var notes: [String]
        /// Sample files the kit names that are not on disk, one line per file with the
        /// instruments naming it ("/path/snare.wav (instrument 3 (Snare))"); left out of `kit`.
        package var missing: [String] = []
    }

    package static func importKit(path: String) throws -> Result {
        try importKit(data: readFile(path, what: "a drumkit.xml"), path: path)
    }

    /// The bytes of a Hydrogen file (`what` names its kind in the size error), at most 16 MB, read
    /// through `FileGate` (a regular file only). Read here, not by XMLParser(contentsOf:): that one
    /// goes through CoreFoundation's URL loading, which prints a warning of its own to stderr when
    /// the file is missing.
    static func readFile(_ path: String, what: String) throws -> Data {
        do {
            return Data(try FileGate.read(path, limit: 16 << 20))
        } catch .tooLarge(let size) {
            throw SamplerError("\(path): the file is \(size >> 20) MB; \(what) is at most 16 MB")
        } catch {
            throw SamplerError("\(path): cannot read the file (\(error.reason))")
        }
    }

    /// Imports a drumkit.xml held in `data`; `path` locates its samples and names it in errors.
    /// Read by `XMLReader`: no entity is ever defined, expanded or fetched.
    package static func importKit(data: Data, path: String) throws -> Result {
        // Hydrogen writes UTF-8.
        guard String(validatingUTF8Bytes: data) != nil else {
            throw SamplerError("\(path): not a Hydrogen drumkit (the file is not UTF-8 text)")
        }
        let root: XMLElementNode
        do { root = try XMLReader.parse([UInt8](data)) } catch {
            throw SamplerError("\(path): not a readable XML file at line \(error.line) (\(error.message))")
        }
        guard root.name == "drumkit_info" else {
            throw SamplerError("\(path): expected a Hydrogen drumkit (<drumkit_info>), got <\(root.name)>")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL
        guard let list = root.child("instrumentList"), !list.children(named: "instrument").isEmpty else {
            throw SamplerError("\(path): the drumkit has no <instrumentList> with instruments")
        }
        let parsed = readInstruments(list, directory: directory)
        let (instruments, notes, missing) = (parsed.instruments, parsed.notes, parsed.missing)
        guard !instruments.isEmpty else {
            throw SamplerError("\(path): no instrument of the drumkit has a sample" + (missing.isEmpty ? "" : " on disk (\(missing.count) missing)"))
        }
        // One bar of eighths per eight instruments, each instrument once.
        let bars = (instruments.count + 7) / 8
        let tracks = instruments.indices.map { i in
            DrumTrack(instrument: i, velocities: (0..<(bars * 8)).map { $0 == i ? 100 : 0 })
        }
        let audition = DrumPattern(name: "audition", beatsPerBar: 4, stepsPerBeat: 2, bars: bars, tracks: tracks)
        return Result(kit: Patch(tempo: 120, instruments: instruments, patterns: [audition], song: nil, file: path, panLaw: .balance),
                      notes: notes, missing: missing)
    }

    /// What `readInstruments` found.
    struct Instruments {
        var instruments: [DrumInstrument]
        /// Each instrument's Hydrogen `<id>` (what a song's notes name).
        var hydrogenIDs: [Int?]
        /// Each instrument's layers' Hydrogen velocity bounds (0…1), in the layers' order.
        var layerBounds: [[(min: Double, max: Double)]]
        var notes: [String]
        var missing: [String]
    }

    /// The instruments of a Hydrogen `<instrumentList>` (a drumkit's or a song's), their samples
    /// resolved against `directory`; `extraGain` multiplies every instrument's level (a song's
    /// volume). Instruments without a sample on disk are left out (with a note).
    static func readInstruments(_ list: XMLElementNode, directory: URL, extraGain: Double = 1) -> Instruments {
        var notes: [String] = []
        var missingFiles: [String] = []
        var missingPlaces: [String: [String]] = [:]
        var instruments: [DrumInstrument] = []
        var hydrogenIDs: [Int?] = []
        var layerBounds: [[(min: Double, max: Double)]] = []
        var ids: Set<String> = []
        var usedNotes: Set<Int> = []
        for (index, element) in list.children(named: "instrument").enumerated() {
            let name = element.text("name") ?? "instrument \(index + 1)"
            var id = slug(name)
            if id.isEmpty { id = "instrument-\(index + 1)" }
            var unique = id, n = 2
            while !ids.insert(unique).inserted { unique = "\(id)-\(n)"; n += 1 }
            let place = "instrument \(index + 1) (\(name))"

            let layerElements = (element.child("instrumentComponent").map { [$0] } ?? [element])
                .flatMap { $0.children(named: "layer") }
            var layers: [DrumLayer] = []
            var pitches: Set<Double> = []
            /// The sample's path, or nil (and a line in `missing`) when it is not on disk.
            func existing(_ file: String) -> String? {
                let resolved = file.hasPrefix("/") ? file : directory.appendingPathComponent(file).standardizedFileURL.path
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), !isDirectory.boolValue else {
                    if missingPlaces[resolved] == nil { missingFiles.append(resolved) }
                    if missingPlaces[resolved, default: []].last != place { missingPlaces[resolved, default: []].append(place) }
                    return nil
                }
                return resolved
            }
            var namedSamples = false
            var bounds: [(min: Double, max: Double)] = []
            for layer in layerElements {
                guard let file = layer.text("filename"), !file.isEmpty else { continue }
                namedSamples = true
                guard let resolved = existing(file) else { continue }
                let low = layer.number("min") ?? 0, high = layer.number("max") ?? 1
                bounds.append((low, high))
                let gain = max(0, layer.number("gain") ?? 1)
                let gainDb = gain > 0 ? min(24, max(-120, 20 * log10(gain))) : -120
                layers.append(DrumLayer(velocities: velocityRange(low, high), samples: [SampleFile(path: resolved, resolvedPath: resolved)],
                                        gainDb: (gainDb * 100).rounded() / 100))
                pitches.insert(layer.number("pitch") ?? 0)
            }
            if layers.isEmpty, !namedSamples, let file = element.text("filename"), !file.isEmpty {
                namedSamples = true
                if let resolved = existing(file) {
                    layers.append(DrumLayer(samples: [SampleFile(path: resolved, resolvedPath: resolved)]))
                    bounds.append((0, 1))
                }
            }
            guard !layers.isEmpty else {
                notes.append(namedSamples ? "\(place): every sample file is missing, left out" : "\(place): no samples, left out")
                ids.remove(unique)
                continue
            }
            if pitches.count > 1 { notes.append("\(place): layers with different pitches; using the first") }
            let tune = min(48, max(-48, layerElements.first.flatMap { $0.number("pitch") } ?? 0))

            let linear = extraGain * (element.number("volume") ?? 1) * (element.number("gain") ?? 1)
                * (element.child("instrumentComponent")?.number("gain") ?? 1)
            let gainDb = linear > 0 ? min(24, max(-120, 20 * log10(linear))) : -120
            var pan = 0.0
            if let p = element.number("pan") {
                pan = p
            } else if let l = element.number("pan_L"), let r = element.number("pan_R") {
                // Hydrogen's legacy pair: the quieter side says how far the sound leans the other way.
                pan = l == r ? 0 : (r < l ? r / l - 1 : 1 - l / r)
            }
            let group = Int(element.number("muteGroup") ?? -1)
            var midiNote: Int?
            if let note = element.number("midiOutNote").map({ Int($0) }), (0...127).contains(note), usedNotes.insert(note).inserted {
                midiNote = note
            }
            hydrogenIDs.append(element.number("id").map { Int($0) })
            layerBounds.append(bounds)
            instruments.append(DrumInstrument(id: unique, layers: layers, gainDb: (gainDb * 100).rounded() / 100,
                                              pan: (min(1, max(-1, pan)) * 1000).rounded() / 1000, tune: tune,
                                              midiNote: midiNote, chokeGroup: group >= 0 ? group + 1 : 0,
                                              // Hydrogen lets an instrument's notes overlap freely unless it is a
                                              // "stop note" instrument (a new note ends the old one).
                                              voices: element.text("isStopNote") == "true" ? 1 : 16))
        }
        let missing = missingFiles.map { file in
            let places = missingPlaces[file] ?? []
            let shown = places.prefix(3).joined(separator: ", ") + (places.count > 3 ? " and \(places.count - 3) more" : "")
            return "\(file) (\(shown))"
        }
        return Instruments(instruments: instruments, hydrogenIDs: hydrogenIDs, layerBounds: layerBounds, notes: notes, missing: missing)
    }

    /// Hydrogen's 0…1 velocity bounds as 1…127: [0, 0.5] and (0.5, 1] become 1…63 and 64…127.
    static func velocityRange(_ low: Double, _ high: Double) -> ClosedRange<Int> {
        let lo = low <= 0 ? 1 : min(127, Int((low * 127).rounded(.down)) + 1)
        let hi = min(127, max(lo, Int((high * 127).rounded(.down))))
        return lo...hi
    }

    static func slug(_ name: String) -> String {
        var out = ""
        for c in name.lowercased() {
            if c.isLetter || c.isNumber { out.append(c) } else if !out.isEmpty && out.last != "-" { out.append("-") }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out
    }
}

/// A minimal element tree: names, text and children.
final class XMLElementNode {
    let name: String
    var text = ""
    var children: [XMLElementNode] = []
    init(name: String) { self.name = name }

    func child(_ name: String) -> XMLElementNode? { children.first { $0.name == name } }
    func children(named name: String) -> [XMLElementNode] { children.filter { $0.name == name } }
    func text(_ name: String) -> String? { child(name)?.text.trimmingCharacters(in: .whitespacesAndNewlines) }
    /// A finite number of sane size (a drumkit's gains, pans, groups, notes, velocities); nan,
    /// infinities and huge values count as absent, so conversions to `Int` cannot trap.
    func number(_ name: String) -> Double? {
        guard let value = text(name).flatMap(Double.init), value.isFinite, abs(value) < 1e9 else { return nil }
        return value
    }
}

private extension String {
    /// The bytes as a string if they are valid UTF-8 (no NUL check), else nil.
    init?(validatingUTF8Bytes data: Data) {
        guard let s = String(bytes: data, encoding: .utf8) else { return nil }
        self = s
    }
}
