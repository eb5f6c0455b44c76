// The instruments as the render thread holds them: plain slots in memory the engine allocated
// when the instruments were set (`InstrumentTables.make`).

/// An instrument as the render thread holds it: plain values and pointers into memory the engine
/// allocated when the instruments were set.
struct InstrumentSlot {
    var firstPlayer: Int
    var voiceCount: Int
    var level: Float
    var pan: PanGains
    var loops: Int32
    var declickFrames: Int32
    var chokeFadeFrames: Int32
    var layerStart: Int
    var layerCount: Int
    /// The round-robin order is kept by the first layer's slot for every layer.
    var roundRobinAcrossLayers: Bool = false
    /// Played by note-offs, not note-ons (`InstrumentDefinition.triggersOnNoteOff`).
    var triggersOnNoteOff = false
    /// The envelope, resolved into segments (see `Voice`); `hasEnvelope` false: none.
    var hasEnvelope = false
    /// The envelope's delay (frames at silence before the attack) and the attack's start (× the level).
    var delayFrames: Int32 = 0
    var attackStart: Float = 0
    var followsNoteOff = false
    var attackFrames: Int32 = 0
    var holdFrames: Int32 = 0
    var decaySegment: Int32 = 0
    var decayFactor: Float = 1
    var sustain: Float = 1
    var releaseSegment: Int32 = 1
    var releaseFactor: Float = 0
    /// A choke releases (segments as a release's) rather than fading linearly.
    var chokeReleases = false
    var chokeReleaseSegment: Int32 = 1
    var chokeReleaseFactor: Float = 0
    /// The envelope moves with the velocity (`AmplitudeEnvelope.velocity`): its stages before
    /// velocity (frames; the attack's not yet scaled by its start), and what velocity 127 adds.
    var hasVelocityEnvelope = false
    var baseAttackFrames: Int32 = 0
    var baseDecayFrames: Int32 = 0
    var baseReleaseFrames: Int32 = 1
    var velocityEnvelope = EnvelopeVelocity()
    /// Instruments a MIDI note plays together (a multi-microphone drum) have one stack number
    /// (the lowest index among them); others, their own index. A choke never reaches across a
    /// stack, as sfizz skips a voice of the same note and group.
    var stack: Int32 = 0
    /// The frame of the last note-off applied to the instrument (`Frame.min`: none).
    var lastReleaseDue: Frame = .min
    /// `InstrumentDefinition.output`.
    var output: UInt8 = 0
    /// Its pan position and law (for pans a controller moves).
    var panPosition: Float = 0
    var panLaw: PanLawKind = .constantPower
    /// Conditions `conditionStart ..< conditionStart + conditionCount` of `InstrumentTables.conditions`.
    var conditionStart = 0
    var conditionCount = 0
    /// The key switch it needs (−1: none).
    var keySwitch: Int32 = -1
    /// Channels 0…15.
    var channelLow: Int32 = 0
    var channelHigh: Int32 = 15
    /// The controller that triggers it (−1: none) and its range.
    var triggerController: Int32 = -1
    var triggerLow: Float = 0
    var triggerHigh: Float = 1
    /// Modulations `modulationStart ..< modulationStart + modulationCount` of
    /// `InstrumentTables.modulations` (the channel controllers' included).
    var modulationStart = 0
    var modulationCount = 0
    var bendUp: Float = 0
    var bendDown: Float = 0
    /// Its voices' level, pan or pitch depend on controllers or bend.
    var isModulated = false
    /// One-way chokes: a trigger silences instruments whose `offBy` is its `group` (0: none).
    var group = 0
    var offBy = 0
    /// Some other instrument's `offBy` is its group.
    var chokes = false
    var isSilent = false
    /// The frame of its last trigger, and of the note-off the sustain pedal holds (`Frame.min`: none).
    var lastTriggerDue: Frame = .min
    var heldReleaseDue: Frame = .min
    var heldReleaseChannel: Int32 = 0
    /// Its first MIDI note (−1: none): the key whose polyphonic pressure its conditions read.
    var note: Int32 = -1
    /// `InstrumentDefinition.keyDown`, `keyUp`, `previousKey` (−1: none).
    var keyDown: Int32 = -1
    var keyUp: Int32 = -1
    var previousKey: Int32 = -1
    /// `InstrumentDefinition.legato`: 1 true, 0 false, −1 nil.
    var legato: Int8 = -1
    /// `InstrumentDefinition.heldDecayPerFrame`.
    var heldDecay: Double = 0
    /// `InstrumentDefinition.sustainController` (−1: none).
    var sustainController: Int32 = 64
    /// The sostenuto pedal went down while its note was down: its note-offs wait for the pedal.
    var sostenutoHeld = false
    /// `InstrumentDefinition.steerFrames`, resolved.
    var steerFrames: Int32 = 0
    /// `InstrumentDefinition.randomGainDb`, `randomCents`.
    var randomGainDb: Float = 0
    var randomCents: Float = 0
    /// `InstrumentDefinition.tuneCents`.
    var tuneCents: Float = 0
    /// The fastest a voice may play once the controllers, the bend and the random pitch have
    /// moved it as far up as they can (a rate, at least 1): how far ahead of a voice the tail it
    /// streams must be read.
    var fastestRate: Float = 1
    var randomOffsetFrames: Int32 = 0
    var randomOffsetShortensDelay = false
    var loopsUntilRelease = false
    /// Its filter (`VoiceFilter`), `filterKind == .none` for none.
    var filterKind: FilterKind = .none
    var filterCutoff: Float = 0
    var filterResonance: Float = 0
    var filterKeytrack: Float = 0
    var filterKeycenter: Int32 = 60
    var filterVeltrack: Float = 0
    var filterRandom: Float = 0
    var filterRate: Double = 48_000
}

/// What controllers give one instrument's voices at one steering (`Engine.steer`), computed
/// once for all its voices.
struct SteerCache {
    var stamp: UInt32 = 0
    var factor: Float = 1
    var pan: Float = 0
    var cents: Float = 0
    var cutoff: Float = 0
    var resonance: Float = 0
    var gains: PanGains = .center
    var panned = false
}

/// A modulation as the render thread holds it.
struct ModulationSlot {
    var controller: Int32
    var target: ModulationTarget
    var depth: Float
    /// 128 points (into `InstrumentTables.curves`); nil: the value itself.
    var curve: UnsafeMutablePointer<Float>?
    /// Measured from the controller's default: the curve's value there counts as its 0 (a pan)
    /// or 1 (a level), exactly (the channel controllers').
    var relative = false
}

/// A velocity layer as the render thread holds it, with its selection state.
struct LayerSlot {
    var minVelocity: Int
    var maxVelocity: Int
    var soundStart: Int
    var soundCount: Int
    var isRandom: Bool
    /// Round robin: the layer's triggers so far.
    var counter: UInt64
    var seed: UInt64
    /// The frame of the layer's last trigger, and how many came on it before the current one.
    var lastDue: Frame = .min
    var sameFrameIndex: UInt64 = 0
    var level: Float
    /// 128 levels, one per velocity (into `InstrumentTables.curves`); nil: velocity / 127.
    var curve: UnsafeMutablePointer<Float>?
}

/// The instruments' tables, allocated once on the control thread.
struct InstrumentTables {
    var instruments: UnsafeMutablePointer<InstrumentSlot>
    var instrumentCount: Int
    var layers: UnsafeMutablePointer<LayerSlot>
    var sounds: UnsafeMutablePointer<Int32>
    var soundCount: Int
    /// MIDI note → the first instrument it plays, -1 for none (128 entries).
    var noteMap: UnsafeMutablePointer<Int32>
    /// Per instrument, the next instrument the same note plays, -1 for none (instruments sharing
    /// a note: a multi-microphone drum).
    var noteNext: UnsafeMutablePointer<Int32>
    /// The layers' velocity curves and the modulations' curves, 128 levels each.
    var curves: UnsafeMutablePointer<Float>
    /// The instruments' controller conditions.
    var conditions: UnsafeMutablePointer<(controller: Int32, low: Float, high: Float)>
    var modulations: UnsafeMutablePointer<ModulationSlot>
    /// Per controller number (`Controller.count`, and one more for the bend): whether some
    /// instrument's voices follow it.
    var steered: UnsafeMutablePointer<Bool>
    /// Per MIDI note: whether it is some instrument's key switch.
    var keySwitchNotes: UnsafeMutablePointer<Bool>
    /// Per MIDI note: whether its note-ons and note-offs change what conditions read (key
    /// switches, `keyDown`/`keyUp` keys, every note when some instrument has a `previousKey` or
    /// `legato`), so
    /// that they reach the render thread as `ChannelMessage.noteOn`/`noteOff` besides triggers.
    var stateNotes: UnsafeMutablePointer<Bool>
    /// Per controller number 0…127: some instrument's sustain controller.
    var sustainPedals: UnsafeMutablePointer<Bool>
    /// The kit's controller values at the start and after a reset (`Controller.count`).
    var controllerDefaults: UnsafeMutablePointer<Float>
    var keySwitchDefault: Int32 = -1
    /// Some instrument is triggered by a controller.
    var hasControllerTriggers = false
    /// Per instrument, its last steering (`SteerCache`).
    var steerCache: UnsafeMutablePointer<SteerCache>

    /// The modulations every instrument that follows the channel controllers has (unless its
    /// own use the controller): volume and expression squared, volume's unity at 100, and pan
    /// centred at 64.
    static let channelModulations: [ControllerModulation] = [
        ControllerModulation(controller: Controller.volume, target: .amplitude, depth: 1, curve: ControllerModulation.sfzCurve(4)),
        ControllerModulation(controller: Controller.expression, target: .amplitude, depth: 1, curve: ControllerModulation.sfzCurve(4)),
        ControllerModulation(controller: Controller.pan, target: .pan, depth: 1,
                             curve: (0..<128).map { $0 >= 64 ? Float($0 - 64) / 63 : Float($0 - 64) / 64 }),
    ]

    /// An instrument's modulations: its own, then the channel controllers' it follows.
    static func modulations(of d: InstrumentDefinition) -> [ControllerModulation] {
        guard d.followsChannelControllers else { return d.modulations }
        return d.modulations + channelModulations.filter { m in !d.modulations.contains { $0.controller == m.controller } }
    }

    static func make(_ definitions: [InstrumentDefinition], controllers: ControllerSetup = ControllerSetup()) -> InstrumentTables {
        let layerCount = definitions.reduce(0) { $0 + $1.layers.count }
        let soundCount = definitions.reduce(0) { $0 + $1.layers.reduce(0) { $0 + $1.sounds.count } }
        let allModulations = definitions.map { modulations(of: $0) }
        let modulationCount = allModulations.reduce(0) { $0 + $1.count }
        let curveCount = definitions.reduce(0) { $0 + $1.layers.filter { $0.velocityCurve != nil }.count }
            + allModulations.reduce(0) { $0 + $1.filter { $0.curve != nil }.count }
        let conditionCount = definitions.reduce(0) { $0 + $1.conditions.count }
        var t = InstrumentTables(instruments: .allocate(capacity: max(1, definitions.count)), instrumentCount: definitions.count,
                                 layers: .allocate(capacity: max(1, layerCount)), sounds: .allocate(capacity: max(1, soundCount)),
                                 soundCount: soundCount, noteMap: .allocate(capacity: 128),
                                 noteNext: .allocate(capacity: max(1, definitions.count)),
                                 curves: .allocate(capacity: max(1, curveCount * 128)),
                                 conditions: .allocate(capacity: max(1, conditionCount)),
                                 modulations: .allocate(capacity: max(1, modulationCount)),
                                 steered: .allocate(capacity: Controller.count + 1), keySwitchNotes: .allocate(capacity: 128),
                                 stateNotes: .allocate(capacity: 128), sustainPedals: .allocate(capacity: 128),
                                 controllerDefaults: .allocate(capacity: Controller.count),
                                 steerCache: .allocate(capacity: max(1, definitions.count)))
        t.steerCache.initialize(repeating: SteerCache(), count: max(1, definitions.count))
        t.noteMap.initialize(repeating: -1, count: 128)
        t.noteNext.initialize(repeating: -1, count: max(1, definitions.count))
        t.steered.initialize(repeating: false, count: Controller.count + 1)
        t.keySwitchNotes.initialize(repeating: false, count: 128)
        t.stateNotes.initialize(repeating: definitions.contains { $0.previousKey != nil || $0.legato != nil }, count: 128)
        t.sustainPedals.initialize(repeating: false, count: 128)
        t.controllerDefaults.initialize(from: controllers.values, count: Controller.count)
        t.keySwitchDefault = controllers.keySwitch.map { (0..<128).contains($0) ? Int32($0) : -1 } ?? -1
        var conditionIndex = 0, modulationIndex = 0
        var noteTail = [Int32](repeating: -1, count: 128)
        var layerIndex = 0, soundIndex = 0, curveIndex = 0
        for (i, d) in definitions.enumerated() {
            (t.instruments + i).initialize(to: InstrumentSlot(
                firstPlayer: d.firstPlayer, voiceCount: d.voiceCount, level: d.gain.linear, pan: PanGains(pan: d.pan, law: d.panLaw),
                loops: Int32(clamping: d.loops), declickFrames: Int32(clamping: d.declickFrames),
                chokeFadeFrames: Int32(clamping: d.chokeFadeFrames), layerStart: layerIndex, layerCount: d.layers.count,
                roundRobinAcrossLayers: d.roundRobinAcrossLayers, triggersOnNoteOff: d.triggersOnNoteOff))
            // An output the engine cannot have is the main mix (as one the render lacks).
            t.instruments[i].output = (0..<Engine.maxOutputCount).contains(d.output) ? UInt8(d.output) : 0
            t.instruments[i].panPosition = min(1, max(-1, d.pan.isFinite ? d.pan : 0))
            t.instruments[i].panLaw = d.panLaw
            t.instruments[i].conditionStart = conditionIndex
            for c in d.conditions where (0...Controller.polyPressure).contains(c.controller) {
                (t.conditions + conditionIndex).initialize(to: (Int32(c.controller), c.low, c.high))
                conditionIndex += 1
            }
            t.instruments[i].conditionCount = conditionIndex - t.instruments[i].conditionStart
            if let k = d.keySwitch, (0..<128).contains(k) {
                t.instruments[i].keySwitch = Int32(k)
                t.keySwitchNotes[k] = true
                t.stateNotes[k] = true
            }
            if let k = d.keyDown, (0..<128).contains(k) {
                t.instruments[i].keyDown = Int32(k)
                t.stateNotes[k] = true
            }
            if let k = d.keyUp, (0..<128).contains(k) {
                t.instruments[i].keyUp = Int32(k)
                t.stateNotes[k] = true
            }
            if let k = d.previousKey, (0..<128).contains(k) { t.instruments[i].previousKey = Int32(k) }
            if let l = d.legato { t.instruments[i].legato = l ? 1 : 0 }
            if d.heldDecayPerFrame > 0, d.heldDecayPerFrame.isFinite, let n = d.midiNotes.first(where: { (0..<128).contains($0) }) {
                t.instruments[i].heldDecay = d.heldDecayPerFrame
                t.stateNotes[n] = true
            }
            if let n = d.midiNotes.first(where: { (0..<128).contains($0) }) { t.instruments[i].note = Int32(n) }
            if let c = d.sustainController, (0..<128).contains(c) {
                t.instruments[i].sustainController = Int32(c)
                t.sustainPedals[c] = true
            } else {
                t.instruments[i].sustainController = -1
            }
            t.instruments[i].channelLow = Int32(min(16, max(1, d.channels.lowerBound)) - 1)
            t.instruments[i].channelHigh = Int32(min(16, max(1, d.channels.upperBound)) - 1)
            if let c = d.controllerTrigger, (0..<128).contains(c.controller) {
                t.instruments[i].triggerController = Int32(c.controller)
                t.instruments[i].triggerLow = c.low
                t.instruments[i].triggerHigh = c.high
                t.hasControllerTriggers = true
            }
            t.instruments[i].modulationStart = modulationIndex
            let own = d.modulations.count
            for (k, m) in allModulations[i].enumerated() where (0..<Controller.count).contains(m.controller) && m.depth.isFinite {
                var curve: UnsafeMutablePointer<Float>?
                if let points = m.curve {
                    let levels = t.curves + curveIndex * 128
                    levels.initialize(from: points.map { $0.isFinite ? $0 : 0 }, count: 128)
                    curve = levels
                    curveIndex += 1
                }
                (t.modulations + modulationIndex).initialize(to: ModulationSlot(controller: Int32(m.controller), target: m.target,
                                                                                depth: m.depth, curve: curve, relative: k >= own))
                t.steered[m.controller] = true
                modulationIndex += 1
            }
            t.instruments[i].modulationCount = modulationIndex - t.instruments[i].modulationStart
            t.instruments[i].bendUp = d.bendUp.isFinite ? d.bendUp : 0
            t.instruments[i].bendDown = d.bendDown.isFinite ? d.bendDown : 0
            if t.instruments[i].bendUp != 0 || t.instruments[i].bendDown != 0 { t.steered[Controller.count] = true }
            t.instruments[i].isModulated = t.instruments[i].modulationCount > 0 || t.instruments[i].bendUp != 0
                || t.instruments[i].bendDown != 0
            t.instruments[i].group = d.group ?? d.chokeGroup
            t.instruments[i].offBy = d.offBy ?? d.chokeGroup
            t.instruments[i].isSilent = d.isSilent
            t.instruments[i].steerFrames = Int32(clamping: max(0, d.steerFrames ?? d.declickFrames))
            t.instruments[i].randomGainDb = d.randomGainDb.isFinite ? min(48, max(0, d.randomGainDb)) : 0
            t.instruments[i].randomCents = d.randomCents.isFinite ? min(9600, max(-9600, d.randomCents)) : 0
            t.instruments[i].tuneCents = d.tuneCents.isFinite ? min(9600, max(-9600, d.tuneCents)) : 0
            t.instruments[i].randomOffsetFrames = Int32(clamping: max(0, d.randomOffsetFrames))
            t.instruments[i].fastestRate = d.fastestRate
            t.instruments[i].randomOffsetShortensDelay = d.randomOffsetShortensDelay
            t.instruments[i].loopsUntilRelease = d.loopsUntilRelease
            if let f = d.filter, f.kind != .none, f.sampleRate.isFinite, f.sampleRate >= 1000 {
                func finite(_ x: Float, _ range: ClosedRange<Float>) -> Float { x.isFinite ? min(range.upperBound, max(range.lowerBound, x)) : 0 }
                t.instruments[i].filterKind = f.kind
                t.instruments[i].filterCutoff = finite(f.cutoff, 0...20_000)
                t.instruments[i].filterResonance = finite(f.resonance, -60...60)
                t.instruments[i].filterKeytrack = finite(f.keytrack, -1200...1200)
                t.instruments[i].filterKeycenter = Int32(min(127, max(0, f.keycenter)))
                t.instruments[i].filterVeltrack = finite(f.veltrack, -12_000...12_000)
                t.instruments[i].filterRandom = finite(f.random, -12_000...12_000)
                t.instruments[i].filterRate = f.sampleRate
            }
            if let e = d.envelope {
                let decay = AmplitudeEnvelope.segments(forFall: e.decayFrames)
                let release = AmplitudeEnvelope.segments(forFall: e.releaseFrames)
                t.instruments[i].hasEnvelope = true
                t.instruments[i].followsNoteOff = e.followsNoteOff
                // From its start at sfizz's pace, 1 / attack per frame: (1 − start) × attack frames.
                t.instruments[i].attackFrames = Int32(clamping: Int((Double(e.attackFrames) * Double(1 - e.start)).rounded()))
                t.instruments[i].holdFrames = Int32(clamping: e.holdFrames)
                t.instruments[i].delayFrames = Int32(clamping: e.delayFrames)
                t.instruments[i].attackStart = e.start
                t.instruments[i].decaySegment = e.decayFrames == 0 ? 0 : decay.frames
                t.instruments[i].decayFactor = decay.factor
                t.instruments[i].sustain = e.sustain
                t.instruments[i].releaseSegment = release.frames
                t.instruments[i].releaseFactor = release.factor
                if let v = e.velocity {
                    t.instruments[i].hasVelocityEnvelope = true
                    t.instruments[i].baseAttackFrames = Int32(clamping: e.attackFrames)
                    t.instruments[i].baseDecayFrames = Int32(clamping: e.decayFrames)
                    t.instruments[i].baseReleaseFrames = Int32(clamping: e.releaseFrames)
                    t.instruments[i].velocityEnvelope = v
                }
                if let frames = e.chokeReleaseFrames {
                    let choke = AmplitudeEnvelope.segments(forFall: frames)
                    t.instruments[i].chokeReleases = true
                    t.instruments[i].chokeReleaseSegment = choke.frames
                    t.instruments[i].chokeReleaseFactor = choke.factor
                }
            }
            for layer in d.layers {
                var seed: UInt64 = 0
                if case .random(let s) = layer.selection { seed = s == 0 ? 0x9E37_79B9_7F4A_7C15 : s }
                (t.layers + layerIndex).initialize(to: LayerSlot(
                    minVelocity: layer.velocities.lowerBound, maxVelocity: layer.velocities.upperBound,
                    soundStart: soundIndex, soundCount: layer.sounds.count, isRandom: seed != 0, counter: 0,
                    seed: seed, level: layer.gain.linear))
                if let curve = layer.velocityCurve {
                    let levels = t.curves + curveIndex * 128
                    levels.initialize(from: curve, count: 128)
                    t.layers[layerIndex].curve = levels
                    curveIndex += 1
                }
                for s in layer.sounds {
                    t.sounds[soundIndex] = s.rawValue
                    soundIndex += 1
                }
                layerIndex += 1
            }
            // In definition order; an instrument naming a note twice is chained once.
            for note in Set(d.midiNotes) where (0..<128).contains(note) {
                if noteTail[note] < 0 { t.noteMap[note] = Int32(i) } else { t.noteNext[Int(noteTail[note])] = Int32(i) }
                noteTail[note] = Int32(i)
            }
        }
        // Stacks: the instruments each note's chain links, joined across notes (union by lowest).
        var root = Array(0..<definitions.count)
        func find(_ i: Int) -> Int {
            var i = i
            while root[i] != i { root[i] = root[root[i]]; i = root[i] }
            return i
        }
        for note in 0..<128 {
            var i = Int(t.noteMap[note])
            while i >= 0 {
                let next = Int(t.noteNext[i])
                if next >= 0 {
                    let a = find(i), b = find(next)
                    if a != b { root[max(a, b)] = min(a, b) }
                }
                i = next
            }
        }
        for i in 0..<definitions.count { t.instruments[i].stack = Int32(find(i)) }
        let offBys = Set((0..<definitions.count).map { t.instruments[$0].offBy }.filter { $0 != 0 })
        for i in 0..<definitions.count where t.instruments[i].group != 0 {
            t.instruments[i].chokes = offBys.contains(t.instruments[i].group)
        }
        return t
    }

    /// Marks every sound the instruments name (see `UnsafeOwnership`).
    @_noLocks @_noAllocation
    func markSounds(_ ownership: UnsafeOwnership) {
        for i in 0..<soundCount { ownership.mark(sounds[i]) }
    }

    func deallocate() {
        instruments.deallocate()
        layers.deallocate()
        sounds.deallocate()
        noteMap.deallocate()
        noteNext.deallocate()
        curves.deallocate()
        conditions.deallocate()
        modulations.deallocate()
        steered.deallocate()
        keySwitchNotes.deallocate()
        stateNotes.deallocate()
        sustainPedals.deallocate()
        controllerDefaults.deallocate()
        steerCache.deallocate()
    }
}
