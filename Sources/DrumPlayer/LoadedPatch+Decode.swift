import Foundation
import Locking
import Patches
import SamplerCore
import SoundFiles
import Synchronization

// Decoding a kit's sounds: its distinct sounds in parallel, and a streamed sample cut to its head.

/// A load running on another thread, as the thread that asked for it sees it: how many of its
/// files are decoded, and a way to cancel it (files not begun are left undecoded, and the
/// load throws). Any thread.
package final class LoadControl: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let done = Atomic<Int>(0)
    private let total = Atomic<Int>(0)

    package init() {}

    package func cancel() { cancelled.store(true, ordering: .relaxed) }
    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    /// Files decoded, and files to decode (0 until the kit is read).
    package var progress: (files: Int, of: Int) { (done.load(ordering: .relaxed), total.load(ordering: .relaxed)) }

    func begin(files: Int) { total.store(files, ordering: .relaxed) }
    func fileDone() { done.add(1, ordering: .relaxed) }
}

extension LoadedPatch {
    /// One distinct sound of a kit to decode: a sample as an instrument plays it (tuned,
    /// trimmed, delayed, looped).
    struct DecodeJob: Sendable {
        let instrument: Int
        let sample: SampleFile
        /// Where the kit names it first (for errors).
        let place: String
    }

    /// What a job gives: the sound its voices play, and the whole sample they go on in once
    /// released where it loops until its release.
    struct DecodedSounds: Sendable {
        let played: Sound
        let whole: Sound?
        /// Set when `played` is only the head of the sound (and one frame more), its tail read
        /// per voice: the whole sound's frames and largest |sample|, and where it loops from
        /// when it loops forever (`TailSource.loopStart`).
        var tail: (frames: Int, peak: Float, loopStart: Int?)? = nil
        /// Set for a head of a file played as it is but for its loop, which repeats forever
        /// (`playsFileLoopedAsItIs`): the whole file's frames at the kit's rate, from which
        /// the filler reads the first pass (the loop's repeats follow from what it read).
        var loopedFileFrames: Int? = nil
    }

    /// Decodes `jobs`, a file's jobs one after another (its untuned decode shared by its tunings)
    /// and different files on as many threads as there are processors; a file over 32 MB on
    /// disk decodes while no other large one does (each holds its samples up to three times
    /// while it converts: the decode budget counts them once). Each result is in its job's place;
    /// a failure is the job's place and the error, and files not begun after a failure are left
    /// nil. Control thread (it waits for its helpers).
    static func decode(_ jobs: [DecodeJob], kit: Patch, sampleRate: Double, root: String?,
                       showsProgress: Bool, headFrames: Int? = nil, heads: HeadMemory? = nil,
                       control: LoadControl? = nil) -> [Result<DecodedSounds, SamplerError>?] {
        var byFile: [String: [Int]] = [:]
        var files: [[Int]] = []
        for (j, job) in jobs.enumerated() {
            let file = job.sample.data.map { "data:\($0.count):\($0.hashValue)" } ?? job.sample.resolvedPath
            if byFile[file] == nil { byFile[file] = [] }
            byFile[file]!.append(j)
        }
        for (_, indices) in byFile { files.append(indices) }
        files.sort { $0[0] < $1[0] }
        let results = Locked([Result<DecodedSounds, SamplerError>?](repeating: nil, count: jobs.count))
        let instruments = kit.instruments
        let progress = LoadProgress(files: files.map { jobs[$0[0]].sample }, enabled: showsProgress)
        let failed = Atomic<Bool>(false)
        let large = CheckedLock("one large file decoding at a time")
        control?.begin(files: files.count)
        let work = { @Sendable (indices: [Int], jobs: [DecodeJob]) in
            guard !failed.load(ordering: .relaxed), control?.isCancelled != true else { return }
            let loader = SoundFileLoader(targetSampleRate: sampleRate)
            var untuned: Sound?
            let size = LoadProgress.size(of: jobs[indices[0]].sample)
            func decodeFile() {
            for j in indices {
                let job = jobs[j]
                let outcome = Result<DecodedSounds, SamplerError> { () throws(SamplerError) in
                    do {
                        // A file played as it is, or as it is but for a loop that repeats forever: only its
                        // head is read (converted as far as it needs at another rate), and a loop placed at
                        // the kit's rate as `looped` places it in the whole.
                        let instrument = instruments[job.instrument]
                        if let headFrames, job.sample.loading != .preload,
                           Self.playsFileAsItIs(job.sample, instrument) || Self.playsFileLoopedAsItIs(job.sample, instrument),
                           let (head, fileFrames, nativeFrames) = try loader.loadHead(path: job.sample.resolvedPath, root: root, frames: headFrames + 1,
                                                                                     accepting: (4 * headFrames + 1)...max(4 * headFrames + 1, Self.longestStreamed),
                                                                                     memory: heads),
                           fileFrames > 4 * headFrames, fileFrames <= Self.longestStreamed {
                            var result = DecodedSounds(played: head, whole: nil)
                            guard let loop = job.sample.loop else {
                                result.tail = (fileFrames, .infinity, nil)
                                return result
                            }
                            let placed = Self.loopPlace(loop, fileFrames: fileFrames, nativeFrames: nativeFrames)
                            if loop.upperBound < nativeFrames, placed.end > 4 * headFrames {
                                result.tail = (placed.end, .infinity, placed.start)
                                result.loopedFileFrames = fileFrames
                                return result
                            }
                        }
                        let sounds = try Self.decode(job.sample, of: instruments[job.instrument], sampleRate: sampleRate, root: root,
                                                     loader: loader, untuned: &untuned)
                        guard let headFrames else { return sounds }
                        // A sound made whole (tuned, trimmed, …) is made again for each note's
                        // tail: up to 30 s.
                        let asItIs = Self.playsFileAsItIs(job.sample, instruments[job.instrument])
                        return try Self.head(of: sounds, frames: headFrames, instrument: instruments[job.instrument], sample: job.sample, memory: heads,
                                             longest: asItIs ? Self.longestStreamed : Int(Self.longestMadeWholeSeconds * sampleRate))
                    } catch {
                        throw SamplerError("\(job.place): \(error)")
                    }
                }
                if case .failure = outcome { failed.store(true, ordering: .relaxed) }
                results.withLock { $0[j] = outcome }
            }
            }
            if size > 32 << 20 { large.withLock { decodeFile() } } else { decodeFile() }
            progress.fileDone(size: size)
            control?.fileDone()
        }
        let threads = min(files.count, max(1, ProcessInfo.processInfo.activeProcessorCount))
        if threads <= 1 {
            for indices in files { work(indices, jobs) }
        } else {
            let next = Locked(0)
            let all = files
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                while true {
                    let k = next.withLock { n -> Int in defer { n += 1 }; return n }
                    guard k < all.count else { return }
                    work(all[k], jobs)
                }
            }
        }
        if !failed.load(ordering: .relaxed) { progress.finish() }
        return results.withLock { $0 }
    }

    /// The sound `instrument` plays for `sample`, decoded at `sampleRate`.
    static func decode(_ sample: SampleFile, of instrument: DrumInstrument, sampleRate: Double, root: String?,
                       loader: SoundFileLoader, untuned: inout Sound?) throws -> DecodedSounds {
        let sound: Sound
        var nativeFrames = 0
        if sample.isTrimmed {
            (sound, nativeFrames) = try Self.trimmed(sample, sampleRate: sampleRate, root: root)
        } else {
            sound = try untuned ?? loader.load(path: sample.resolvedPath, root: root)
            untuned = sound
        }
        var tuned = try PatchProgram.tuned(sound, semitones: instrument.tune)
        let delay = Self.delayFrames(instrument, sampleRate: sampleRate)
        // Looping until released: the loop is the start of the whole sample, which a released
        // voice goes on in.
        if let loop = sample.loop, !sample.reverse, nativeFrames > 0 {
            let looped = Self.looped(tuned, loop: loop, offset: sample.offset, nativeFrames: nativeFrames)
            if instrument.loopsUntilRelease, looped.frameCount < tuned.frameCount {
                let full = delay > 0 ? try Self.delayed(tuned, by: delay) : tuned
                return DecodedSounds(played: Sound(slicing: full, from: 0, count: looped.frameCount + delay,
                                                   loopStart: looped.loopStart + delay), whole: full)
            }
            tuned = looped
        }
        if delay > 0 { tuned = try Self.delayed(tuned, by: delay) }
        return DecodedSounds(played: tuned, whole: nil)
    }

    /// Whether `instrument` plays `sample`'s file as it is from its start, once through: not
    /// trimmed, reversed, looped, tuned, delayed or started at a random offset, and on disk
    /// (not held in the patch).
    static func playsFileAsItIs(_ sample: SampleFile, _ instrument: DrumInstrument) -> Bool {
        sample.data == nil && !sample.isTrimmed && !sample.reverse && sample.loop == nil && instrument.tune == 0
            && instrument.delay == 0 && instrument.randomDelay == 0 && instrument.randomOffset == 0 && instrument.loops == 0
            && !instrument.loopsUntilRelease
    }

    /// Whether `instrument` plays `sample`'s file as it is from its start but for its loop, which
    /// it repeats forever (SFZ's loop_continuous): not offset, cut short, reversed, tuned,
    /// delayed or started at a random offset, and on disk. Its first pass is the whole file's
    /// conversion's frames (the file read to its end would give them too), its repeats copies.
    static func playsFileLoopedAsItIs(_ sample: SampleFile, _ instrument: DrumInstrument) -> Bool {
        sample.loop != nil && sample.data == nil && sample.offset == 0 && sample.end == nil && !sample.reverse && instrument.tune == 0
            && instrument.delay == 0 && instrument.randomDelay == 0 && instrument.randomOffset == 0 && instrument.loops < 0
            && !instrument.loopsUntilRelease
    }

    /// Where `loop` (frames of a file of `nativeFrames` frames) lies in the file converted to
    /// `fileFrames`, as `looped` places it: its first frame, and the frame after its last.
    static func loopPlace(_ loop: ClosedRange<Int>, fileFrames: Int, nativeFrames: Int) -> (start: Int, end: Int) {
        let scale = Double(fileFrames) / Double(nativeFrames)
        let start = Int((Double(loop.lowerBound) * scale).rounded())
        let count = Int((Double(loop.upperBound + 1) * scale).rounded())
        return (start, max(start + 1, count))
    }

    /// No file played as it is is too long to stream: its tail plays through a ring
    /// (`tailRingSeconds`).
    static let longestStreamed = Int.max

    /// A sound the filler makes whole for each note's tail (tuned, trimmed, reversed: the file
    /// is not played as it is) streams only up to this long; a longer one stays whole in memory.
    static let longestMadeWholeSeconds = 30.0

    /// Each voice that streams reads its tail through a ring this long (rounded up to whole
    /// pages): the filler reads up to half a second ahead of a voice, and never a ring's length
    /// past it.
    static let tailRingSeconds = 2.5

    /// The fastest rate of `definitions`' voices (`fastestRate`), and at least four times their
    /// sounds' rate, as commands may set and the render thread asks the filler to read for.
    static func fastestTailRate(_ definitions: [InstrumentDefinition]) -> Float {
        max(4, definitions.map(\.fastestRate).max() ?? 4)
    }

    /// The shortest ring in which a voice at `rate` times its sound's rate cannot outrun the
    /// filler at `period`-frame periods: four periods of it (the render thread asks for two
    /// periods ahead, and the filler may be a period or two late). 0 when the period is not known.
    static func ringFramesForFastestVoice(rate: Float, period: Int) -> Int {
        guard period > 0 else { return 0 }
        return Int(min(Double(1 << 30), (4 * Double(rate) * Double(period)).rounded(.up)))
    }

    /// Rings sized for the fastest voice are at most four times the default ring
    /// (`tailRingSeconds`: 10 s): a kit whose voices could go faster still loads, with a warning
    /// (such a voice ends where it outruns its ring, counted).
    static let longestRingForFastestVoiceSeconds = 4 * tailRingSeconds

    /// `sounds` with only its first `frames` (and one more) in memory, when the sound is long
    /// enough (four heads, at most `longest` frames), not marked `"preload": true`, and its voices
    /// play it from its start (no random offset into it) either straight through once, or
    /// looping forever where the sample's loop says (its tail then repeats the loop); otherwise
    /// `sounds` as it is.
    static func head(of sounds: DecodedSounds, frames: Int, instrument: DrumInstrument, sample: SampleFile,
                     memory: HeadMemory? = nil, longest: Int) throws -> DecodedSounds {
        let played = sounds.played
        // Looping forever on the sample's loop, to the end of the sound played (a loop that
        // ends before it is released, as SFZ's loop_sustain, stays whole).
        let loopsForever = sample.loop != nil && instrument.loops < 0 && !instrument.loopsUntilRelease
        let once = sample.loop == nil && instrument.loops == 0 && !instrument.loopsUntilRelease && played.loopStart == 0
        guard sounds.whole == nil, sample.loading != .preload, once || loopsForever, instrument.randomOffset == 0, instrument.randomDelay == 0,
              played.frameCount > 4 * frames, played.frameCount <= longest else { return sounds }
        let count = frames + 1
        var channels = [Array(UnsafeBufferPointer(start: played.left, count: count))]
        if played.channelCount == 2 { channels.append(Array(UnsafeBufferPointer(start: played.right, count: count))) }
        let head = try Sound(channels: channels, sampleRate: played.sampleRate, memory: memory)
        var result = DecodedSounds(played: head, whole: nil)
        result.tail = (played.frameCount, played.peak, loopsForever ? played.loopStart : nil)
        return result
    }
}
