import Foundation
import SamplerCore
import Patches

/// Converts a Hydrogen song (`.h2song`) into a version 2 kit with patterns and a song: the song's
/// instruments (as `HydrogenKitImporter` reads them, the song's volume folded into their gains),
/// its patterns on a grid of Hydrogen's ticks (48 per quarter note), each column of the pattern
/// sequence as one pattern (patterns played together are merged), the columns in order (repeated
/// columns as repeats), the tempo (and tempo markers when the song's timeline is on). What it
/// cannot carry is listed in the notes. Control thread only.
package enum HydrogenSongImporter {
    /// Where Hydrogen looks for a kit named by a song: the user's kits, then the system's.
    package static var kitDirectories: [String] {
        [NSHomeDirectory() + "/.hydrogen/data/drumkits", "/usr/share/hydrogen/data/drumkits"]
    }

    /// The most pattern steps (over every track of every pattern) a converted song may have.
    static let maxCells = 4_000_000

    package static func importSong(path: String, kitDirectories: [String] = kitDirectories) throws -> HydrogenKitImporter.Result {
        try importSong(data: HydrogenKitImporter.readFile(path, what: "a Hydrogen song"), path: path,
                       kitDirectories: kitDirectories)
    }

    /// Imports a song held in `data`; `path` locates relative kits and names it in errors.
    /// Read by `XMLReader`: no entity is ever defined, expanded or fetched.
    package static func importSong(data: Data, path: String, kitDirectories: [String] = kitDirectories) throws -> HydrogenKitImporter.Result {
        guard String(bytes: data, encoding: .utf8) != nil else {
            throw SamplerError("\(path): not a Hydrogen song (the file is not UTF-8 text)")
        }
        let root: XMLElementNode
        do { root = try XMLReader.parse([UInt8](data)) } catch {
            throw SamplerError("\(path): not a readable XML file at line \(error.line) (\(error.message))")
        }
        guard root.name == "song" else {
            throw SamplerError("\(path): expected a Hydrogen song (<song>), got <\(root.name)>")
        }
        var notes: [String] = []
        let bpm = root.number("bpm").map { min(1000, max(1, $0)) } ?? 120
        let volume = max(0, root.number("volume") ?? 0.5)
        if let law = root.text("pan_law_type"), !law.isEmpty, law != "RATIO_STRAIGHT_POLYGONAL" {
            notes.append("pan law \(law) is not carried over (the patch uses Hydrogen's default, balance)")
        }
        for (key, what) in [("swing_factor", "swing"), ("humanize_time", "humanize (timing)"), ("humanize_velocity", "humanize (velocity)")] {
            if let v = root.number(key), v != 0 { notes.append("\(what) \(v) is not carried over") }
        }

        // The kit: the directory the instruments name (`drumkitPath`, else `drumkit` looked up).
        guard let list = root.child("instrumentList"), let first = list.children(named: "instrument").first else {
            throw SamplerError("\(path): the song has no <instrumentList> with instruments")
        }
        let songDirectory = URL(fileURLWithPath: path).deletingLastPathComponent().standardizedFileURL
        var kitDirectory = songDirectory
        var isDirectory: ObjCBool = false
        if let kitPath = first.text("drumkitPath"), FileManager.default.fileExists(atPath: kitPath, isDirectory: &isDirectory),
           isDirectory.boolValue {
            kitDirectory = URL(fileURLWithPath: kitPath)
        } else if let name = first.text("drumkit"), !name.isEmpty {
            let candidates = kitDirectories.map { URL(fileURLWithPath: $0).appendingPathComponent(name) }
            if let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
                kitDirectory = found
            } else {
                notes.append("the kit \"\(name)\" is not in \(kitDirectories.joined(separator: " or ")); samples are looked for next to the song")
            }
        }
        let kits = Set(list.children(named: "instrument").compactMap { $0.text("drumkit") })
        if kits.count > 1 { notes.append("instruments from several kits (\(kits.sorted().joined(separator: ", "))); all are looked for in \(kitDirectory.path)") }
        let components = root.child("componentList")?.children(named: "drumkitComponent") ?? []
        let componentVolume = components.count == 1 ? max(0, components[0].number("volume") ?? 1) : 1
        if components.count > 1 { notes.append("\(components.count) drumkit components: only the first instrument component is used") }

        var parsed = HydrogenKitImporter.readInstruments(list, directory: kitDirectory, extraGain: volume * componentVolume)
        notes += parsed.notes
        guard !parsed.instruments.isEmpty else {
            throw SamplerError("\(path): no instrument of the song has a sample" + (parsed.missing.isEmpty ? "" : " on disk (\(parsed.missing.count) missing)"))
        }
        var indexOfID: [Int: Int] = [:]
        for (i, id) in parsed.hydrogenIDs.enumerated() { if let id { indexOfID[id] = i } }
        // Muted instruments play nothing in Hydrogen.
        var muted: Set<Int> = []
        for element in list.children(named: "instrument") where element.text("isMuted") == "true" {
            if let id = element.number("id").map({ Int($0) }), let i = indexOfID[id] {
                muted.insert(i)
                notes.append("instrument \(parsed.instruments[i].id) is muted in the song: its notes are left out")
            }
        }

        /// A note's velocity (0…1) as 1…127, on the layer Hydrogen picks for it: the first layer
        /// in file order whose bounds hold it (both inclusive), else the one whose lower bound is
        /// nearest. Rounding can land on the next layer's range at a boundary (0.2 → 25, in
        /// 1…25 where Hydrogen plays the 0.2…0.4 layer): the velocity is then moved into the
        /// range of Hydrogen's layer (26), a level difference of at most a few tenths of a dB.
        func velocity(_ v: Double, instrument i: Int) -> Int {
            let q = max(1, min(127, Int((v * 127).rounded())))
            let bounds = parsed.layerBounds[i]
            guard !bounds.isEmpty, bounds.count == parsed.instruments[i].layers.count else { return q }
            let chosen = bounds.firstIndex { $0.min <= v && v <= $0.max }
                ?? bounds.indices.min { abs(bounds[$0].min - v) < abs(bounds[$1].min - v) }!
            let range = parsed.instruments[i].layers[chosen].velocities
            return min(max(q, range.lowerBound), range.upperBound)
        }

        // Patterns: their size in ticks and their notes.
        struct Note { var tick: Int; var instrument: Int; var velocity: Int; var probability: Double }
        struct HydrogenPattern { var size: Int; var notes: [Note] }
        var patterns: [String: HydrogenPattern] = [:]
        var unsupported: [String: Int] = [:]
        for element in root.child("patternList")?.children(named: "pattern") ?? [] {
            guard let name = element.text("name"), patterns[name] == nil else { continue }
            let size = element.number("size").map { Int($0) }.flatMap { $0 > 0 && $0 <= 192 * 64 ? $0 : nil } ?? 192
            var list: [Note] = []
            for n in element.child("noteList")?.children(named: "note") ?? [] {
                guard let tick = n.number("position").map({ Int($0) }), tick >= 0, tick < size,
                      let id = n.number("instrument").map({ Int($0) }), let i = indexOfID[id], !muted.contains(i) else { continue }
                let v = min(1, max(0, n.number("velocity") ?? 0.8))
                guard v > 0 else { continue }
                if (n.number("pan") ?? 0) != 0 || (n.number("pan_L").map { $0 != n.number("pan_R") } ?? false) { unsupported["note pan", default: 0] += 1 }
                if (n.number("pitch") ?? 0) != 0 || !["", "C0"].contains(n.text("key") ?? "") { unsupported["note pitch or key", default: 0] += 1 }
                if (n.number("leadlag") ?? 0) != 0 { unsupported["note lead/lag", default: 0] += 1 }
                list.append(Note(tick: tick, instrument: i, velocity: velocity(v, instrument: i),
                                 probability: min(1, max(0, n.number("probability") ?? 1))))
            }
            patterns[name] = HydrogenPattern(size: size, notes: list)
        }
        for (what, count) in unsupported.sorted(by: { $0.key < $1.key }) { notes.append("\(count) notes with \(what): not carried over") }
        if !(root.child("virtualPatternList")?.children(named: "pattern").isEmpty ?? true) {
            notes.append("virtual patterns are not carried over")
        }

        // Columns: the patterns played together, merged; a column lasts as long as its longest.
        var columns: [[String]] = []
        for group in root.child("patternSequence")?.children(named: "group") ?? [] {
            columns.append(group.children(named: "patternID").compactMap { id in
                let name = id.text.trimmingCharacters(in: .whitespacesAndNewlines)
                return patterns[name] != nil ? name : nil
            })
        }
        guard !columns.isEmpty else { throw SamplerError("\(path): the song has no <patternSequence> to play") }
        let lengths = columns.map { names in names.map { patterns[$0]!.size }.max() ?? 192 }

        // The grid: a step is the largest number of ticks every note and column is a multiple
        // of; a beat the largest that divides a quarter note (48 ticks) and every column.
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let beat = lengths.reduce(48, gcd)
        let step = patterns.values.flatMap { $0.notes.map(\.tick) }.reduce(beat, gcd)
        var kitPatterns: [DrumPattern] = []
        var patternIndex: [String: Int] = [:]
        var entries: [Song.Entry] = []
        var cells = 0
        let tempoScale = 48 / Double(beat)
        // Tempo markers, when the song's timeline is on.
        var markers: [(column: Int, bpm: Double)] = []
        if root.text("isTimelineActivated") == "true" {
            for m in root.child("BPMTimeLine")?.children(named: "newBPM") ?? [] {
                if let bar = m.number("BAR").map({ Int($0) }), let b = m.number("BPM") { markers.append((bar, min(400, max(10, b)))) }
            }
            markers.sort { $0.column < $1.column }
        } else if !(root.child("BPMTimeLine")?.children(named: "newBPM").isEmpty ?? true) {
            notes.append("tempo markers are ignored: the song's timeline is off (as Hydrogen plays it)")
        }
        for (c, names) in columns.enumerated() {
            let key = names.isEmpty ? "(empty)" : names.joined(separator: "+")
            let length = lengths[c]
            let beats = length / beat
            guard beats <= 64 else {
                throw SamplerError("\(path): column \(c + 1) (\(key)) is \(beats) beats of \(beat) ticks; a pattern holds at most 64")
            }
            if patternIndex[key] == nil {
                let steps = length / step
                // Tracks only for the instruments the column plays; the song as a whole is kept
                // to a size a patch can hold (a hostile file must not allocate gigabytes).
                var velocities: [Int: [Int]] = [:]
                var probabilities: [Int: [Double]] = [:]
                var doubled = 0
                for name in names {
                    for n in patterns[name]!.notes {
                        let s = n.tick / step
                        if velocities[n.instrument] == nil {
                            cells += steps
                            guard cells <= Self.maxCells else {
                                throw SamplerError("\(path): the song is too large to convert (more than \(Self.maxCells) pattern steps in all)")
                            }
                            velocities[n.instrument] = [Int](repeating: 0, count: steps)
                            probabilities[n.instrument] = [Double](repeating: 1, count: steps)
                        }
                        if velocities[n.instrument]![s] != 0 { doubled += 1 }
                        if n.velocity > velocities[n.instrument]![s] {
                            velocities[n.instrument]![s] = n.velocity
                            probabilities[n.instrument]![s] = n.probability
                        }
                    }
                }
                if doubled > 0 { notes.append("\(key): \(doubled) notes on a tick another note of the same instrument has; the louder plays") }
                let tracks = velocities.keys.sorted().map { i in
                    DrumTrack(instrument: i, velocities: velocities[i]!, probabilities: probabilities[i]!)
                }
                patternIndex[key] = kitPatterns.count
                // A pattern needs a track: an empty column is a silent one of the first instrument.
                kitPatterns.append(DrumPattern(name: key, beatsPerBar: beats, stepsPerBeat: beat / step, bars: 1,
                                               tracks: tracks.isEmpty ? [DrumTrack(instrument: 0, velocities: [Int](repeating: 0, count: steps))] : tracks))
            }
            let columnBPM = markers.last(where: { $0.column <= c })?.bpm ?? bpm
            let tempo = markers.isEmpty ? nil : columnBPM * tempoScale
            if let last = entries.last, last.pattern == patternIndex[key]!, last.tempo == tempo, last.repeats < 10000 {
                entries[entries.count - 1].repeats += 1
            } else {
                entries.append(Song.Entry(pattern: patternIndex[key]!, repeats: 1, tempo: tempo))
            }
        }
        if beat != 48 { notes.append("beats are \(beat) ticks (the tempo is scaled by \(tempoScale) to count them)") }
        parsed.notes = notes
        let kit = Patch(tempo: bpm * tempoScale, instruments: parsed.instruments, patterns: kitPatterns,
                          song: Song(entries: entries, loop: false), file: path, panLaw: .balance)
        return HydrogenKitImporter.Result(kit: kit, notes: notes, missing: parsed.missing)
    }
}
