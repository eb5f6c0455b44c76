import Patches
import SamplerCore

// A region as the import resolves it, and its controller opcodes.

/// A region's level on each key, as sfizz computes it: its key crossfades (`xfin_lokey` …
/// `xfout_hikey`, `xf_keycurve`; a key range's length is hikey − lokey) and amplitude key tracking
/// (`amp_keytrack` dB per key from `amp_keycenter`).
struct KeyLevel: Equatable {
    var fadeIn: ClosedRange<Int> = 0...0
    var fadeInEnd = 0
    var fadeOutStart = 127
    var fadeOut: ClosedRange<Int> = 127...127
    var fadeOutEnd = 127
    var power = true
    var decibelsPerKey = 0.0
    var center = 60

    /// The factor on key `key` (0: silent there).
    func factor(_ key: Int) -> Double {
        func curve(_ x: Double) -> Double { power ? x.squareRoot() : x }
        var g = 1.0
        let start = fadeIn.lowerBound
        if key < start { return 0 }
        let inLength = Double(fadeInEnd - start)
        if inLength > 0, key < fadeInEnd { g *= curve(Double(key - start) / inLength) }
        let outLength = Double(fadeOutEnd - fadeOutStart)
        if outLength > 0, key > fadeOutStart {
            let x = Double(key - fadeOutStart) / outLength
            if x > 1 { return 0 }
            g *= curve(1 - x)
        }
        if decibelsPerKey != 0 { g *= Double.pow(10, decibelsPerKey * Double(key - center) / 20) }
        return g
    }
}

/// One header's opcodes (or a region's own), with the subsets the import reads per region.
struct OpcodeLayer {
    /// The header's section order (−1: a region's own).
    var id: Int
    var all: [String: SFZOpcode]
    /// The same opcodes as a short list where there are few (looked up without hashing: a
    /// region's own, a small header's).
    var few: [SFZOpcode]?
    /// A bit per name it holds (`bit`): most names asked for are not there, and are answered
    /// without a lookup.
    var mask: UInt64 = 0
    /// Those `resolveControls` reads, and the velocity curve's points.
    var controls: [String: SFZOpcode]
    var velocityCurve: [String: SFZOpcode]

    static let empty = OpcodeLayer(id: -2, [:])

    static func bit(_ name: String) -> UInt64 {
        let u = name.utf8
        // The first byte read from the string's own storage (a generic `first` costs more
        // than the rest of a lookup).
        let first = u.withContiguousStorageIfAvailable { $0.first ?? 0 } ?? u.first ?? 0
        return 1 << UInt64((u.count &* 7 &+ Int(first) &* 3) & 63)
    }

    subscript(name: String) -> SFZOpcode? { self[name, Self.bit(name)] }

    /// The opcode named `name`, whose `bit` is `bit`.
    subscript(name: String, bit: UInt64) -> SFZOpcode? {
        guard mask & bit != 0 else { return nil }
        guard let few else { return all[name] }
        for o in few where o.name == name { return o }
        return nil
    }

    init(id: Int, _ all: [String: SFZOpcode]) {
        self.init(id: id, all: all, few: all.count <= 16 ? Array(all.values) : nil)
    }

    /// A region's own opcodes as written (a name given twice: its last), looked up without a
    /// dictionary where there are few (`all` is then empty: `few` answers).
    init(id: Int, list: [SFZOpcode]) {
        guard list.count <= 16 else {
            self.init(id: id, Dictionary(list.map { ($0.name, $0) }, uniquingKeysWith: { $1 }))
            return
        }
        // Names that may repeat (their bits meet) are gathered one by one; else the list is it.
        var mask: UInt64 = 0, meets = false
        for o in list {
            let b = Self.bit(o.name)
            meets = meets || mask & b != 0
            mask |= b
        }
        guard meets else {
            self.init(id: id, all: [:], few: list)
            return
        }
        var few: [SFZOpcode] = []
        few.reserveCapacity(list.count)
        for o in list {
            if let i = few.firstIndex(where: { $0.name == o.name }) { few[i] = o } else { few.append(o) }
        }
        self.init(id: id, all: [:], few: few)
    }

    private init(id: Int, all: [String: SFZOpcode], few: [SFZOpcode]?) {
        self.id = id
        self.all = all
        self.few = few
        var mask: UInt64 = 0
        var controls: [String: SFZOpcode] = [:], velocityCurve: [String: SFZOpcode] = [:]
        for opcode in few ?? Array(all.values) {
            let name = opcode.name
            mask |= Self.bit(name)
            if name.utf8.first == UInt8(ascii: "a"), name.hasPrefix("amp_velcurve_") {
                velocityCurve[name] = opcode
            } else if SFZImporter.isControl(name) {
                controls[name] = opcode
            }
        }
        self.mask = mask
        self.controls = controls
        self.velocityCurve = velocityCurve
    }
}

/// A region's opcodes: its own over its headers' (global, master and group merged once for
/// every region under them, shared, never copied).
struct InheritedOpcodes {
    var own: OpcodeLayer, context: OpcodeLayer

    subscript(name: String) -> SFZOpcode? {
        let bit = OpcodeLayer.bit(name)
        return own[name, bit] ?? context[name, bit]
    }

    /// The headers this region inherits from, as a key.
    var contextKey: String { String(context.id) }

    /// One subset of both layers, the region's own opcode for each name it has.
    func merged(_ subset: KeyPath<OpcodeLayer, [String: SFZOpcode]>) -> [String: SFZOpcode] {
        let mine = own[keyPath: subset]
        if mine.isEmpty { return context[keyPath: subset] }
        return context[keyPath: subset].merging(mine) { $1 }
    }
}

extension SFZImporter {
    /// The opcodes `resolveControls` reads.
    static let controlNames: Set<String> = [
        "sw_last", "sw_down", "sw_up", "sw_previous", "lobend", "hibend", "lochanaft", "hichanaft", "lopolyaft", "hipolyaft",
        "sustain_cc", "sustain_sw", "sustain_lo", "sostenuto_cc", "sostenuto_sw", "sostenuto_lo", "lochan", "hichan", "bend_up", "bend_down",
    ]

    /// `OpcodeLayer.bit` of each of `controlNames`: a name without its bit is none of them.
    static let controlBits = controlNames.reduce(UInt64(0)) { $0 | OpcodeLayer.bit($1) }

    static func isControl(_ name: String) -> Bool {
        // A numbered opcode ends in a digit.
        guard let last = name.utf8.last else { return false }
        if last < 0x30 || last > 0x39 { return OpcodeLayer.bit(name) & controlBits != 0 && controlNames.contains(name) }
        return numbered(name).map { $0.prefix != "label_cc" } ?? false
    }

    /// What a region holds beside its sample, keys and place: regions under one header mostly
    /// hold the same, so a run of equal ones shares one copy (`Region.share(with:)`).
    struct RegionShared: Equatable {
        var group: Int
        var offBy: Int
        var polyphony: Int?
        var gainDb: Double
        var pan: Double
        var semitones: Double
        var keytrack: Double
        var velocityCurve: VelocityCurve
        var envelope: Envelope?
        var loops: Int
        /// `trigger=release`: played by the note-off.
        var onRelease: Bool
        /// `output=N`: 0 the main mix, N the named output "outN".
        var output: Int = 0
        var conditions: [ControllerRange] = []
        var keySwitch: Int? = nil
        var keyDown: Int? = nil
        var keyUp: Int? = nil
        var previousKey: Int? = nil
        /// `trigger=legato` (true) or `trigger=first` (false).
        var legato: Bool? = nil
        /// `loop_mode=loop_sustain`.
        var loopsUntilRelease: Bool = false
        /// `rt_decay` (dB per second held) of a release region.
        var heldDecay: Double = 0
        var sustainController: Int? = 64
        var channels: ClosedRange<Int> = 1...16
        var controllerTrigger: ControllerRange? = nil
        var modulations: [ControllerModulation] = []
        var bendUp: Double = 200
        var bendDown: Double = -200
        var silent: Bool = false
        /// Triggered by something the sampler does not carry: not played at all.
        var leftOut: Bool = false
        /// What must be equal for regions to be one instrument's alternatives (set once the region is resolved).
        var controlKey: String = ""
        /// Set for regions that sound beside others of overlapping velocities (crossfades).
        var apart: String = ""
        /// Its level on each key (key crossfades, amplitude key tracking).
        var keyLevel: KeyLevel = KeyLevel()
        /// `amp_random` (dB).
        var randomGainDb: Double = 0
        /// `pitch_random` (cents).
        var randomCents: Double = 0
        /// `offset_random`, frames.
        var randomOffset: Int = 0
        /// `fil_type`, `cutoff` … (nil: unfiltered).
        var filter: VoiceFilter? = nil
        /// `delay`, seconds.
        var delay: Double = 0
        /// `delay_random`, seconds.
        var randomDelay: Double = 0
        /// `controlsKey` as a number, the same for equal keys (`SFZImporter.convert` numbers them).
        var controlsID: Int = 0
    }

    final class RegionSharedBox {
        var value: RegionShared
        init(_ value: RegionShared) { self.value = value }
    }

    /// A region, resolved.
    struct Region {
        var line: String
        var sample: SampleFile
        var keys: ClosedRange<Int>
        var keycenter: Int
        var velocities: ClosedRange<Int>
        var seqLength: Int, seqPosition: Int
        var rand: ClosedRange<Double>
        /// The rest, copied on write.
        private var shared: RegionSharedBox

        init(line: String, sample: SampleFile, keys: ClosedRange<Int>, keycenter: Int, velocities: ClosedRange<Int>,
             seqLength: Int, seqPosition: Int, rand: ClosedRange<Double>, group: Int, offBy: Int, polyphony: Int?, gainDb: Double, pan: Double, semitones: Double, keytrack: Double, velocityCurve: VelocityCurve, envelope: Envelope?, loops: Int, onRelease: Bool) {
            self.line = line
            self.sample = sample
            self.keys = keys
            self.keycenter = keycenter
            self.velocities = velocities
            self.seqLength = seqLength
            self.seqPosition = seqPosition
            self.rand = rand
            shared = RegionSharedBox(RegionShared(group: group, offBy: offBy, polyphony: polyphony, gainDb: gainDb, pan: pan, semitones: semitones, keytrack: keytrack, velocityCurve: velocityCurve, envelope: envelope, loops: loops, onRelease: onRelease))
        }

        private mutating func update(_ body: (inout RegionShared) -> Void) {
            if !isKnownUniquelyReferenced(&shared) { shared = RegionSharedBox(shared.value) }
            body(&shared.value)
        }

        /// Holds `other`'s copy of the shared part when the two are equal (the import calls it
        /// with the region resolved before, so that a run of such regions holds one).
        mutating func share(with other: Region) {
            if shared !== other.shared, shared.value == other.shared.value { shared = other.shared }
        }

        var group: Int { get { shared.value.group } set { update { $0.group = newValue } } }
        var offBy: Int { get { shared.value.offBy } set { update { $0.offBy = newValue } } }
        var polyphony: Int? { get { shared.value.polyphony } set { update { $0.polyphony = newValue } } }
        var gainDb: Double { get { shared.value.gainDb } set { update { $0.gainDb = newValue } } }
        var pan: Double { get { shared.value.pan } set { update { $0.pan = newValue } } }
        var semitones: Double { get { shared.value.semitones } set { update { $0.semitones = newValue } } }
        var keytrack: Double { get { shared.value.keytrack } set { update { $0.keytrack = newValue } } }
        var velocityCurve: VelocityCurve { get { shared.value.velocityCurve } set { update { $0.velocityCurve = newValue } } }
        var envelope: Envelope? { get { shared.value.envelope } set { update { $0.envelope = newValue } } }
        var loops: Int { get { shared.value.loops } set { update { $0.loops = newValue } } }
        var onRelease: Bool { get { shared.value.onRelease } set { update { $0.onRelease = newValue } } }
        var output: Int { get { shared.value.output } set { update { $0.output = newValue } } }
        var conditions: [ControllerRange] { get { shared.value.conditions } set { update { $0.conditions = newValue } } }
        var keySwitch: Int? { get { shared.value.keySwitch } set { update { $0.keySwitch = newValue } } }
        var keyDown: Int? { get { shared.value.keyDown } set { update { $0.keyDown = newValue } } }
        var keyUp: Int? { get { shared.value.keyUp } set { update { $0.keyUp = newValue } } }
        var previousKey: Int? { get { shared.value.previousKey } set { update { $0.previousKey = newValue } } }
        var legato: Bool? { get { shared.value.legato } set { update { $0.legato = newValue } } }
        var loopsUntilRelease: Bool { get { shared.value.loopsUntilRelease } set { update { $0.loopsUntilRelease = newValue } } }
        var heldDecay: Double { get { shared.value.heldDecay } set { update { $0.heldDecay = newValue } } }
        var sustainController: Int? { get { shared.value.sustainController } set { update { $0.sustainController = newValue } } }
        var channels: ClosedRange<Int> { get { shared.value.channels } set { update { $0.channels = newValue } } }
        var controllerTrigger: ControllerRange? { get { shared.value.controllerTrigger } set { update { $0.controllerTrigger = newValue } } }
        var modulations: [ControllerModulation] { get { shared.value.modulations } set { update { $0.modulations = newValue } } }
        var bendUp: Double { get { shared.value.bendUp } set { update { $0.bendUp = newValue } } }
        var bendDown: Double { get { shared.value.bendDown } set { update { $0.bendDown = newValue } } }
        var silent: Bool { get { shared.value.silent } set { update { $0.silent = newValue } } }
        var leftOut: Bool { get { shared.value.leftOut } set { update { $0.leftOut = newValue } } }
        var controlKey: String { get { shared.value.controlKey } set { update { $0.controlKey = newValue } } }
        var apart: String { get { shared.value.apart } set { update { $0.apart = newValue } } }
        var keyLevel: KeyLevel { get { shared.value.keyLevel } set { update { $0.keyLevel = newValue } } }
        var randomGainDb: Double { get { shared.value.randomGainDb } set { update { $0.randomGainDb = newValue } } }
        var randomCents: Double { get { shared.value.randomCents } set { update { $0.randomCents = newValue } } }
        var randomOffset: Int { get { shared.value.randomOffset } set { update { $0.randomOffset = newValue } } }
        var filter: VoiceFilter? { get { shared.value.filter } set { update { $0.filter = newValue } } }
        var delay: Double { get { shared.value.delay } set { update { $0.delay = newValue } } }
        var randomDelay: Double { get { shared.value.randomDelay } set { update { $0.randomDelay = newValue } } }
        var controlsID: Int { get { shared.value.controlsID } set { update { $0.controlsID = newValue } } }

        /// The fields `resolveControls` sets, from `other`.
        mutating func takeControls(of other: Region) {
            conditions = other.conditions
            keySwitch = other.keySwitch
            keyDown = other.keyDown
            keyUp = other.keyUp
            previousKey = other.previousKey
            sustainController = other.sustainController
            channels = other.channels
            controllerTrigger = other.controllerTrigger
            modulations = other.modulations
            bendUp = other.bendUp
            bendDown = other.bendDown
            leftOut = other.leftOut
            controlsID = other.controlsID
        }

        /// What the controller opcodes made of the region, as a key (computed once for the
        /// regions that share their headers').
        var controlsKey: String {
            "\(conditions)|\(String(describing: keySwitch))|\(String(describing: keyDown))|\(String(describing: keyUp))|\(String(describing: previousKey))|\(String(describing: sustainController))|\(channels)|\(String(describing: controllerTrigger))|\(modulations)|\(bendUp)|\(bendDown)"
        }
        mutating func makeControlKey() {
            controlKey = "\(apart)|\(silent)|\(group)|\(offBy)|\(controlsID)|\(String(describing: legato))|\(heldDecay)|\(loopsUntilRelease)"
        }

        /// `makeControlKey`, taking `other`'s key where the fields it is made of are equal.
        mutating func makeControlKey(as other: Region?) {
            if let other, other.apart == apart, other.silent == silent, other.group == group, other.offBy == offBy,
               other.controlsID == controlsID, other.legato == legato, other.heldDecay == heldDecay,
               other.loopsUntilRelease == loopsUntilRelease {
                controlKey = other.controlKey
            } else {
                makeControlKey()
            }
        }
    }

    /// A region's filter, as sfizz makes it: any of `fil_type`, `cutoff`, `resonance`,
    /// `fil_keytrack`, `fil_keycenter`, `fil_veltrack`, `fil_random` gives it one (a 2-pole
    /// low-pass unless `fil_type` says otherwise, at 0 Hz unless `cutoff` says otherwise). A
    /// type not carried plays unfiltered, reported.
    static func filter(value: (String) -> SFZOpcode?, number: (String, ClosedRange<Double>, Double) throws -> Double,
                       note: (String) throws -> Int?, place: (SFZOpcode) -> String,
                       report: (String, String) -> Void) throws -> VoiceFilter? {
        let names = ["fil_type", "filtype", "cutoff", "resonance", "fil_keytrack", "fil_keycenter", "fil_veltrack", "fil_random", "cutoff_random"]
        guard names.contains(where: { value($0) != nil }) else { return nil }
        var kind = FilterKind.lowpass2
        if let o = value("fil_type") ?? value("filtype") {
            let name = o.value.trimmedBlanks
            guard let k = FilterKind(sfzName: name) else {
                report("fil_type=\(name)", "\(place(o)): fil_type=\(name.prefix(40)) is not carried (lpf_1p, lpf_2p, hpf_1p, hpf_2p, bpf_2p and brf_2p are): those regions play unfiltered")
                return nil
            }
            kind = k
        }
        let random = value("fil_random") != nil ? try number("fil_random", -12_000...12_000, 0) : try number("cutoff_random", -12_000...12_000, 0)
        return VoiceFilter(kind: kind, cutoff: Float(try number("cutoff", 0...20_000, 0)),
                           resonance: Float(try number("resonance", -60...96, 0)),
                           keytrack: Float(try number("fil_keytrack", -1200...1200, 0)),
                           keycenter: min(127, max(0, try note("fil_keycenter") ?? 60)),
                           veltrack: Float(try number("fil_veltrack", -12_000...12_000, 0)),
                           random: Float(random))
    }

    /// A region's controller opcodes: conditions (`locc`/`hicc`, `sw_last`, `lochan`/`hichan`),
    /// a controller trigger (`on_locc`/`on_hicc`), modulations (`amplitude_oncc`,
    /// `volume_oncc`, `pan_oncc`, `tune_oncc`/`pitch_oncc` with their `_curvecc`), the bend range.
    static func resolveControls(_ opcodes: [String: SFZOpcode], into region: inout Region, curves: [Int: [Float]],
                                        setDefaults: [Int: Float], place: (SFZOpcode) -> String, report: (String, String) -> Void) throws {
        func value(_ o: SFZOpcode, _ range: ClosedRange<Double>) throws -> Double {
            guard let x = Double(o.value.trimmedBlanks), x.isFinite else {
                throw SFZError("\(place(o)): \(o.name): expected a number, got \"\(o.value.prefix(40))\"")
            }
            return min(range.upperBound, max(range.lowerBound, x))
        }
        var low: [Int: Double] = [:], high: [Int: Double] = [:], onLow: [Int: Double] = [:], onHigh: [Int: Double] = [:]
        var depths: [String: [Int: Double]] = [:], curveIndex: [String: [Int: Int]] = [:], smoothing: [String: [Int: Double]] = [:]
        for (name, o) in writtenOrder(opcodes) {
            guard let (prefix, number) = numbered(name) else { continue }
            switch prefix {
            case "label_cc": break
            case let p where p.hasPrefix("set_"):
                report("set_cc:\(name)", "\(place(o)): \(name) sets a controller only in <control>: here it is ignored")
            case "locc": low[number] = try value(o, 0...127)
            case "hicc": high[number] = try value(o, 0...127)
            case "on_locc": onLow[number] = try value(o, 0...127)
            case "on_hicc": onHigh[number] = try value(o, 0...127)
            case let p where p.hasSuffix("_curvecc"):
                curveIndex[String(p.dropLast("_curvecc".count)), default: [:]][number] = Int(try value(o, 0...255))
            case let p where p.hasSuffix("_smoothcc"):
                let target = String(p.dropLast("_smoothcc".count))
                smoothing[target == "pitch" ? "tune" : target, default: [:]][number] = try value(o, 0...10_000)
            case let p where p.hasSuffix("_oncc") || p.hasSuffix("_cc"):
                let target = p.hasSuffix("_oncc") ? String(p.dropLast("_oncc".count)) : String(p.dropLast("_cc".count))
                depths[target == "pitch" ? "tune" : target, default: [:]][number] = try value(o, -1e5...1e5)
            default: break
            }
        }
        for number in Set(low.keys).union(high.keys).sorted() {
            let lo = low[number] ?? 0, hi = high[number] ?? 127
            region.conditions.append(ControllerRange(controller: number, low: Float(lo) / 127, high: Float(hi) / 127))
        }
        for number in Set(onLow.keys).union(onHigh.keys).sorted() {
            guard number < 128 else {
                // sfizz never plays a region triggered by a controller from its notes.
                report("on_cc\(number)", "on_locc\(number)/on_hicc\(number): extended controller \(number) (sfizz's aftertouch and the like) triggers nothing here: those regions are left out")
                region.leftOut = true
                continue
            }
            guard region.controllerTrigger == nil else {
                report("on_cc_many", "a region triggered by two controllers: the first only")
                continue
            }
            let lo = onLow[number] ?? 0, hi = onHigh[number] ?? 127
            region.controllerTrigger = ControllerRange(controller: number, low: Float(lo) / 127, high: Float(hi) / 127)
        }
        for (target, perNumber) in depths.sorted(by: { $0.key < $1.key }) {
            for (number, depth) in perNumber.sorted(by: { $0.key < $1.key }) {
                // sfizz's own sources (128 and up: velocity, key, random, aftertouch…) change per
                // note there; here only a kit's default sets them.
                if number >= 128, setDefaults[number] == nil {
                    report("source\(number)", "\(target)_oncc\(number): sfizz's controller \(number) (set per note there, as velocity, key or random) is not carried: the modulation is left out")
                    continue
                }
                let limit: Double = target == "cutoff" ? 12_000 : 9600
                if abs(depth) > limit {
                    report("depth\(number)", "\(target)_oncc\(number)=\(depth): held to ±\(Int(limit))")
                }
                let kind: ModulationTarget
                var scaled = depth
                switch target {
                case "amplitude": kind = .amplitude; scaled = depth / 100
                case "volume": kind = .volume
                case "pan": kind = .pan; scaled = depth / 100
                case "tune": kind = .pitch
                case "cutoff": kind = .cutoff
                case "resonance": kind = .resonance
                default: continue
                }
                var curve: [Float]?
                if let k = curveIndex[target == "tune" ? "tune" : target]?[number] ?? curveIndex[target == "tune" ? "pitch" : target]?[number] {
                    if let c = curves[k] ?? ControllerModulation.sfzCurve(k) {
                        curve = c
                    } else {
                        report("curve\(k)", "curve \(k) is defined nowhere: the controller's value is used as it is")
                    }
                }
                region.modulations.append(ControllerModulation(controller: number, target: kind, depth: Float(min(limit, max(-limit, scaled))), curve: curve,
                                                               smoothing: Float(smoothing[target]?[number] ?? 0)))
            }
        }
        func key(_ name: String) throws -> Int? {
            guard let o = opcodes[name] else { return nil }
            guard let k = noteNumber(o.value) else {
                throw SFZError("\(place(o)): \(name): expected a MIDI note (0 to 127, or a name like c4 or f#2), got \"\(o.value.prefix(40))\"")
            }
            return k
        }
        region.keySwitch = try key("sw_last")
        region.keyDown = try key("sw_down")
        region.keyUp = try key("sw_up")
        region.previousKey = try key("sw_previous")
        // Bend and pressure ranges (sfizz's defaults: the whole range, which needs no condition).
        if opcodes["lobend"] != nil || opcodes["hibend"] != nil {
            let lo = try opcodes["lobend"].map { try value($0, -8192...8191) } ?? -8192
            let hi = try opcodes["hibend"].map { try value($0, -8192...8191) } ?? 8191
            func normalized(_ v: Double) -> Float { Float(v >= 0 ? v / 8191 : v / 8192) }
            region.conditions.append(ControllerRange(controller: Controller.pitchBend, low: normalized(lo), high: normalized(hi)))
        }
        for (name, controller) in [("chanaft", Controller.channelPressure), ("polyaft", Controller.polyPressure)] {
            guard opcodes["lo" + name] != nil || opcodes["hi" + name] != nil else { continue }
            let lo = try opcodes["lo" + name].map { try value($0, 0...127) } ?? 0
            let hi = try opcodes["hi" + name].map { try value($0, 0...127) } ?? 127
            region.conditions.append(ControllerRange(controller: controller, low: Float(lo) / 127, high: Float(hi) / 127))
        }
        // The pedals: which controller sustains, or none.
        if let o = opcodes["sustain_cc"] { region.sustainController = Int(try value(o, 0...127)) }
        if let o = opcodes["sustain_sw"] {
            switch o.value.trimmedBlanks.lowercased() {
            case "off", "0", "false": region.sustainController = nil
            case "on", "1", "true": break
            default: throw SFZError("\(place(o)): sustain_sw: expected on or off, got \"\(o.value.prefix(40))\"")
            }
        }
        if let o = opcodes["sustain_lo"], try value(o, 0...127) != 64 {
            report("sustain_lo", "\(place(o)): sustain_lo is not carried: a sustain pedal holds from 64 up (General MIDI's half), where sfizz holds from sustain_lo (1 unless set)")
        }
        for name in ["sostenuto_cc", "sostenuto_sw", "sostenuto_lo"] {
            if let o = opcodes[name] {
                report(name, "\(place(o)): \(name) is not carried: the sostenuto pedal is CC66, holding from 64 up, for every instrument")
            }
        }
        let lochan = Int(try opcodes["lochan"].map { try value($0, 1...16) } ?? 1)
        let hichan = Int(try opcodes["hichan"].map { try value($0, 1...16) } ?? 16)
        if lochan <= hichan { region.channels = lochan...hichan }
        region.bendUp = try opcodes["bend_up"].map { try value($0, -9600...9600) } ?? 200
        region.bendDown = try opcodes["bend_down"].map { try value($0, -9600...9600) } ?? -200
    }
}
