import SamplerCore

// The opcodes the SFZ import carries, and SFZ's note names.

extension SFZImporter {
    /// How many samples found under another spelling the notes name one by one.
    static let respellingsNamed = 10

    /// Opcodes the import carries (with their header-level inheritance).
    static let carried: Set<String> = [
        "sample", "key", "lokey", "hikey", "pitch_keycenter", "lovel", "hivel", "seq_length", "seq_position",
        "lorand", "hirand", "group", "off_by", "off_mode", "off_time", "polyphony", "note_polyphony", "volume", "amplitude",
        "pan", "tune", "transpose", "pitch_keytrack", "amp_veltrack", "loop_mode", "trigger", "default_path",
        "offset", "end", "loop_start", "loop_end", "ampeg_attack", "ampeg_hold", "ampeg_decay", "ampeg_sustain", "ampeg_release", "ampeg_delay", "ampeg_start", "delay",
        "ampeg_vel2delay", "ampeg_vel2attack", "ampeg_vel2hold", "ampeg_vel2decay", "ampeg_vel2sustain", "ampeg_vel2release",
        "ampeg_veltodelay", "ampeg_veltoattack", "ampeg_veltohold", "ampeg_veltodecay", "ampeg_veltosustain", "ampeg_veltorelease",
        // Loading hints: the sampler decides how to load samples itself.
        "hint_ram_based",
        // sfizz's output pair N (0: the main mix): the named output "outN".
        "output",
        "note_offset", "octave_offset", "xfin_lovel", "xfin_hivel", "xfout_lovel", "xfout_hivel", "xf_velcurve",
        "xfin_lokey", "xfin_hikey", "xfout_lokey", "xfout_hikey", "xf_keycurve", "amp_keytrack", "amp_keycenter",
        "direction", "count", "amp_random", "pitch_random", "offset_random", "rt_decay", "delay_random",
        "fil_type", "filtype", "cutoff", "resonance", "fil_keytrack", "fil_keycenter", "fil_veltrack", "fil_random", "cutoff_random",
        "sw_last", "sw_default", "sw_lokey", "sw_hikey", "bend_up", "bend_down", "lochan", "hichan",
        "sw_down", "sw_up", "sw_previous", "lobend", "hibend", "lochanaft", "hichanaft", "lopolyaft", "hipolyaft",
        "sustain_cc", "sustain_sw", "sustain_lo", "sostenuto_cc", "sostenuto_sw", "sostenuto_lo",
        "group_volume", "master_volume", "global_volume", "group_amplitude", "master_amplitude", "global_amplitude",
        // Names for people: read, shown nowhere yet.
        "sw_label", "region_label", "group_label", "master_label", "global_label",
    ]

    /// Opcodes the import carries that end in a controller number (`locc4`, `amplitude_oncc201`).
    static let carriedWithNumber = ["locc", "hicc", "on_locc", "on_hicc", "set_cc", "set_hdcc", "set_realcc", "label_cc",
                                    "amplitude_oncc", "amplitude_cc", "amplitude_curvecc", "volume_oncc", "volume_cc", "volume_curvecc",
                                    "pan_oncc", "pan_cc", "pan_curvecc", "tune_oncc", "tune_cc", "tune_curvecc", "pitch_oncc", "pitch_cc",
                                    "pitch_curvecc", "amplitude_smoothcc", "volume_smoothcc", "pan_smoothcc", "tune_smoothcc", "pitch_smoothcc",
                                    "cutoff_oncc", "cutoff_cc", "cutoff_curvecc", "cutoff_smoothcc",
                                    "resonance_oncc", "resonance_cc", "resonance_curvecc", "resonance_smoothcc"]

    /// `name` split into a carried prefix and its controller number (`locc4` → ("locc", 4)).
    static func numbered(_ name: String) -> (prefix: String, number: Int)? {
        guard let digits = name.firstIndex(where: \.isNumber) else { return nil }
        let prefix = String(name[..<digits])
        guard carriedWithNumber.contains(prefix), let n = Int(name[digits...]), (0..<Controller.count).contains(n) else { return nil }
        return (prefix, n)
    }

    /// `opcodes` by the file read first and the line, and by name on one line: the same order
    /// in every run (a dictionary's order follows the process's hash seed).
    static func writtenOrder(_ opcodes: [String: SFZOpcode]) -> [(key: String, value: SFZOpcode)] {
        opcodes.sorted { a, b in
            (a.value.fileIndex, a.value.line) != (b.value.fileIndex, b.value.line)
                ? (a.value.fileIndex, a.value.line) < (b.value.fileIndex, b.value.line) : a.key < b.key
        }
    }

    static func isCarried(_ name: String) -> Bool {
        carried.contains(name) || name.hasPrefix("amp_velcurve_") || numbered(name) != nil
    }

    /// A MIDI note number or an SFZ note name (c4 = 60; c#4, db4; c-1 = 0).
    package static func noteNumber(_ text: String) -> Int? {
        let t = text.trimmedBlanks.lowercased()
        if let n = Int(t) { return (0...127).contains(n) ? n : nil }
        guard let letter = t.first, let base = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11][letter] else { return nil }
        var rest = t.dropFirst()
        var n = base
        if rest.first == "#" { n += 1; rest = rest.dropFirst() } else if rest.first == "b" { n -= 1; rest = rest.dropFirst() }
        guard let octave = Int(rest), (-1...9).contains(octave) else { return nil }
        n += (octave + 1) * 12
        return (0...127).contains(n) ? n : nil
    }
}
