import Foundation
import Patches
import SafeFiles
import SamplerCore
import SoundFiles

/// Converts an SFZ instrument into the patch model, as sfizz plays it where the model can:
/// one instrument per MIDI note (a key range gives one per key, each tuned by
/// `pitch_keytrack`), velocity layers from `lovel`/`hivel`, round robin from
/// `seq_length`/`seq_position`, random choice from `lorand`/`hirand`, choke groups from
/// `group`/`off_by`, voices from `polyphony`/`note_polyphony`, level from `volume` and
/// `amplitude`, pan (sfizz's constant-power law, stereo samples too), tuning, the velocity
/// curve (`amp_veltrack`, `amp_velcurve_N`, sfizz's squared curve by default), `loop_mode`
/// one_shot. What it cannot carry is reported once per opcode with its first line.
/// Control thread only.
package enum SFZImporter {
    package struct Result {
        package var kit: Patch
        /// One line per opcode (or feature) not carried, and per sample found under another
        /// spelling; each names its file and line.
        package var notes: [String]
        /// The names the file gives its controllers (`label_ccN`) and key switches (`sw_label`
        /// with its `sw_last`), one line each: "controller 4: Pedal (starts at 127)", "key switch
        /// 12: Keyboard".
        package var labels: [String] = []
        /// The kit as `import-sfz` writes it (the text checked against the patch format).
        package var patchJSON = ""
    }

    /// The most regions that sound together on one key (instruments sharing its note).
    static let maximumStacks = 64

    /// The most controller opcodes and velocity points the regions take from their headers and
    /// their own, counted once per header combination (bounded work, whatever the file's shape).
    static let maximumInheritedWork = 300_000

    /// The most opcodes the headers' merges hand to the regions under them (each merge counts
    /// the opcodes of its global, master and group headers).
    static let maximumMergedWork = 4_000_000

    /// Converts read sections, emptying `sections` as it goes (their memory is freed before
    /// the instruments are built); `fileExists` decides which sample paths are on disk (the
    /// fuzzer passes one that says every one is).
    package static func convert(_ sections: inout [SFZSection], files: [String], file: String, directory: String,
                                fileExists: (String) -> Bool, sampleRoot: String? = nil) throws -> Result {
        var notes: [String] = []
        var reported: Set<String> = []
        func report(_ key: String, _ line: String) {
            if reported.insert(key).inserted { notes.append(line) }
        }
        func place(_ o: SFZOpcode) -> String { "\(files[Int(o.fileIndex)]): line \(o.line)" }

        // Header inheritance: control < global < master < group < region.
        var control: [String: SFZOpcode] = [:]
        // What <control> gives the regions after it: default_path, and the keys' offset.
        var controlDefaultPath = "", controlKeyOffset = 0
        var layerCount = 0
        var global: [String: SFZOpcode] = [:], master: [String: SFZOpcode] = [:], group: [String: SFZOpcode] = [:]
        // The headers' opcodes merged once for the regions under them (a new header, a new
        // merge), counted: a header's opcodes are shared by its regions, never copied into each.
        var contextIsCurrent = false, mergedWork = 0
        // Samples embedded in the file (`<sample>`), by name.
        var embedded: [String: [UInt8]] = [:]
        // The regions, in order: their sections (whose opcodes are gathered when each is
        // resolved), the merged headers above them and the <control> before them, as indices
        // (a library holds 100,000 regions: a few bytes each here).
        var contexts: [OpcodeLayer] = [], controls: [(defaultPath: String, keyOffset: Int)] = [("", 0)]
        var regions: [(section: Int32, context: Int32, control: Int32)] = []
        var curves: [Int: [Float]] = [:]
        for sectionIndex in sections.indices {
            let section = sections[sectionIndex]
            // A header's opcodes go once read (a `<sample>`'s data may be megabytes); a region's
            // once it is resolved.
            defer { if section.header != "region" { sections[sectionIndex].opcodes = [] } }
            var own: [String: SFZOpcode] = [:]
            if section.header != "region" { for o in section.opcodes { own[o.name] = o } }
            switch section.header {
            case "control":
                // Each <control> starts its own default_path (as sfizz); the rest adds up.
                control["default_path"] = nil
                control.merge(own) { $1 }
                // <control>'s note_offset and octave_offset move the keys of the regions after it.
                func offset(_ name: String, _ range: ClosedRange<Int>) -> Int {
                    control[name].flatMap { Int($0.value.trimmedBlanks) }.map { min(range.upperBound, max(range.lowerBound, $0)) } ?? 0
                }
                controlDefaultPath = control["default_path"]?.value ?? ""
                controlKeyOffset = offset("note_offset", -127...127) + 12 * offset("octave_offset", -10...10)
                controls.append((controlDefaultPath, controlKeyOffset))
            case "curve":
                guard let indexText = own["curve_index"]?.value, let index = Int(indexText.trimmedBlanks),
                      (0...255).contains(index) else {
                    report("curve:\(section.line)", "\(section.file): line \(section.line): a <curve> without a curve_index from 0 to 255 is left out")
                    continue
                }
                var points: [(Int, Float)] = []
                for (name, o) in own where name.hasPrefix("v") {
                    if let k = Int(name.dropFirst()), (0...127).contains(k), let v = Float(o.value.trimmedBlanks), v.isFinite {
                        points.append((k, v))
                    }
                }
                points.sort { $0.0 < $1.0 }
                if points.first?.0 != 0 { points.insert((0, 0), at: 0) }
                if points.last?.0 != 127 { points.append((127, 1)) }
                curves[index] = (0..<128).map { x in
                    let after = points.firstIndex { $0.0 >= x }!
                    if points[after].0 == x || after == 0 { return points[after].1 }
                    let a = points[after - 1], b = points[after]
                    return a.1 + (b.1 - a.1) * Float(x - a.0) / Float(b.0 - a.0)
                }
            case "sample":
                // A sample embedded in the file (sfizz's): its name and base64 data.
                guard let name = own["name"]?.value.trimmedBlanks, !name.isEmpty, let data = own["base64data"] else {
                    report("sample:\(section.line)", "\(section.file): line \(section.line): a <sample> without name= and base64data= is left out")
                    continue
                }
                // sfizz's files may leave out the padding.
                let padded = data.value + String(repeating: "=", count: (4 - data.value.utf8.count % 4) % 4)
                guard let bytes = Data(base64Encoded: padded, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
                    report("sample:\(section.line)", "\(section.file): line \(section.line): <sample> name=\(name.prefix(40)): its base64data is not base64: left out")
                    continue
                }
                embedded[name] = [UInt8](bytes)
            case "global": global = own; master = [:]; group = [:]; contextIsCurrent = false
            case "master": master = own; group = [:]; contextIsCurrent = false
            case "group": group = own; contextIsCurrent = false
            case "region":
                if !contextIsCurrent {
                    var merged = global
                    merged.merge(master) { $1 }
                    merged.merge(group) { $1 }
                    mergedWork += merged.count
                    guard mergedWork <= Self.maximumMergedWork else {
                        throw SFZError("\(file): line \(section.line): its headers hand more than \(Self.maximumMergedWork) opcodes to the regions under them in all (a header's opcodes count again after each new header)")
                    }
                    contexts.append(OpcodeLayer(id: layerCount, merged))
                    layerCount += 1
                    contextIsCurrent = true
                }
                regions.append((Int32(sectionIndex), Int32(contexts.count - 1), Int32(controls.count - 1)))
            default:
                report("<\(section.header)>", "\(section.file): line \(section.line): <\(section.header)> is not carried (its opcodes are ignored)")
            }
            guard regions.count <= 100_000 else { throw SFZError("\(file): more than 100000 regions") }
        }
        var setup = ControllerSetup()
        for (name, o) in writtenOrder(control) {
            if let (prefix, number) = numbered(name), prefix.hasPrefix("set_") {
                guard let v = Float(o.value.trimmedBlanks), v.isFinite else {
                    throw SFZError("\(place(o)): \(name): expected a number, got \"\(o.value.prefix(40))\"")
                }
                setup.defaults[number] = prefix == "set_cc" ? min(127, max(0, v)) / 127 : min(1, max(0, v))
                continue
            }
            if !isCarried(name) { report(name, "\(place(o)): \(name) is not carried") }
        }

        var resolved: [Region] = []
        resolved.reserveCapacity(regions.count)
        var missing: [String] = []
        var switchLabels: [Int: String] = [:]
        var lookup = SampleLookup()
        var respelled = 0
        var reportedLayers: Set<Int> = []
        // Each sample file's own loop, read once (`SoundFileLoops`).
        var fileLoops: [String: ClosedRange<Int>?] = [:]
        var rootKeys: [String: Int?] = [:]
        var controlsByContext: [String: Region] = [:]
        var controlIDs: [String: Int] = [:]
        var pointsByContext: [String: [VelocityCurve.Point]] = [:]
        var inheritedWork = 0
        var lastCarriedNames: [String] = []
        for (sectionIndex, contextIndex, controlIndex) in regions {
            let section = sections[Int(sectionIndex)], headerLayer = contexts[Int(contextIndex)]
            let (defaultPath, keyOffset) = controls[Int(controlIndex)]
            // Each region's opcodes are read once here: their memory goes as regions resolve, so
            // that the read text and the resolved regions are not all held at once.
            sections[Int(sectionIndex)].opcodes = []
            let opcodes = InheritedOpcodes(own: OpcodeLayer(id: -1, list: section.opcodes), context: headerLayer)
            let regionPlace = "\(section.file): line \(section.line)"
            // Each region's own opcodes are looked at once (in the file's order; a name given
            // twice counts where it is last given), each header's once.
            // A region naming the opcodes the last did, in its order, names carried ones only
            // when that one did (library regions mostly repeat their names).
            if !section.opcodes.elementsEqual(lastCarriedNames, by: { $0.name == $1 }) {
                var allCarried = true
                for o in section.opcodes where !isCarried(o.name) {
                    allCarried = false
                    guard let kept = opcodes.own[o.name], kept.line == o.line, files[Int(kept.fileIndex)] == files[Int(o.fileIndex)] else { continue }
                    report(o.name, "\(place(o)): \(o.name) is not carried")
                }
                lastCarriedNames = allCarried ? section.opcodes.map(\.name) : []
            }
            if reportedLayers.insert(headerLayer.id).inserted {
                for (name, o) in writtenOrder(headerLayer.all) where !isCarried(name) {
                    report(name, "\(place(o)): \(name) is not carried")
                }
            }
            func value(_ name: String) -> SFZOpcode? { opcodes[name] }
            func number(_ name: String, _ range: ClosedRange<Double>, default d: Double) throws -> Double {
                guard let o = value(name) else { return d }
                guard let x = Double(o.value.trimmedBlanks), x.isFinite else {
                    throw SFZError("\(place(o)): \(name): expected a number, got \"\(o.value.prefix(40))\"")
                }
                return min(range.upperBound, max(range.lowerBound, x))
            }
            func integer(_ name: String, _ range: ClosedRange<Int>, default d: Int) throws -> Int {
                Int(try number(name, Double(range.lowerBound)...Double(range.upperBound), default: Double(d)).rounded(.down))
            }
            func note(_ name: String) throws -> Int? {
                guard let o = value(name) else { return nil }
                guard let n = noteNumber(o.value) else {
                    throw SFZError("\(place(o)): \(name): expected a MIDI note (0 to 127, or a name like c4 or f#2), got \"\(o.value.prefix(40))\"")
                }
                return n
            }
            let direction = value("direction")?.value.trimmedBlanks ?? "forward"
            // A looping region's loop_start … loop_end (frames of the file, within offset … end;
            // the end of the sample without loop_end), as sfizz plays them. A range sfizz finds
            // invalid (its start past its end) does not loop there: `invalid`.
            func loopRange(offset: Int, end: Int?, loops: Int) throws -> (range: ClosedRange<Int>?, invalid: Bool) {
                guard loops < 0, value("loop_start") != nil || value("loop_end") != nil || fileLoop != nil else { return (nil, false) }
                let last = end ?? SampleFile.toTheEnd
                let first = max(offset, try integer("loop_start", 0...(1 << 40), default: fileLoop?.lowerBound ?? 0))
                let stop = min(last, try integer("loop_end", 0...(1 << 40), default: fileLoop?.upperBound ?? last))
                guard first <= stop else {
                    report("loop:\(regionPlace)", "\(regionPlace): the loop starts (\(first)) past its end (\(stop)): the region does not loop (as sfizz)")
                    return (nil, true)
                }
                if direction == "reverse" {
                    report("loop:reverse", "\(regionPlace): loop_start/loop_end of a reversed sample are not carried: the whole sample loops")
                    return (nil, false)
                }
                return (first...stop, false)
            }
            let triggerWritten = value("trigger")?.value.trimmedBlanks ?? "attack"
            // first and legato play as attack regions do, with a condition on the other keys.
            let triggerMode = triggerWritten == "first" || triggerWritten == "legato" ? "attack" : triggerWritten
            if triggerMode != "attack", triggerMode != "release" {
                report("trigger=\(triggerMode)", "\(place(value("trigger")!)): trigger=\(triggerMode) is not carried: those regions are left out")
                continue
            }
            guard let sampleOpcode = value("sample") else {
                report("no sample", "\(regionPlace): a region without sample= is left out")
                continue
            }
            if sampleOpcode.value.hasPrefix("*") {
                report("generator", "\(place(sampleOpcode)): sample=\(sampleOpcode.value): generated sounds are not carried: the region is left out")
                continue
            }
            var written = defaultPath + sampleOpcode.value
            if written.utf8.contains(0x5C) { written = written.replacingOccurrences(of: "\\", with: "/") }
            // A sample embedded in the file, named as written (with or without default_path).
            let embeddedData = embedded.isEmpty ? nil : embedded[written] ?? embedded[sampleOpcode.value]
            let full = written.hasPrefix("/") ? written : directory + "/" + written
            let standardized = FileGate.lexical(full)
            if embeddedData == nil, let sampleRoot {
                try Self.checkDirectory(of: standardized, under: sampleRoot)
                lookup.followsLinks = false
            }
            guard let found = embeddedData != nil ? written : findFile(standardized, exists: fileExists, lookup: &lookup) else {
                // As sfizz: the region is left out, the rest plays.
                missing.append("\(place(sampleOpcode)): sample \"\(written)\": no such file (the region at line \(section.line))")
                report("missing:\(written)", "\(place(sampleOpcode)): sample \"\(written)\": no such file: the region at line \(section.line) is left out")
                continue
            }
            if embeddedData == nil, let sampleRoot {
                do { try FileGate.checkUnderRoot(sampleRoot, found) } catch { throw SampleOutsideRoot(root: sampleRoot) }
            }
            if embeddedData == nil, found != standardized || sampleOpcode.value.utf8.contains(0x5C) {
                // The first few are named; the rest are counted (one line at the end).
                if respelled < Self.respellingsNamed {
                    report("spelling:\(found)", "\(place(sampleOpcode)): sample \"\(sampleOpcode.value)\" found as \"\(found)\"")
                }
                respelled += 1
            }
            var keys: ClosedRange<Int>
            let key = try note("key")
            let lo = try note("lokey") ?? key ?? 0
            let hi = try note("hikey") ?? key ?? 127
            guard lo <= hi else {
                report("keys:\(regionPlace)", "\(regionPlace): lokey is above hikey: the region is left out")
                continue
            }
            keys = lo...hi
            if key != nil, value("lokey") == nil, value("hikey") == nil { keys = key!...key! }
            if keyOffset != 0 {
                let moved = (keys.lowerBound + keyOffset)...(keys.upperBound + keyOffset)
                guard moved.overlaps(0...127) else {
                    report("offset:\(regionPlace)", "\(regionPlace): note_offset/octave_offset move the region's keys beyond 0…127: it is left out")
                    continue
                }
                keys = max(0, moved.lowerBound)...min(127, moved.upperBound)
            }
            let lovel = max(1, try integer("lovel", 0...127, default: 0))
            let hivel = try integer("hivel", 0...127, default: 127)
            guard lovel <= hivel else { continue }
            let lorand = try number("lorand", 0...1, default: 0), hirand = try number("hirand", 0...1, default: 1)
            // loop_mode (default no_loop, or loop_continuous where the file names a loop): one_shot
            // plays out whatever the note-off; the others are released by it, loop_continuous
            // looping (its loop points, else the whole sample) until then.
            // `count` plays the sample that many times over, one-shot (sfizz), unless it loops.
            let count = value("count") == nil ? nil : try integer("count", 1...1_000_000, default: 1)
            // The sample file's own loop (its smpl chunk), read once per file where it decides
            // something: without loop_mode sfizz loops a file that names a loop (continuous),
            // and a looping region without loop_start/loop_end takes the file's.
            let explicitPoints = value("loop_start") != nil && value("loop_end") != nil
            let needsFileLoop = (value("loop_mode") == nil && count == nil && value("trigger")?.value != "release")
                || (!explicitPoints && (value("loop_mode")?.value).map { $0 == "loop_continuous" || $0 == "loop_sustain" } == true)
            var fileLoop: ClosedRange<Int>?
            if needsFileLoop {
                if let known = fileLoops[found] {
                    fileLoop = known
                } else {
                    fileLoop = embeddedData.map(SoundFileLoops.firstLoop(bytes:)) ?? SoundFileLoops.firstLoop(path: found, root: sampleRoot)
                    fileLoops[found] = .some(fileLoop)
                }
            }
            let mode = value("loop_mode")?.value ?? (count != nil ? "one_shot" : fileLoop != nil ? "loop_continuous" : "no_loop")
            var loops = 0
            switch mode {
            case "one_shot", "no_loop": loops = (count ?? 1) - 1
            case "loop_continuous": loops = -1
            case "loop_sustain":
                // Loops until released, then plays on to the end (as sfizz).
                loops = -1
            default:
                throw SFZError("\(place(value("loop_mode")!)): loop_mode: expected no_loop, one_shot, loop_continuous or loop_sustain, got \"\(mode.prefix(40))\"")
            }
            // The amplitude envelope, as sfizz plays it: its release is never shorter than 6 ms
            // (a shorter or zero ampeg_release sounds as 6 ms there).
            // What velocity adds to each stage (ampeg_vel2*, also spelt ampeg_velto*): seconds,
            // the sustain in percent.
            func velocityChange(_ names: (vel2: String, velto: String)) throws -> Double {
                try number(value(names.vel2) != nil ? names.vel2 : names.velto, -100...100, default: 0)
            }
            let velocityStages = EnvelopeStages(delay: try velocityChange(("ampeg_vel2delay", "ampeg_veltodelay")),
                                                attack: try velocityChange(("ampeg_vel2attack", "ampeg_veltoattack")),
                                                hold: try velocityChange(("ampeg_vel2hold", "ampeg_veltohold")),
                                                decay: try velocityChange(("ampeg_vel2decay", "ampeg_veltodecay")),
                                                sustain: try velocityChange(("ampeg_vel2sustain", "ampeg_veltosustain")) / 100,
                                                release: try velocityChange(("ampeg_vel2release", "ampeg_veltorelease")))
            let shaped = value("ampeg_attack") != nil || value("ampeg_hold") != nil || value("ampeg_decay") != nil
                || value("ampeg_sustain") != nil || value("ampeg_delay") != nil || value("ampeg_start") != nil
                || velocityStages != EnvelopeStages()
            let release = max(0.006, try number("ampeg_release", 0...100, default: 0.001))
            // Choked (off_by): off_mode fast (the default) releases over 6 ms, normal over the
            // region's release, time over off_time, each as sfizz's release falls.
            var choke: Double?
            if try integer("off_by", Int(Int32.min)...Int(Int32.max), default: 0) != 0 || value("off_mode") != nil || value("off_time") != nil {
                switch value("off_mode")?.value ?? "fast" {
                case "fast": choke = 0.006
                case "normal": choke = release
                case "time": choke = max(0.006, try number("off_time", 0...100, default: 0.006))
                default:
                    throw SFZError("\(place(value("off_mode")!)): off_mode: expected fast, normal or time, got \"\(value("off_mode")!.value.prefix(40))\"")
                }
            }
            var envelope: Envelope?
            if mode != "one_shot" || shaped || choke != nil {
                envelope = Envelope(attack: try number("ampeg_attack", 0...100, default: 0), hold: try number("ampeg_hold", 0...100, default: 0),
                                    decay: try number("ampeg_decay", 0...100, default: 0),
                                    sustain: try number("ampeg_sustain", 0...100, default: 100) / 100,
                                    release: release, noteOff: mode != "one_shot", choke: choke,
                                    delay: try number("ampeg_delay", 0...100, default: 0),
                                    start: try number("ampeg_start", 0...100, default: 0) / 100)
                if velocityStages != EnvelopeStages() { envelope?.velocity = velocityStages }
            }
            let offset = try integer("offset", 0...(1 << 40), default: 0)
            var reverse = false
            switch value("direction")?.value.trimmedBlanks ?? "forward" {
            case "forward": break
            case "reverse": reverse = true
            default: throw SFZError("\(place(value("direction")!)): direction: expected forward or reverse, got \"\(value("direction")!.value.prefix(40))\"")
            }
            var end: Int? = value("end") == nil ? nil : try integer("end", -1...(1 << 40), default: 0)
            var silent = false
            if let e = end, e <= 0 {
                // end=0 or -1: the region plays nothing, but its notes still choke (sfizz's
                // hi-hat pedals choke open hats so).
                silent = true
                end = nil
            } else if let e = end, e < offset {
                report("end:\(regionPlace)", "\(regionPlace): end=\(e) is before offset=\(offset): the region is left out")
                continue
            }
            if offset == 0, end == nil { end = nil }
            let amplitude = try number("amplitude", 0...1e8, default: 100)
            var gainDb = try number("volume", -144...48, default: 0) + (amplitude > 0 ? 20 * log10(amplitude / 100) : -144)
            for (volume, amplitude) in Self.headerLevels {
                gainDb += try number(volume, -144...48, default: 0)
                let a = try number(amplitude, 0...1e8, default: 100)
                gainDb += a > 0 ? 20 * log10(a / 100) : -144
            }
            if gainDb < -120 || gainDb > 24 {
                report("gain:\(regionPlace)", "\(regionPlace): a level of \(Int(gainDb.rounded())) dB is held to the patch format's -120…24 dB")
                gainDb = min(24, max(-120, gainDb))
            }
            // The velocity curve: amp_velcurve_N points, else sfizz's (v/127)²; then amp_veltrack.
            var points: [VelocityCurve.Point] = []
            // The curve's points: a region without points of its own takes its headers', read
            // once for all the regions under them; the others are counted as work.
            if opcodes.own.velocityCurve.isEmpty, let known = pointsByContext[opcodes.contextKey] {
                points = known
            } else {
                let velocityPoints = opcodes.merged(\.velocityCurve)
                if !opcodes.own.velocityCurve.isEmpty {
                    inheritedWork += velocityPoints.count
                    guard inheritedWork <= Self.maximumInheritedWork else {
                        throw SFZError("\(file): its regions inherit more than \(Self.maximumInheritedWork) controller opcodes and velocity points in all (each region counts its headers' again where it adds its own)")
                    }
                }
                for (name, o) in velocityPoints {
                    guard let n = Int(name.dropFirst("amp_velcurve_".count)), (0...127).contains(n),
                          let g = Double(o.value.trimmedBlanks), g.isFinite else {
                        throw SFZError("\(place(o)): \(name)=\(o.value.prefix(40)): expected amp_velcurve_0 … amp_velcurve_127 with a number from 0 to 1")
                    }
                    points.append(VelocityCurve.Point(velocity: n, level: min(1, max(0, g))))
                }
                if opcodes.own.velocityCurve.isEmpty { pointsByContext[opcodes.contextKey] = points }
            }
            points.sort { $0.velocity < $1.velocity }
            var curve = VelocityCurve(shape: points.isEmpty ? .squared : .points(points),
                                      track: try number("amp_veltrack", -100...100, default: 100) / 100)
            // Velocity crossfades (xfin_lovel … xfout_hivel, xf_velcurve) as sfizz computes them,
            // folded into the region's velocity curve.
            let velocityFades = value("xfin_lovel") != nil || value("xfin_hivel") != nil || value("xfout_lovel") != nil || value("xfout_hivel") != nil
            if velocityFades {
                let inLo = try number("xfin_lovel", 0...127, default: 0), inHi = try number("xfin_hivel", 0...127, default: 0)
                let outLo = try number("xfout_lovel", 0...127, default: 127), outHi = try number("xfout_hivel", 0...127, default: 127)
                let power: Bool
                switch value("xf_velcurve")?.value.trimmedBlanks ?? "power" {
                case "power": power = true
                case "gain": power = false
                default: throw SFZError("\(place(value("xf_velcurve")!)): xf_velcurve: expected power or gain, got \"\(value("xf_velcurve")!.value.prefix(40))\"")
                }
                let levels = curve.levels
                let faded = (0...127).map { v -> Double in
                    let x = Double(v)
                    var g = 1.0
                    let inLength = inHi - inLo - 1
                    if x < inLo { g = 0 } else if inLength > 0, x < inHi {
                        let p = (x - inLo) / inLength
                        g = power ? p.squareRoot() : p
                    }
                    let outLength = outHi - outLo - 1
                    if outLength > 0, x > outLo {
                        let p = (x - outLo) / outLength
                        g *= p > 1 ? 0 : (power ? (1 - p).squareRoot() : 1 - p)
                    }
                    return levels[v] * g
                }
                curve = VelocityCurve(shape: .points(faded.enumerated().map { VelocityCurve.Point(velocity: $0.offset, level: min(1, max(0, $0.element))) }))
            }
            // `pitch_keycenter=sample`: the root key the sample file names (its smpl chunk), 60
            // when it names none, as sfizz reads it.
            let keycenter: Int
            if value("pitch_keycenter")?.value.trimmedBlanks.lowercased() == "sample" {
                if rootKeys[found] == nil {
                    rootKeys[found] = .some(embeddedData.map(SoundFileLoops.rootKey(bytes:)) ?? SoundFileLoops.rootKey(path: found, root: sampleRoot))
                }
                keycenter = (rootKeys[found] ?? nil) ?? 60
            } else {
                keycenter = try note("pitch_keycenter") ?? key ?? 60
            }
            let loop = try loopRange(offset: offset, end: end, loops: loops)
            if loop.invalid { loops = 0 }
            resolved.append(Region(
                line: regionPlace,
                // Its place for a load's errors, which name the kit's file first.
                sample: SampleFile(path: found, resolvedPath: found, place: section.file == file ? "line \(section.line)" : regionPlace,
                                   offset: offset, end: end, reverse: reverse,
                                   loop: loop.range, data: embeddedData),
                keys: keys, keycenter: keycenter + keyOffset,
                velocities: lovel...hivel,
                seqLength: try integer("seq_length", 1...100, default: 1), seqPosition: try integer("seq_position", 1...100, default: 1),
                rand: lorand...max(lorand, hirand),
                group: try integer("group", Int(Int32.min)...Int(Int32.max), default: 0),
                offBy: try integer("off_by", Int(Int32.min)...Int(Int32.max), default: 0),
                polyphony: value("note_polyphony") != nil ? try integer("note_polyphony", 1...64, default: 1)
                    : value("polyphony") != nil ? try integer("polyphony", 1...64, default: 1) : nil,
                gainDb: gainDb, pan: try number("pan", -100...100, default: 0) / 100,
                semitones: try number("transpose", -127...127, default: 0) + (try number("tune", -9600...9600, default: 0)) / 100,
                keytrack: try number("pitch_keytrack", -1200...1200, default: 100) / 100,
                velocityCurve: curve, envelope: triggerMode == "release" ? envelope.map { var e = $0; e.noteOff = false; return e } : envelope,
                loops: triggerMode == "release" ? 0 : loops, onRelease: triggerMode == "release"))
            var output = try integer("output", 0...1024, default: 0)
            if output >= Engine.maxOutputCount {
                report("output:\(regionPlace)", "\(regionPlace): output=\(output): there are outputs 0 … \(Engine.maxOutputCount - 1); it plays on the main mix")
                output = 0
            }
            resolved[resolved.count - 1].output = output
            resolved[resolved.count - 1].loopsUntilRelease = mode == "loop_sustain" && triggerMode != "release"
            if triggerWritten == "first" || triggerWritten == "legato" { resolved[resolved.count - 1].legato = triggerWritten == "legato" }
            // rt_decay: a release region's level by the time its note was held (sfizz reads it
            // on release regions only).
            if triggerMode == "release" { resolved[resolved.count - 1].heldDecay = try number("rt_decay", 0...200, default: 0) }
            // Key crossfades and amplitude key tracking: a level for each key (sfizz's, keys
            // moved by note_offset/octave_offset as the region's are).
            func keyOpcode(_ name: String, default d: Int) throws -> Int { (try note(name)).map { min(127, max(0, $0 + keyOffset)) } ?? d }
            var keyLevel = KeyLevel()
            let inStart = try keyOpcode("xfin_lokey", default: 0), inEnd = try keyOpcode("xfin_hikey", default: 0)
            keyLevel.fadeIn = inStart...max(inStart, inEnd)
            keyLevel.fadeInEnd = inEnd
            keyLevel.fadeOutStart = try keyOpcode("xfout_lokey", default: 127)
            keyLevel.fadeOutEnd = try keyOpcode("xfout_hikey", default: 127)
            keyLevel.fadeOut = keyLevel.fadeOutStart...max(keyLevel.fadeOutStart, keyLevel.fadeOutEnd)
            switch value("xf_keycurve")?.value.trimmedBlanks ?? "power" {
            case "power": keyLevel.power = true
            case "gain": keyLevel.power = false
            default: throw SFZError("\(place(value("xf_keycurve")!)): xf_keycurve: expected power or gain, got \"\(value("xf_keycurve")!.value.prefix(40))\"")
            }
            keyLevel.decibelsPerKey = try number("amp_keytrack", -96...12, default: 0)
            // As sfizz, which moves key ranges, key centres and switches by note_offset, not this.
            keyLevel.center = try note("amp_keycenter") ?? 60
            resolved[resolved.count - 1].keyLevel = keyLevel
            resolved[resolved.count - 1].randomGainDb = try number("amp_random", 0...48, default: 0)
            resolved[resolved.count - 1].randomCents = try number("pitch_random", -9600...9600, default: 0)
            resolved[resolved.count - 1].randomOffset = try integer("offset_random", 0...(1 << 30), default: 0)
            resolved[resolved.count - 1].silent = silent
            resolved[resolved.count - 1].delay = try number("delay", 0...10, default: 0)
            resolved[resolved.count - 1].randomDelay = try number("delay_random", 0...10, default: 0)
            if resolved[resolved.count - 1].randomOffset > 0, resolved[resolved.count - 1].delay > 0 || resolved[resolved.count - 1].randomDelay > 0 {
                report("offset_random+delay", "\(regionPlace): offset_random with delay or delay_random is not carried (the delay's silence begins the sample here): the sample starts at its offset")
                resolved[resolved.count - 1].randomOffset = 0
            }
            resolved[resolved.count - 1].filter = try filter(value: value, number: number, note: note, place: place,
                                                             report: report)
            if velocityFades {
                resolved[resolved.count - 1].apart = "xf\(lovel)-\(hivel)"
            }
            // A region without controller opcodes of its own takes its headers' resolved once.
            let context = opcodes.own.controls.isEmpty ? opcodes.contextKey : nil
            if let context, let done = controlsByContext[context] {
                resolved[resolved.count - 1].takeControls(of: done)
            } else {
                let controls = opcodes.merged(\.controls)
                inheritedWork += controls.count
                guard inheritedWork <= Self.maximumInheritedWork else {
                    throw SFZError("\(file): its regions inherit more than \(Self.maximumInheritedWork) controller opcodes and velocity points in all (each region counts its headers' again where it adds its own)")
                }
                try resolveControls(controls, into: &resolved[resolved.count - 1], curves: curves, setDefaults: setup.defaults, place: place,
                                    report: report)
                let key = resolved[resolved.count - 1].controlsKey
                if controlIDs[key] == nil { controlIDs[key] = controlIDs.count }
                resolved[resolved.count - 1].controlsID = controlIDs[key]!
                if let context { controlsByContext[context] = resolved[resolved.count - 1] }
            }
            if resolved[resolved.count - 1].leftOut {
                resolved.removeLast()
            } else {
                let previous = resolved.count > 1 ? resolved[resolved.count - 2] : nil
                resolved[resolved.count - 1].makeControlKey(as: previous)
                if let previous { resolved[resolved.count - 1].share(with: previous) }
            }
            if let k = try note("sw_default") { setup.keySwitch = k }
            if let k = resolved.last?.keySwitch, let label = value("sw_label")?.value.trimmedBlanks, !label.isEmpty,
               switchLabels[k] == nil {
                switchLabels[k] = String(label.prefix(80))
            }
        }
        guard !resolved.isEmpty else {
            throw SFZError(missing.first.map { "\(file): no region left to play: \($0)" } ?? "\(file): no region with a sample file")
        }

        regions = []
        sections = []
        if respelled > Self.respellingsNamed {
            notes.append("\(file): \(respelled - Self.respellingsNamed) more region(s) name their sample under another spelling (letter case or \\)")
        }

        let (kit, labels) = try assembleKit(of: resolved, file: file, setup: setup, control: control, switchLabels: switchLabels, report: report)
        return Result(kit: kit, notes: notes, labels: labels)
    }

    /// The level opcodes of a region's headers, added to its own.
    static let headerLevels = [("group_volume", "group_amplitude"), ("master_volume", "master_amplitude"),
                               ("global_volume", "global_amplitude")]

}
