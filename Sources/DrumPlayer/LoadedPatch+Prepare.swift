import Synchronization
import Foundation
import Locking
import Patches
import ProgramHost
import SamplerCore
import Scheduling
import SoundFiles
import Sync

// The first half of a load, on any thread: a kit's samples decoded, not yet registered, and what
// a later load may take over from it.

extension LoadedPatch {
    /// What makes two samples of a kit one sound: the file (or the bytes held in the patch),
    /// its trim, direction and loop, and what the instrument does to it (tuning, delay, loops).
    /// The same in two kits of one process: a load reuses the sounds it shares with the kit it
    /// replaces (`prepare`'s `known`).
    static func soundKey(_ instrument: DrumInstrument, _ sample: SampleFile, tune: Double? = nil) -> String {
        "\(instrument.loopsUntilRelease)|\(instrument.loops)|\(instrument.randomOffset)|\(instrument.randomDelay)|\(tune ?? instrument.tune)|\(instrument.delay + instrument.randomDelay)|\(sample.data.map { "data\($0.count)-\($0.hashValue)" } ?? "")|\(sample.offset)|\(sample.end ?? -1)|\(sample.reverse)|\(String(describing: sample.loop))|\(sample.resolvedPath)"
    }

    /// A kit's samples decoded at a rate and not yet registered (`prepare`): what a load on
    /// another thread hands to the control thread, which registers them (`init(prepared:)`).
    package struct Prepared: Sendable {
        let kit: Patch
        let sampleRate: Double
        let streaming: PatchStreamingOptions
        let root: String?
        let streamFiles: [Int: StreamFile]
        let jobs: [DecodeJob]
        let jobOfKey: [String: Int]
        let decoded: [Result<DecodedSounds, SamplerError>?]
        let headFrames: Int?
        let heads: HeadMemory?
        let what: String
        /// Cents each instrument's voices are tuned by, for the instruments whose tuning their
        /// voices play (`pitchedInVoices`; `kit` has them untuned).
        let voiceTunings: [Int: Double]
        /// The sounds left undecoded because the kit being replaced has them (`known`), and
        /// each decoded file's identity when it was opened, by sound key.
        let reused: Set<String>
        let stamps: [String: FileStamp]
    }

    /// A file's identity on disk (device, inode, size, modification time): a sound decoded from
    /// it is shared by a later load only while the file is unchanged.
    package struct FileStamp: Hashable, Sendable {
        let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int

        static func of(_ path: String) -> FileStamp? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return FileStamp(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                             seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
        }
    }

    /// What a kit that replaces this one may take over instead of decoding again: its sounds
    /// held wholly in memory, by `soundKey`, with the sound it continues in (loops until
    /// release) and its file's stamp (nil: bytes held in the patch).
    /// A head (its tail streamed) has `tail`: the whole sound's frames, its peak as far as
    /// known at the load, its channels, the head's frames (one more than it plays), where the
    /// sound loops from when it loops forever, and for a looped file played as it is, the
    /// whole file's frames (`DecodedSounds.loopedFileFrames`).
    struct Shareable {
        let played: SoundID
        let whole: SoundID?
        let stamp: FileStamp?
        var tail: (frames: Int, peak: Float, channels: Int, head: Int, loopStart: Int?, loopedFileFrames: Int?)? = nil
    }

    /// A head a load may take over: its file's stamp, its frames and the whole sound's.
    package struct KnownHead: Sendable {
        let stamp: FileStamp?
        let head: Int
        let frames: Int
    }

    /// The sound keys a load that replaces this kit may take over, with their files' stamps
    /// (`prepare`'s `known`): its sounds held whole.
    package var shareableKeys: [String: FileStamp?] { shareable.filter { $0.value.tail == nil }.mapValues(\.stamp) }
    /// Its heads, which a load that streams tails may take over (`prepare`'s `knownHeads`).
    package var shareableHeadKeys: [String: KnownHead] {
        shareable.compactMapValues { s in s.tail.map { KnownHead(stamp: s.stamp, head: $0.head, frames: $0.frames) } }
    }

    /// The first half of a load, which needs no engine and may run on any thread: the kit's
    /// streamed instruments opened and its samples decoded (`headsAllowed`: the long ones cut
    /// to heads where the kit is larger than `streaming.tailsAboveBytes`). `control`, when
    /// given, counts the files decoded and stops the load when cancelled (a cancelled load
    /// throws).
    package static func prepare(_ given: Patch, sampleRate: Double, streaming: PatchStreamingOptions = .init(), headsAllowed: Bool,
                                root: String? = nil, showsProgress: Bool = false, control: LoadControl? = nil,
                                known: [String: FileStamp?] = [:], knownHeads: [String: KnownHead] = [:]) throws -> Prepared {
        var streamFiles: [Int: StreamFile] = [:]
        for (i, instrument) in given.instruments.enumerated() {
            if let file = try Self.streamFile(of: instrument, at: i, in: given, options: streaming) { streamFiles[i] = file }
        }
        // Every distinct copy counts: a trimmed or tuned sample is a copy of its own, and a tuned
        // whole file keeps its untuned decode while the kit loads.
        func bytesDecoded(_ kit: Patch) -> Int {
            var copies: [DecodeBudget.Copy] = []
            for i in kit.instruments.indices where streamFiles[i] == nil {
                let scale = Double.pow(2, -kit.instruments[i].tune / 12)
                for sample in kit.instruments[i].layers.flatMap(\.samples) where known[Self.soundKey(kit.instruments[i], sample)] == nil {
                    // A file held in the patch is named by its bytes' hash, its header read from them.
                    let header = sample.data.flatMap(DecodeBudget.header(of:))
                    let path = sample.data.map { "data:\($0.count):\($0.hashValue)" } ?? sample.resolvedPath
                    copies.append(DecodeBudget.Copy(path: path, offset: sample.offset, end: sample.end, scale: scale,
                                                    reverse: sample.reverse, leadingSeconds: kit.instruments[i].delay + kit.instruments[i].randomDelay,
                                                    header: header ?? (sample.data != nil ? DecodeBudget.Header(frames: 0, channels: 1, rate: 0) : nil)))
                    if !sample.isTrimmed, scale != 1 { copies.append(DecodeBudget.Copy(path: sample.resolvedPath)) }
                }
            }
            return DecodeBudget.decodedBytes(of: copies, sampleRate: sampleRate)
        }
        // Samples played at many pitches: held once, untuned, their voices tuned. In a kit large
        // enough to stream its tails, every tuned sample so (a resampled copy would be a head and
        // a tail of its own, the tail made whole for each note).
        func tunedInVoices(_ indices: [Int]) -> (kit: Patch, cents: [Int: Double]) {
            var kit = given
            var cents: [Int: Double] = [:]
            for i in indices {
                cents[i] = 100 * kit.instruments[i].tune
                kit.instruments[i].tune = 0
            }
            return (kit, cents)
        }
        var (kit, voiceTunings) = tunedInVoices(Self.pitchedInVoices(given, streamed: Set(streamFiles.keys)))
        var decodedBytes = bytesDecoded(kit)
        // Heads in memory, tails read per voice: a kit larger than the setting, loaded by the
        // engine's own registration.
        let streamsTails = headsAllowed && streaming.tailsAboveBytes.map { decodedBytes > $0 } == true
        if streamsTails {
            (kit, voiceTunings) = tunedInVoices(Self.pitchedInVoices(given, streamed: Set(streamFiles.keys), mostPitchesResampled: 0))
            decodedBytes = bytesDecoded(kit)
        }
        let what = kit.version == 1 ? "its sounds" : "its samples"
        let headFrames = streamsTails ? min(streaming.longestHeadFrames ?? .max,
                                            max(64, streaming.headFrames ?? kit.headFrames ?? PatchStreamingOptions.defaultHeadFrames)) : nil
        if headFrames == nil {
            do { try DecodeBudget.check(decodedBytes, what: "\(kit.file): \(what)") } catch {
                throw SamplerError("\(error)")
            }
        }
        // Every distinct sound the kit plays, decoded first (files in parallel), then registered
        // in the kit's order.
        var jobs: [DecodeJob] = []
        var jobOfKey: [String: Int] = [:]
        for (i, instrument) in kit.instruments.enumerated() where streamFiles[i] == nil {
            for (l, layer) in instrument.layers.enumerated() {
                for (s, sample) in layer.samples.enumerated() {
                    let key = Self.soundKey(instrument, sample)
                    if jobOfKey[key] == nil {
                        jobOfKey[key] = jobs.count
                        jobs.append(DecodeJob(instrument: i, sample: sample, place: Self.place(kit, i, l, s)))
                    }
                }
            }
        }
        let heads = headFrames == nil ? nil : HeadMemory()
        // The sounds the replaced kit has are not decoded again, unless their file changed
        // since; each file to decode is stamped before it is opened.
        var reused: Set<String> = []
        var stamps: [String: FileStamp] = [:]
        var decodedJobs: [Int] = []
        for (key, j) in jobOfKey {
            let sample = jobs[j].sample
            let now = sample.data == nil ? FileStamp.of(sample.resolvedPath) : nil
            if let stamp = known[key], sample.data != nil || (now != nil && stamp == now) {
                reused.insert(key)
            } else if let headFrames, let known = knownHeads[key], sample.loading != .preload, known.head == headFrames + 1,
                      known.frames > 4 * headFrames, known.frames <= Self.longestStreamed,
                      sample.data != nil || (now != nil && known.stamp == now) {
                // A head of the kit replaced, as long as this kit's, its tail streamed as this
                // kit's would be.
                reused.insert(key)
            } else {
                decodedJobs.append(j)
                if let now { stamps[key] = now }
            }
        }
        decodedJobs.sort()
        var decoded = [Result<DecodedSounds, SamplerError>?](repeating: nil, count: jobs.count)
        let some = Self.decode(decodedJobs.map { jobs[$0] }, kit: kit, sampleRate: sampleRate, root: root, showsProgress: showsProgress,
                               headFrames: headFrames, heads: heads, control: control)
        for (k, j) in decodedJobs.enumerated() { decoded[j] = some[k] }
        if control?.isCancelled == true { throw SamplerError("\(kit.file): the load was cancelled") }
        return Prepared(kit: kit, sampleRate: sampleRate, streaming: streaming, root: root, streamFiles: streamFiles, jobs: jobs,
                        jobOfKey: jobOfKey, decoded: decoded, headFrames: headFrames, heads: heads, what: what,
                        voiceTunings: voiceTunings, reused: reused, stamps: stamps)
    }

    /// A sample tuned to more pitches than this in one kit is tuned by its voices' rate (one
    /// copy of it in memory, streamed like any other); one tuned to this many or fewer is
    /// resampled at load to each pitch (the best quality: its voices play at rate 1).
    static let mostPitchesResampled = 4
    /// The most a voice is tuned up (semitones; a rate of 4): the heads of streamed sounds and
    /// the tail filler's read-ahead are sized for voices at most that fast. A tuning above it is
    /// resampled at load.
    static let highestVoiceTuning = 24.0

    /// The instruments whose tuning their voices play rather than a resampled copy: tuned ones
    /// whose samples `mostPitchesResampled` copies would not hold (a region on many keys of a
    /// melodic library; with 0, every tuned one), unless delayed (the delay's silence begins the
    /// copy, in its frames), tuned up more than `highestVoiceTuning`, or streamed through a ring
    /// (`streamed`: rate 1 only).
    static func pitchedInVoices(_ kit: Patch, streamed: Set<Int>, mostPitchesResampled: Int = mostPitchesResampled) -> [Int] {
        func candidate(_ i: Int) -> Bool {
            let instrument = kit.instruments[i]
            return !streamed.contains(i) && instrument.tune != 0 && instrument.tune <= highestVoiceTuning && instrument.delay == 0
                && instrument.randomDelay == 0
        }
        var pitches: [String: Set<Double>] = [:]
        for i in kit.instruments.indices where candidate(i) {
            for sample in kit.instruments[i].layers.flatMap(\.samples) {
                pitches[Self.soundKey(kit.instruments[i], sample, tune: 0), default: []].insert(kit.instruments[i].tune)
            }
        }
        return kit.instruments.indices.filter { i in
            candidate(i) && kit.instruments[i].layers.flatMap(\.samples).contains {
                pitches[Self.soundKey(kit.instruments[i], $0, tune: 0)]!.count > mostPitchesResampled
            }
        }
    }
}
