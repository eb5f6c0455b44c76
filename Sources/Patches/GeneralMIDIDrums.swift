/// The General MIDI percussion map (channel 10), used as the default note of instruments that
/// name no `midiNote` but whose id says what they are.
package enum GeneralMIDIDrums {
    /// Instrument ids (lower case, `_` and spaces read as `-`) and their notes.
    static let notes: [String: Int] = [
        "kick": 36, "bd": 36, "bass-drum": 36, "kick-drum": 36,
        "rim": 37, "rimshot": 37, "side-stick": 37, "sidestick": 37,
        "snare": 38, "sd": 38,
        "clap": 39, "hand-clap": 39, "handclap": 39,
        "hat": 42, "hihat": 42, "hi-hat": 42, "hh": 42, "chh": 42, "closed-hat": 42, "hihat-closed": 42, "closed-hihat": 42,
        "low-tom": 45, "pedal-hat": 44, "hihat-pedal": 44,
        "open-hat": 46, "ohh": 46, "hihat-open": 46, "open-hihat": 46,
        "mid-tom": 47, "tom": 47, "high-tom": 50, "hi-tom": 50, "floor-tom": 41,
        "crash": 49, "ride": 51, "china": 52, "ride-bell": 53, "tambourine": 54, "splash": 55, "cowbell": 56,
    ]

    /// A name for each General MIDI drum note (the instrument ids an SFZ import gives).
    static let names: [Int: String] = [
        35: "kick-2", 36: "kick", 37: "side-stick", 38: "snare", 39: "clap", 40: "snare-2", 41: "floor-tom",
        42: "closed-hat", 43: "floor-tom-2", 44: "pedal-hat", 45: "low-tom", 46: "open-hat", 47: "mid-tom",
        48: "high-mid-tom", 49: "crash", 50: "high-tom", 51: "ride", 52: "china", 53: "ride-bell", 54: "tambourine",
        55: "splash", 56: "cowbell", 57: "crash-2", 59: "ride-2",
    ]

    /// The General MIDI drum name of `note`, if it has one.
    package static func name(forNote note: Int) -> String? { names[note] }

    /// The note for an instrument id, if the id names a General MIDI drum.
    package static func note(forInstrumentID id: String) -> Int? {
        let key = String(id.lowercased().map { $0 == "_" || $0 == " " ? "-" : $0 })
        return notes[key]
    }
}

extension Patch {
    /// Per instrument, the MIDI note that triggers it: its `midiNote`, else its General MIDI note
    /// unless another instrument already has that note (explicit notes first, then file order).
    package var resolvedMIDINotes: [Int?] {
        var used = Set(instruments.compactMap(\.midiNote))
        return instruments.map { instrument in
            if let note = instrument.midiNote { return note }
            guard let note = GeneralMIDIDrums.note(forInstrumentID: instrument.id), used.insert(note).inserted else { return nil }
            return note
        }
    }
}
