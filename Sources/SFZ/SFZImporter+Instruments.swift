import Foundation
import Patches
import SamplerCore

// An SFZ kit's instruments: the resolved regions of each key into layers, stacks and
// instruments that share the note.

extension SFZImporter {
    /// A region's place among its layer's alternatives: its sequence position and random range.
    struct Place: Hashable {
        var sequence: Int
        var low: Double, high: Double
        init(sequence: Int, random: ClosedRange<Double>) {
            self.sequence = sequence
            low = random.lowerBound
            high = random.upperBound
        }
    }

    /// The instruments of `regions`, one or more per key (regions that sound together
    /// on a key go to instruments that share the note), with each instrument's group and off_by.
    static func instruments(of regions: [Region], report: (String, String) -> Void)
        -> (instruments: [DrumInstrument], groups: [(group: Int, offBy: Int)]) {
        // Read in place: a region's shared fields read through an array's subscript copied
        // the whole region each time.
        regions.withUnsafeBufferPointer { resolved in
            var instruments: [DrumInstrument] = []
            var groups: [(group: Int, offBy: Int)] = []
            // The regions of each key, found once for every key.
            var byKey = [[Int]](repeating: [], count: 128)
            for i in resolved.indices {
                for key in resolved[i].keys { byKey[key].append(i) }
            }
            for key in 0...127 {
                // A region that a key crossfade silences on this key is not on it.
                let onKey = byKey[key].filter { resolved[$0].keyLevel.factor(key) > 0 }
                guard !onKey.isEmpty else { continue }
                // Note-on regions, then release triggers (played by the note-off): instruments apart.
                let sets = [onKey.filter { !resolved[$0].onRelease }, onKey.filter { resolved[$0].onRelease }].filter { !$0.isEmpty }
                let firstOfKey = instruments.count
                for here in sets {
                // Regions that sound together (the same velocities, sequence place and random
                // range: several microphones of one drum, say) go to instruments of their own that
                // share the note; the others are alternatives within one instrument.
                var stacks: [[[Int]]] = []
                // Per stack: the layer of each velocity range, and the (sequence, random range) places taken.
                var layerOf: [[ClosedRange<Int>: Int]] = []
                var taken: [[Set<Place>]] = []
                for ri in here {
                    let place = Place(sequence: resolved[ri].seqPosition, random: resolved[ri].rand)
                    let output = resolved[ri].output, velocities = resolved[ri].velocities
                    var placed = false
                    for s in stacks.indices {
                        // Regions for another output sound together with these, never instead.
                        if resolved[stacks[s][0][0]].output != output || resolved[stacks[s][0][0]].controlKey != resolved[ri].controlKey { continue }
                        if let l = layerOf[s][velocities] {
                            if taken[s][l].contains(place) { continue }
                            guard stacks[s][l].count < PatchLimits.samplesPerLayer else {
                                report("samples:\(key)", "\(resolved[ri].line): more than \(PatchLimits.samplesPerLayer) samples in one velocity layer: the rest are left out")
                                placed = true
                                break
                            }
                            stacks[s][l].append(ri)
                            taken[s][l].insert(place)
                        } else {
                            guard stacks[s].count < PatchLimits.layersPerInstrument else {
                                report("layers:\(key)", "\(resolved[ri].line): more than \(PatchLimits.layersPerInstrument) velocity layers on one key: the rest are left out")
                                placed = true
                                break
                            }
                            if stacks[s].contains(where: { resolved[$0[0]].velocities.overlaps(velocities) }) {
                                report("overlap", "\(resolved[ri].line): overlapping velocity ranges: a velocity plays the first region's layer only")
                            }
                            layerOf[s][velocities] = stacks[s].count
                            stacks[s].append([ri])
                            taken[s].append([place])
                        }
                        placed = true
                        break
                    }
                    if !placed {
                        guard stacks.count < Self.maximumStacks else {
                            report("stacks:\(key)", "\(resolved[ri].line): more than \(Self.maximumStacks) regions sound together on key \(key): the rest are left out")
                            continue
                        }
                        stacks.append([[ri]])
                        layerOf.append([velocities: 0])
                        taken.append([[place]])
                    }
                }
                for (stackIndex, layerIndices) in stacks.enumerated() {
                    let first = resolved[layerIndices[0][0]]
                    var layers: [DrumLayer] = []
                    for regions in layerIndices {
                        let head = resolved[regions[0]]
                        let random = regions.contains { resolved[$0].rand != 0...1 }
                        let ordered = random ? regions.sorted { resolved[$0].rand.lowerBound < resolved[$1].rand.lowerBound }
                            : regions.sorted { resolved[$0].seqPosition < resolved[$1].seqPosition }
                        if random, Set(ordered.map { (resolved[$0].rand.upperBound - resolved[$0].rand.lowerBound) * 1000 }.map { $0.rounded() }).count > 1 {
                            report("rand", "\(head.line): lorand/hirand ranges of different widths: each sample is chosen equally often")
                        }
                        if regions.contains(where: { resolved[$0].gainDb != head.gainDb || resolved[$0].velocityCurve != head.velocityCurve }) {
                            report("layerlevel", "\(head.line): samples of one velocity layer at different levels: the first region's level is used")
                        }
                        let keyDb = 20 * log10(head.keyLevel.factor(key))
                        layers.append(DrumLayer(velocities: head.velocities, samples: ordered.map { resolved[$0].sample },
                                                selection: random ? .random(seed: UInt64(key + 1)) : .roundRobin,
                                                gainDb: min(24, max(-120, head.gainDb + keyDb)), velocityCurve: head.velocityCurve))
                    }
                    layers.sort { $0.velocities.lowerBound < $1.velocities.lowerBound }
                    let all = layerIndices.joined()
                    if all.contains(where: { resolved[$0].pan != first.pan || resolved[$0].semitones != first.semitones || resolved[$0].group != first.group || resolved[$0].offBy != first.offBy
                        || resolved[$0].envelope != first.envelope || resolved[$0].loops != first.loops || resolved[$0].output != first.output || resolved[$0].filter != first.filter || resolved[$0].delay != first.delay }) {
                        report("instrumentlevel", "\(first.line): regions of one key with different pan, tuning, group, off_by, envelope, loop mode, output, filter or delay: the first region's are used")
                    }
                    let semitones = first.semitones + Double(key - first.keycenter) * first.keytrack
                    guard abs(semitones) <= 48 else {
                        report("tune:\(key)", "\(first.line): key \(key) would be tuned \(Int(semitones.rounded())) semitones (pitch_keycenter, tune, transpose); the patch format holds ±48: left out")
                        continue
                    }
                    let name = (GeneralMIDIDrums.name(forNote: key).map { "\($0)-\(key)" } ?? "note-\(key)")
                        + (stackIndex == 0 ? "" : "-\(stackIndex + 1)") + (first.silent ? "-choke" : "")
                    instruments.append(DrumInstrument(id: name + (first.onRelease ? "-release" : ""), layers: layers, pan: first.pan,
                                                      tune: semitones, midiNote: key, voices: first.polyphony ?? 0))
                    instruments[instruments.count - 1].roundRobinAcrossLayers = layers.count > 1 && layers.contains { $0.samples.count > 1 }
                    instruments[instruments.count - 1].envelope = first.envelope
                    instruments[instruments.count - 1].loops = first.loops
                    instruments[instruments.count - 1].triggersOnNoteOff = first.onRelease
                    if first.output > 0 { instruments[instruments.count - 1].output = "out\(first.output)" }
                    instruments[instruments.count - 1].conditions = first.conditions
                    instruments[instruments.count - 1].keySwitch = first.keySwitch
                    instruments[instruments.count - 1].keyDown = first.keyDown
                    instruments[instruments.count - 1].keyUp = first.keyUp
                    instruments[instruments.count - 1].previousKey = first.previousKey
                    instruments[instruments.count - 1].legato = first.legato
                    instruments[instruments.count - 1].heldDecay = first.heldDecay
                    instruments[instruments.count - 1].loopsUntilRelease = first.loopsUntilRelease
                    instruments[instruments.count - 1].sustainController = first.sustainController
                    instruments[instruments.count - 1].randomGainDb = first.randomGainDb
                    instruments[instruments.count - 1].randomCents = first.randomCents
                    instruments[instruments.count - 1].randomOffset = first.randomOffset
                    instruments[instruments.count - 1].filter = first.filter
                    instruments[instruments.count - 1].delay = first.delay
                    instruments[instruments.count - 1].randomDelay = first.randomDelay
                    instruments[instruments.count - 1].channels = first.channels
                    instruments[instruments.count - 1].modulations = first.modulations
                    instruments[instruments.count - 1].bendUp = first.bendUp
                    instruments[instruments.count - 1].bendDown = first.bendDown
                    instruments[instruments.count - 1].isSilent = first.silent
                    if first.group != 0 { instruments[instruments.count - 1].group = first.group }
                    if first.offBy != 0 { instruments[instruments.count - 1].offBy = first.offBy }
                    if let t = first.controllerTrigger {
                        instruments[instruments.count - 1].controllerTrigger = t
                        instruments[instruments.count - 1].midiNote = nil
                        instruments[instruments.count - 1].id += "-cc\(t.controller)"
                    }
                    groups.append((first.group, first.offBy))
                }
                }
                if instruments.count - firstOfKey > 1 {
                    for i in firstOfKey..<instruments.count { instruments[i].sharesNote = true }
                }
            }
            return (instruments, groups)
        }
    }
}
