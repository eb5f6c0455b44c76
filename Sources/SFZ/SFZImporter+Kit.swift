import Patches
import SamplerCore

// An SFZ file's kit, from its resolved regions: instruments, voices, the audition pattern and
// the labels the file gives its controllers and key switches.

extension SFZImporter {
    /// The instruments the generated audition pattern plays (the first of the kit's).
    package static let auditionLimit = 128

    /// The kit of `resolved` (the file's regions in order), with `setup` (its controllers'
    /// defaults and key switch), and the labels of `control`'s `label_ccN` and of `switchLabels`.
    static func assembleKit(of resolved: [Region], file: String, setup: ControllerSetup, control: [String: SFZOpcode],
                    switchLabels: [Int: String], report: (String, String) -> Void) throws -> (kit: Patch, labels: [String]) {
        // One instrument per key: its regions' layers.
        let (built, groups) = instruments(of: resolved, report: report)
        var instruments = built
        guard instruments.count <= PatchLimits.instruments else {
            throw SFZError("\(file): \(instruments.count) instruments; a kit has at most \(PatchLimits.instruments)")
        }
        // Voices: polyphony where given, else enough to let hits ring over each other as in
        // sfizz (16, fewer when the kit is large); a region that chokes its own group: one.
        let defaultVoices = max(1, min(16, PatchLimits.players / max(1, instruments.count)))
        for i in instruments.indices {
            if instruments[i].voices == 0 { instruments[i].voices = groups[i].offBy != 0 && groups[i].offBy == groups[i].group ? 1 : defaultVoices }
        }
        // Chokes are one-way, as in SFZ: each instrument keeps its group and off_by.
        // Each instrument in turn, eighth notes at 120 bpm: the first `auditionLimit` of them, so
        // that the pattern (a track per instrument, a step per instrument) stays small whatever
        // the kit's size.
        let auditioned = min(instruments.count, auditionLimit)
        if instruments.count > auditionLimit {
            report("audition", "\(file): the audition pattern plays the first \(auditionLimit) of its \(instruments.count) instruments")
        }
        let bars = (auditioned + 7) / 8
        let tracks = (0..<auditioned).map { i in
            DrumTrack(instrument: i, velocities: (0..<(bars * 8)).map { $0 == i ? 100 : 0 })
        }
        let audition = DrumPattern(name: "audition", beatsPerBar: 4, stepsPerBeat: 2, bars: bars, tracks: tracks)
        var kit = Patch(tempo: 120, instruments: instruments, patterns: [audition], song: nil, file: file, panLaw: .constantPowerStereo)
        kit.controllers = setup
        var labels: [String] = []
        let values = setup.values
        for (name, o) in writtenOrder(control) {
            guard let (prefix, number) = numbered(name), prefix == "label_cc" else { continue }
            let start = (Double(values[number]) * 127 * 10).rounded() / 10
            labels.append("controller \(number): \(o.value.trimmedBlanks.prefix(80)) (starts at \(start == start.rounded() ? String(Int(start)) : String(start)))")
        }
        labels += switchLabels.sorted { $0.key < $1.key }.map { "key switch \($0.key): \($0.value)" }
        return (kit, labels)
    }
}
