import Synchronization
import Foundation
import Locking
import Patches
import ProgramHost
import SamplerCore
import Scheduling
import SoundFiles
import Sync

/// A patch made playable on one engine at one rate: every sample decoded (tuned by resampling)
/// and registered, the instruments defined for `Engine.setInstruments`, and the instruments
/// that stream set up with their rings. The one path from a patch, of either file version, to
/// the engine.
///
/// An instrument streams when its only sample says `"stream": true`, or says nothing and lasts
/// longer than `PatchStreamingOptions.threshold` (untuned). A streamed instrument's start is
/// made on the control thread (its ring must be cued there), so it plays from the patch's
/// patterns and songs but not from MIDI notes; it is still choked by its group.
///
/// Control thread only.
package final class LoadedPatch {
    /// Per instrument, its definition (a streamed one has no layers and no MIDI notes).
    package let definitions: [InstrumentDefinition]
    /// Per streamed instrument: its player and its level and pan before velocity.
    private let streamedStarts: [Int: (player: Int, level: Float, pan: PanGains, declick: Int, curve: [Float]?)]
    /// The streamed instruments' rings, nil when none streams.
    private let streams: PatchStreams?
    /// What reads the tails of sounds streamed per voice, nil when none is: this kit's own, or
    /// the one it shares with the kits before and after it on the engine (`sharing`,
    /// `readyForLoads`), where its sources begin at `tailSourceBase`.
    private let tails: TailFiller?
    private let tailSourceBase: Int32?
    /// Whether any of its sounds keeps only its head in memory.
    private let hasHeads: Bool

    deinit {
        if let tailSourceBase { tails?.remove(first: tailSourceBase) }
        tails?.removeUser()
    }

    /// Starts reading streamed tails on a thread of their own (live; offline, the feeding
    /// thread reads them before each block). Control thread.
    package func startTailThread() { tails?.startThread() }

    /// Whether some of its sounds keep only their heads in memory.
    package var streamsTails: Bool { hasHeads }

    /// The fastest rate of the instruments that stream tails (at least 4: what the render thread
    /// asks the filler to read for), for which the tail rings were sized.
    package private(set) var fastestTailRate: Float = 4

    /// A warning when the tail rings are too short for this kit's fastest voice at the server's
    /// period now (`Engine.expectedPeriodFrames`: the server raised it after the load), else nil.
    /// `file`: the kit's, for the message.
    package func ringWarning(engine: Engine, file: String) -> String? {
        let shape = engine.tailBufferShape, period = engine.expectedPeriodFrames
        guard hasHeads, shape.count > 0, period > 0 else { return nil }
        let needed = Self.ringFramesForFastestVoice(rate: fastestTailRate, period: period)
        guard needed > shape.capacity else { return nil }
        return "warning: the server's period is now \(period) frames: the \(shape.capacity)-frame tail rings sized at the load are too short for the fastest voices of \(file) (\(needed) frames); a voice that outruns its ring ends there, counted"
    }

    /// For `CommandFeeder.beforeEachFeed`: offline (no thread started), reads every tail asked
    /// for so far, so that the next block finds them; nil when no sound streams its tail.
    package var tailService: (() -> Void)? {
        guard let tails else { return nil }
        return { if !tails.isLive { tails.serviceAll() } }
    }

    /// Whether every tail asked for so far has been read (live; a snapshot).
    package var tailsRead: Bool { tails?.isIdle ?? true }

    /// The filler thread's passes so far (live): once it has made two more after a render, it
    /// has read what that render asked for, as far as the rings allow.
    package var tailPassCount: Int { tails?.passCount ?? 0 }

    /// The streamed tails' frames read from disk so far (each voice's as far as it played).
    package var tailFramesRead: Int { tails?.framesRead ?? 0 }
    /// Sounds made whole for tails so far, by the filler every kit of this engine shares.
    package var tailSoundsMadeWhole: Int { tails?.soundsMadeWhole ?? 0 }

    /// Decodes every sample of `kit` that does not stream at `sampleRate` and registers it with
    /// `engine`; opens the streamed ones. Throws the first sample that cannot be loaded, naming
    /// its place in the patch, or a patch whose decoded samples would exceed the budget.
    ///
    /// `outputs` are the outputs the engine renders besides the main mix (nil: the patch's own,
    /// `Patch.outputNames`): an instrument whose output is the k-th of them goes to engine
    /// output k + 1, one whose output is not among them to the main mix (`unroutedOutputs`).
    ///
    /// Its instruments' voices are the engine's players from `firstPlayer` on.
    ///
    /// `registering`, when given, is how each decoded sound is registered with the engine and
    /// withdrawn again (a caller that guards the engine's control side with a lock takes it
    /// there, not across the decoding); `root`, when given, holds every sample it reads under
    /// that directory as it opens it.
    ///
    /// `readyForLoads`: kits loaded later in its place (`/sampler/load`) may stream their tails
    /// too: the engine's tail buffers are attached for any streamed sample (the longest tail
    /// streamed, stereo) and the filler is made even when this kit streams none.
    package convenience init(_ kit: Patch, engine: Engine, sampleRate: Double, streaming: PatchStreamingOptions = .init(),
                             outputs: [String]? = nil, firstPlayer: Int = 0,
                             registering: (register: (Sound, SoundID?) throws -> SoundID, unregister: (SoundID) -> Void)? = nil,
                             root: String? = nil, showsProgress: Bool = false, readyForLoads: Bool = false) throws {
        try self.init(prepared: Self.prepare(kit, sampleRate: sampleRate, streaming: streaming, headsAllowed: registering == nil,
                                             root: root, showsProgress: showsProgress),
                      engine: engine, outputs: outputs, firstPlayer: firstPlayer, registering: registering,
                      readyForLoads: readyForLoads && registering == nil && streaming.tailsAboveBytes != nil)
    }

    /// The second half of a load: `prepared`'s sounds registered with `engine` and its
    /// instruments defined. Control thread.
    ///
    /// `sharing`: the kit `prepared` replaces, whose sounds it registers again where `prepared`
    /// left them undecoded (the caller then withdraws every registration of the old kit), and
    /// whose tail filler it shares.
    package init(prepared: Prepared, engine: Engine, outputs: [String]? = nil, firstPlayer: Int = 0,
                 registering: (register: (Sound, SoundID?) throws -> SoundID, unregister: (SoundID) -> Void)? = nil,
                 sharing old: LoadedPatch? = nil, readyForLoads: Bool = false) throws {
        let kit = prepared.kit, sampleRate = prepared.sampleRate, streaming = prepared.streaming, root = prepared.root
        let streamFiles = prepared.streamFiles, jobs = prepared.jobs, jobOfKey = prepared.jobOfKey, decoded = prepared.decoded
        let headFrames = prepared.headFrames, heads = prepared.heads, what = prepared.what
        let register = registering?.register ?? { try engine.register($0, continuation: $1) }
        let unregister = registering?.unregister ?? { engine.unregister($0) }
        let outputs = outputs ?? kit.outputNames
        func outputIndex(_ instrument: DrumInstrument) -> Int {
            guard let name = instrument.output, let k = outputs.firstIndex(of: name), k + 1 < Engine.maxOutputCount else { return 0 }
            return k + 1
        }
        unroutedOutputs = kit.outputNames.filter { name in
            guard let k = outputs.firstIndex(of: name) else { return true }
            return k + 1 >= Engine.maxOutputCount
        }
        var longestTail = 0, anyStereoTail = false
        // The instruments that stream tails (by index in the kit, as `definitions`).
        var tailInstruments = Set<Int>()
        // The tails' filler: the replaced kit's, or a new one; this kit's source ids reserved.
        let filler = old?.tails ?? (headFrames != nil || readyForLoads ? TailFiller(engine: engine) : nil)
        let sourceBase = headFrames != nil ? filler?.reserve(jobs.count) : nil
        if headFrames != nil && sourceBase == nil {
            throw TailsError(message: "\(kit.file): the engine's tail sources are used up: restart the sampler")
        }
        // A head's tail source: this kit's first id and the head's job.
        let tailBase = sourceBase ?? 0
        // With heads: what stays in memory (sounds and heads), checked against the budget with
        // the tail buffers; and each streamed job's whole length, which the filler checks.
        var memoryBytes = 0
        var tailFrames = [Int](repeating: 0, count: jobs.count)
        var tailChannels = [Int](repeating: 1, count: jobs.count)
        // Heads of files played as they are but for a loop that repeats forever, by job.
        var loopedFiles: [Int: TailFiller.FileLoop] = [:]
        var cache: [String: SoundID] = [:]
        var shareable: [String: Shareable] = [:]
        var registeredJobs: [Int: SoundID] = [:]
        var definitions: [InstrumentDefinition] = []
        var starts: [Int: (player: Int, level: Float, pan: PanGains, declick: Int, curve: [Float]?)] = [:]
        var nextPlayer = firstPlayer
        let notes = kit.resolvedMIDINotes
        let declick = Int((sampleRate * 0.002).rounded())
        let panLaw = kit.panLaw.kind
        do {
            for (i, instrument) in kit.instruments.enumerated() {
                var layers: [InstrumentLayer] = []
                if streamFiles[i] == nil {
                    for layer in instrument.layers {
                        var ids: [SoundID] = []
                        for sample in layer.samples {
                            let key = Self.soundKey(instrument, sample)
                            let job = jobOfKey[key]!
                            if let id = registeredJobs[job] { ids.append(id); continue }
                            if prepared.reused.contains(key), let known = old?.shareable[key], known.tail == nil {
                                do {
                                    var whole: SoundID?
                                    if let w = known.whole {
                                        whole = try register(engine.sound(w), nil)
                                        cache[key + "|whole"] = whole
                                    }
                                    let id = try register(engine.sound(known.played), whole)
                                    cache[key] = id
                                    shareable[key] = Shareable(played: id, whole: whole, stamp: known.stamp)
                                    registeredJobs[job] = id
                                    ids.append(id)
                                } catch {
                                    throw SamplerError("\(jobs[job].place): \(error)")
                                }
                                continue
                            }
                            var sounds: DecodedSounds
                            var stamp = prepared.stamps[key]
                            if prepared.reused.contains(key), let known = old?.shareable[key], let tail = known.tail {
                                // A head the kit replaced: copied into this kit's heads (the old
                                // kit's memory goes with it), its tail read for this kit's voices.
                                let taken = engine.sound(known.played)
                                guard let head = Sound(frames: taken.frameCount, channelCount: taken.channelCount, sampleRate: taken.sampleRate,
                                                       memory: heads, fill: { left, right in
                                    left.update(from: taken.left, count: taken.frameCount)
                                    if taken.channelCount == 2 { right.update(from: taken.right, count: taken.frameCount) }
                                    return true
                                }) else { throw SamplerError("\(jobs[job].place): its head could not be copied") }
                                sounds = DecodedSounds(played: head, whole: nil)
                                sounds.tail = (tail.frames, tail.peak, tail.loopStart)
                                sounds.loopedFileFrames = tail.loopedFileFrames
                                stamp = known.stamp
                            } else {
                                // A file left undecoded after another failed (files are handed out
                                // in the kit's order, so every earlier one was decoded): the first
                                // failure found in the kit's order.
                                guard let result = decoded[job] else {
                                    throw decoded.lazy.compactMap { r -> SamplerError? in
                                        if case .failure(let e) = r { return e }
                                        return nil
                                    }.first ?? SamplerError("\(jobs[job].place): not decoded")
                                }
                                sounds = try result.get()
                            }
                            do {
                                var whole: SoundID?
                                if let full = sounds.whole {
                                    let id = try register(full, nil)
                                    cache[key + "|whole"] = id
                                    whole = id
                                }
                                let id: SoundID
                                memoryBytes += sounds.played.frameCount * sounds.played.channelCount * 4
                                    + (sounds.whole.map { $0.frameCount * $0.channelCount * 4 } ?? 0)
                                if let tail = sounds.tail {
                                    id = try engine.register(sounds.played, tail: TailSource(id: tailBase + Int32(job), frames: tail.frames, peak: tail.peak,
                                                                                             loopStart: tail.loopStart))
                                    // A tail that repeats its loop is endless: it plays through a ring.
                                    longestTail = max(longestTail, tail.loopStart != nil ? Int.max / 4 : tail.frames - (sounds.played.frameCount - 1))
                                    tailInstruments.insert(i)
                                    anyStereoTail = anyStereoTail || sounds.played.channelCount == 2
                                    tailFrames[job] = tail.frames
                                    tailChannels[job] = sounds.played.channelCount
                                    if let fileFrames = sounds.loopedFileFrames, let loopStart = tail.loopStart {
                                        loopedFiles[job] = TailFiller.FileLoop(start: loopStart, end: tail.frames, fileFrames: fileFrames,
                                                                               head: sounds.played)
                                    }
                                    if jobs[job].sample.data == nil {
                                        shareable[key] = Shareable(played: id, whole: nil, stamp: stamp,
                                                                   tail: (tail.frames, tail.peak, sounds.played.channelCount, sounds.played.frameCount,
                                                                          tail.loopStart, sounds.loopedFileFrames))
                                    }
                                } else {
                                    id = try register(sounds.played, whole)
                                    shareable[key] = Shareable(played: id, whole: whole, stamp: jobs[job].sample.data == nil ? stamp : nil)
                                }
                                cache[key] = id
                                registeredJobs[job] = id
                                ids.append(id)
                            } catch {
                                throw SamplerError("\(jobs[job].place): \(error)")
                            }
                        }
                        let selection: SampleSelection = switch layer.selection {
                        case .roundRobin: .roundRobin
                        case .random(let seed): .random(seed: seed)
                        }
                        layers.append(InstrumentLayer(velocities: layer.velocities, sounds: ids, selection: selection,
                                                      gain: Gain(decibels: layer.gainDb),
                                                      velocityCurve: layer.velocityCurve.map { $0.levels.map { Float($0) } }))
                    }
                } else {
                    // The level as the render thread computes a trigger's: instrument × layer.
                    let level = Gain(decibels: instrument.gainDb).linear * Gain(decibels: instrument.layers[0].gainDb).linear
                    starts[i] = (nextPlayer, level, PanGains(pan: Float(instrument.pan), law: panLaw), declick,
                                 instrument.layers[0].velocityCurve.map { $0.levels.map { Float($0) } })
                }
                definitions.append(InstrumentDefinition(
                    firstPlayer: nextPlayer, voiceCount: instrument.voices, gain: Gain(decibels: instrument.gainDb),
                    pan: Float(instrument.pan), loops: instrument.loops, chokeGroup: instrument.chokeGroup, layers: layers,
                    declickFrames: declick, chokeFadeFrames: Int((sampleRate * 0.005).rounded()),
                    midiNotes: streamFiles[i] == nil ? notes[i].map { [$0] } ?? [] : [],
                    panLaw: panLaw, roundRobinAcrossLayers: instrument.roundRobinAcrossLayers,
                    envelope: streamFiles[i] == nil ? instrument.envelope.map { Self.envelope($0, sampleRate: sampleRate) } : nil,
                    triggersOnNoteOff: instrument.triggersOnNoteOff, output: outputIndex(instrument)))
                // A delayed instrument's sounds begin with its delay's silence (below), and its
                // envelope waits for it too.
                let delay = Self.delayFrames(instrument, sampleRate: sampleRate)
                if delay > 0, streamFiles[i] == nil, definitions[definitions.count - 1].envelope != nil {
                    definitions[definitions.count - 1].envelope!.delayFrames += delay
                }
                definitions[definitions.count - 1].conditions = instrument.conditions
                definitions[definitions.count - 1].keySwitch = instrument.keySwitch
                definitions[definitions.count - 1].keyDown = instrument.keyDown
                definitions[definitions.count - 1].keyUp = instrument.keyUp
                definitions[definitions.count - 1].previousKey = instrument.previousKey
                definitions[definitions.count - 1].legato = instrument.legato
                definitions[definitions.count - 1].loopsUntilRelease = instrument.loopsUntilRelease && streamFiles[i] == nil
                definitions[definitions.count - 1].heldDecayPerFrame = instrument.heldDecay / sampleRate
                definitions[definitions.count - 1].sustainController = instrument.sustainController
                definitions[definitions.count - 1].randomGainDb = Float(instrument.randomGainDb)
                definitions[definitions.count - 1].randomCents = Float(instrument.randomCents)
                definitions[definitions.count - 1].tuneCents = Float(prepared.voiceTunings[i] ?? 0)
                // Frames of the file, as the tuning stretched them; not with a delay (its silence
                // begins the sound: the import notes it).
                definitions[definitions.count - 1].randomOffsetFrames = instrument.delay > 0 || instrument.randomDelay > 0 ? 0
                    : Int((Double(instrument.randomOffset) * Double.pow(2, -instrument.tune / 12)).rounded())
                // A random delay: each trigger starts a random 0 … randomDelay into the silence
                // that begins its samples (delay + randomDelay), its envelope's delay shortened
                // as much.
                if instrument.randomDelay > 0, streamFiles[i] == nil {
                    definitions[definitions.count - 1].randomOffsetFrames = Int((instrument.randomDelay * sampleRate).rounded())
                    definitions[definitions.count - 1].randomOffsetShortensDelay = true
                }
                if var filter = instrument.filter {
                    filter.sampleRate = sampleRate
                    definitions[definitions.count - 1].filter = filter
                }
                // A controller change glides over 1 ms, or the modulations' smoothing.
                let smoothing = Double(instrument.modulations.map(\.smoothing).max() ?? 0)
                definitions[definitions.count - 1].steerFrames = Int((max(1, smoothing) / 1000 * sampleRate).rounded())
                definitions[definitions.count - 1].channels = instrument.channels
                definitions[definitions.count - 1].controllerTrigger = instrument.controllerTrigger
                definitions[definitions.count - 1].modulations = instrument.modulations
                definitions[definitions.count - 1].bendUp = Float(instrument.bendUp)
                definitions[definitions.count - 1].bendDown = Float(instrument.bendDown)
                definitions[definitions.count - 1].followsChannelControllers = instrument.followsChannelControllers
                definitions[definitions.count - 1].group = instrument.group
                definitions[definitions.count - 1].offBy = instrument.offBy
                definitions[definitions.count - 1].isSilent = instrument.isSilent
                if streamFiles[i] != nil, outputIndex(instrument) != 0 { streamedOutputs.append((nextPlayer, outputIndex(instrument))) }
                nextPlayer += instrument.voices
            }
            guard nextPlayer <= engine.configuration.maxPlayers else {
                throw SamplerError("\(kit.file): instruments: \(nextPlayer - firstPlayer) voices in all; the engine has \(engine.configuration.maxPlayers - firstPlayer) players for them")
            }
        } catch {
            // Nothing of a patch that cannot be loaded stays registered.
            for id in cache.values { unregister(id) }
            throw error
        }
        // The engine's tail buffers: attached by the first kit (for any tail a later kit may
        // stream when `readyForLoads`), and a later kit's tails within them.
        let shape = engine.tailBufferShape
        let attaching = shape.count == 0 && (longestTail > 0 || readyForLoads)
        // Rings: a tail of any length plays through one; a kit whose tails are all shorter
        // takes buffers only as long as its longest (one that loads may come later: the ring).
        // At least four heads: offline, a voice moves at most a head's length in a block, and the
        // filler must be able to read two blocks ahead of it. Live, at least four periods of
        // the fastest voice (`ringFramesForFastestVoice`).
        let streamingDefinitions = tailInstruments.sorted().map { definitions[$0] }
        fastestTailRate = Self.fastestTailRate(streamingDefinitions)
        let forFastest = streamingDefinitions.isEmpty ? 0 : Self.ringFramesForFastestVoice(rate: fastestTailRate, period: engine.expectedPeriodFrames)
        let longestForFastest = Int((Self.longestRingForFastestVoiceSeconds * sampleRate).rounded(.up))
        if attaching, longestTail > 0, forFastest > longestForFastest {
            streaming.report("warning: \(kit.file): its fastest voices (bend, pitch controllers and tuning at their highest) would need tail rings of \(forFastest) frames at \(engine.expectedPeriodFrames)-frame periods; they get \(longestForFastest), and a voice that outruns its ring ends there, counted")
        }
        let ring = max(4 * (headFrames ?? 0), min(forFastest, longestForFastest),
                       streaming.tailRingFrames ?? Int((Self.tailRingSeconds * sampleRate).rounded(.up)))
        let capacity = readyForLoads ? ring : min(longestTail, ring)
        // A kit loaded in place of another plays through the rings the first one sized.
        if longestTail > 0 && !attaching && shape.count > 0, forFastest > shape.capacity {
            streaming.report("warning: \(kit.file): its fastest voices may outrun the \(shape.capacity)-frame tail rings the first kit sized at \(engine.expectedPeriodFrames)-frame periods; a voice that does ends there, counted (start the sampler with a larger --stream-ring-frames)")
        }
        if longestTail > 0 && !attaching && anyStereoTail && !shape.stereo {
            for id in cache.values { unregister(id) }
            throw TailsError(message: "\(kit.file): its streamed tails are stereo, and the engine's tail buffers mono")
        }
        if headFrames != nil || attaching {
            let buffers = attaching ? max(1, streaming.tailVoices) * capacity * (anyStereoTail || readyForLoads ? 2 : 1) * 4 : 0
            // Loops longer than half a ring are kept whole while voices play them (the filler's):
            // at most one a buffer (voices of one sample that begin together each make one),
            // none longer than the longest.
            let rings = attaching ? capacity : shape.capacity
            let keptLoops = loopedFiles.values.filter { 2 * ($0.end - $0.start) > rings }
            let keptBytes = (attaching ? max(1, streaming.tailVoices) : shape.count)
                * (keptLoops.map { ($0.end - $0.start) * $0.head.channelCount * 4 }.max() ?? 0)
            do {
                try DecodeBudget.check(memoryBytes + buffers + keptBytes,
                                       what: "\(kit.file): \(what) (heads, whole sounds, \(streaming.tailVoices) tail buffers and the loops they keep)")
            } catch {
                for id in cache.values { unregister(id) }
                throw TailsError(message: "\(error)")
            }
        }
        if let heads, longestTail > 0 {
            // Heads are what a voice plays while its tail is read: paged out, they would be read
            // back from disk on the render thread.
            let (locked, error) = heads.lock()
            if let error {
                streaming.report("warning: \(kit.file): \(HeadMemory.size(heads.bytes - locked)) of \(HeadMemory.size(heads.bytes)) of sample heads not locked in memory (mlock: \(String(cString: strerror(error))); locked memory is limited to \(HeadMemory.lockLimit): raise it with ulimit -l); under memory pressure they may be paged out")
            }
        }
        if attaching {
            do { try engine.attachTailBuffers(count: max(1, streaming.tailVoices), capacity: capacity, stereo: anyStereoTail || readyForLoads) } catch {
                for id in cache.values { unregister(id) }
                throw SamplerError("\(kit.file): \(error)")
            }
        }
        tails = filler
        hasHeads = longestTail > 0
        tailSourceBase = longestTail > 0 ? sourceBase : nil
        var tailSources: [TailFiller.Source] = []
        if longestTail > 0 {
            let instruments = kit.instruments
            tailSources = jobs.indices.map { j -> TailFiller.Source in
                let job = jobs[j], instrument = instruments[job.instrument]
                // A file played as it is: its tail decoded straight into the buffer.
                if Self.playsFileAsItIs(job.sample, instrument) {
                    return .file(path: job.sample.resolvedPath, root: root, sampleRate: sampleRate, channels: tailChannels[j])
                }
                // Looped: its first pass decoded straight into the buffer and its repeats copied.
                if let loop = loopedFiles[j] {
                    return .loopedFile(path: job.sample.resolvedPath, root: root, sampleRate: sampleRate, channels: tailChannels[j], loop: loop)
                }
                return .sound { @Sendable in
                    var untuned: Sound?
                    return try Self.decode(job.sample, of: instrument, sampleRate: sampleRate, root: root,
                                           loader: SoundFileLoader(targetSampleRate: sampleRate), untuned: &untuned).played
                }
            }
        }
        if streamFiles.isEmpty {
            streams = nil
        } else {
            let streams = PatchStreams(engine: engine, options: streaming)
            do {
                for (i, file) in streamFiles.sorted(by: { $0.key < $1.key }) {
                    try streams.add(player: i, id: kit.instruments[i].id, file: file, loops: kit.instruments[i].loops,
                                    sampleRate: sampleRate, preloadSeconds: streaming.preloadSeconds)
                }
            } catch {
                for id in cache.values { unregister(id) }
                throw error
            }
            self.streams = streams
        }
        // Nothing throws from here on: the filler counts this kit as a user, and its sources
        // are read from now on (`deinit` undoes both).
        filler?.addUser()
        if let filler, let sourceBase, longestTail > 0 { filler.add(first: sourceBase, tailSources, frames: tailFrames) }
        self.definitions = definitions
        streamedStarts = starts
        self.shareable = shareable
        takenOver = prepared.reused.count
        // One entry per registration: two keys may give one sound (registered twice).
        soundIDs = cache.values.sorted { $0.rawValue < $1.rawValue }
    }

    /// A kit whose tails the engine cannot stream (its tail buffers, or the filler's source
    /// ids): says nothing of what the kit's files hold.
    package struct TailsError: Error, CustomStringConvertible {
        let message: String
        package var description: String { message }
    }

    /// The patch's outputs that the engine's outputs do not include (their instruments play on
    /// the main mix).
    package let unroutedOutputs: [String]
    /// The players of streamed instruments with an output of their own, and that output: they
    /// are started by `.start` commands, not triggers, so their routing is the player's
    /// (`Command.setOutput`, sent by whoever runs the patch once the engine has it).
    package private(set) var streamedOutputs: [(player: Int, output: Int)] = []

    /// The commands that route the streamed instruments' players (see `streamedOutputs`).
    package var routingCommands: [Command] { streamedOutputs.map { Command.setOutput(player: $0.player, $0.output) } }

    /// The sounds registered for the instruments held in memory: one entry per registration
    /// (a sound two samples share is registered, and listed, twice), each to be withdrawn once.
    package let soundIDs: [SoundID]
    /// The sounds a kit that replaces this one may take over (`shareableKeys`).
    let shareable: [String: Shareable]
    /// How many of its sounds it took over from the kit it replaced (not decoded again).
    let takenOver: Int

    /// Whether instrument `index` streams from disk.
    package func streams(instrument index: Int) -> Bool { streamedStarts[index] != nil }

    /// The command for `trigger` (instrument `trigger.player`, velocity 0…1 → 1…127): a
    /// `Command.trigger`, or for a streamed instrument the start of its cued ring.
    package func command(for trigger: Trigger) -> Command {
        guard !trigger.isRelease, trigger.channelMessage < 0, let start = streamedStarts[trigger.player], let streams else {
            return PatchProgram.command(for: trigger)
        }
        let velocity = max(1, min(127, Int((trigger.velocity * 127).rounded())))
        // The ring that played before is cued again only after the new start's declick, which
        // still reads it. A trigger that continues the ring playing has no declick: the tail
        // would read the same ring and move it on twice as fast.
        let (sound, continues) = streams.soundID(forTriggerOf: trigger.player, at: trigger.frame, tail: Frame(start.declick))
        // A streamed ring holds its loops.
        return .start(player: start.player, sound: sound, at: trigger.frame, loops: 0,
                      gain: Gain(linear: start.curve.map { start.level * $0[velocity] } ?? start.level * Float(velocity) / 127), pan: start.pan,
                      declickFrames: continues ? 0 : start.declick, tag: UInt32(trigger.player))
    }

    /// The commands a MIDI note-on (velocity > 0) or note-off of `note` on `channel` (1…16)
    /// sends, as a note on `midi_in` or in a MIDI file plays the kit: the key's state (a key
    /// switch; see `Patch.stateNotes`), the
    /// instruments on the note (triggered, or released by a note-off; those played by
    /// note-offs at the velocity 64). `kit` is the patch this was loaded from.
    package func noteCommands(note: Int, velocity: Int, channel: Int, kit: Patch, at: Frame) -> [Command] {
        var commands: [Command] = []
        let notes = kit.resolvedMIDINotes
        if kit.stateNotes.contains(note) {
            commands.append(.channelMessage(velocity > 0 ? Command.ChannelMessage.noteOn : Command.ChannelMessage.noteOff,
                                            channel: channel, value: 0, note: note, at: at))
        }
        for (i, instrument) in kit.instruments.enumerated() where notes[i] == note {
            if velocity > 0, !instrument.triggersOnNoteOff {
                commands.append(command(for: Trigger(frame: at, player: i, velocity: Float(velocity) / 127, channel: channel)))
            } else if velocity == 0, instrument.triggersOnNoteOff {
                commands.append(command(for: Trigger(frame: at, player: i, velocity: 64 / 127, channel: channel)))
            } else if velocity == 0, instrument.envelope?.noteOff ?? false, !streams(instrument: i) {
                commands.append(command(for: Trigger(frame: at, player: i, velocity: 0, isRelease: true, channel: channel)))
            }
        }
        return commands
    }

    /// `source` as the feeder should use it: when instruments stream, each window first retires
    /// and tops up their rings (see `PatchStreams`).
    package func feederSource(_ source: any TriggerSource) -> any TriggerSource {
        var source = source
        if let streams { source = StreamServicingSource(inner: source, streams: streams) }
        return source
    }

    /// Frames played as silence for lack of data, over every streamed instrument.
    package var underrunFrameCount: Int { streams?.underrunFrameCount ?? 0 }
}
