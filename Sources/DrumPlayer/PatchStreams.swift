import Foundation
import ProgramHost
import SamplerCore
import Scheduling
import SoundFiles
import Sync

/// How a patch's long sounds are streamed.
package struct PatchStreamingOptions: Sendable {
    /// Players whose sound is longer than this many seconds stream unless the patch says
    /// `"preload": true`; nil: only `"stream": true` players stream.
    package var threshold: Double? = 30
    /// Seconds buffered ahead of each streamed player (filled before the first start).
    package var preloadSeconds: Double = 2
    /// Converter and test hook of the readers.
    package var reader = StreamReaderOptions()
    /// When the patch's samples, decoded, come to more than this many bytes, its long samples
    /// keep only their first `headFrames` in memory and the rest is read from disk for each
    /// voice (`TailFiller`); nil: never.
    package var tailsAboveBytes: Int? = nil
    /// Frames of each long sample kept in memory when tails stream; nil: the patch's
    /// `"headFrames"`, else `defaultHeadFrames`.
    package var headFrames: Int? = nil
    /// Heads no longer than this, whatever `headFrames` or the patch ask: a kit loaded in place
    /// of another plays its tails through the rings the first one sized (a quarter of them).
    package var longestHeadFrames: Int? = nil
    /// sfizz's preload size: 8,192 frames (170 ms at 48 kHz) cover a disk's latency at any period.
    package static let defaultHeadFrames = 8192
    /// Voices that can play streamed tails at once (each a ring buffer, `tailRingFrames` long
    /// or as long as the longest tail).
    package var tailVoices = 64
    /// Frames of each voice's ring; nil: `LoadedPatch.tailRingSeconds` at the engine's rate.
    package var tailRingFrames: Int? = nil
    /// Where underruns are reported (a line naming the player and the frames lost); called on
    /// the control thread that feeds the engine. Default: standard error.
    package var report: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data(("sampler: " + message + "\n").utf8))
    }

    package init() {}
}

/// A patch's streamed instruments ("players" here, keyed by instrument index): two rings each, both cued at the file's start when the patch is
/// prepared. A trigger starts the cued ring; once its frame (and its declick) has been rendered
/// and the render thread has confirmed that nothing reads the ring that played before, that one
/// is cued at the start again, ready for the next trigger. Which ring a trigger takes is a
/// function of the triggers' frames, so a live run and an offline render (whatever their
/// look-ahead and block size) agree: a trigger less than `retriggerSpacing` (a quarter second)
/// plus the declick after the last switch continues the current ring (no restart, no declick);
/// one after it switches. The spacing covers the live feeder's look-ahead (0.1 s and two
/// periods) and the confirmation (a few periods) for periods up to 1,024 frames at 48 kHz. When
/// the ring is not back by then (longer periods, a control thread held up), the trigger
/// continues the current ring, and that is reported.
///
/// The rings are filled by a disk thread and, before commands are produced, topped up on the
/// feeding thread so that every ring holds the frames up to the feeder's horizon: an offline
/// render, which runs faster than any disk thread could follow, never underruns and gives the
/// same frames as a live run without underruns.
///
/// Control thread only.
final class PatchStreams {
    private let engine: Engine
    private let options: PatchStreamingOptions
    private let streamer = DiskStreamer()
    private var streams: [Int: (stream: PlayerStream, id: String, loops: Int, started: Bool, lastSwitch: Frame, spacing: Frame)] = [:]
    /// Triggers that switched later than the timeline says for want of a ring (see above).
    private(set) var lateSwitchCount = 0

    /// Seconds after a switch during which a retrigger continues the ring.
    static let retriggerSpacing = 0.25

    init(engine: Engine, options: PatchStreamingOptions) {
        self.engine = engine
        self.options = options
    }

    deinit {
        for entry in streams.values { entry.stream.close() }
        streamer.stop()
    }

    var isEmpty: Bool { streams.isEmpty }

    /// Streams `file` for player `player` (its id `id`, `loops` repeats per trigger) at
    /// `sampleRate`, buffering `preloadSeconds`; fills both rings now.
    func add(player: Int, id: String, file: StreamFile, loops: Int, sampleRate: Double, preloadSeconds: Double) throws {
        let capacity = max(Int((preloadSeconds * sampleRate).rounded()), 4096)
        let rings = try (0..<2).map { _ in
            let ring = StreamRing(capacity: capacity, channelCount: file.channelCount, sampleRate: sampleRate,
                                  memory: HugePageSampleMemory.shared)
            return (ring: ring, id: try engine.register(stream: ring))
        }
        let stream = try PlayerStream(file: file, rings: rings, options: options.reader, streamer: streamer, engine: engine)
        for reader in stream.readers { reader.cue(at: 0, loops: loops) }
        streamer.fillAll()
        streams[player] = (stream, id, loops, false, .min, Frame((Self.retriggerSpacing * sampleRate).rounded()))
    }

    func contains(player: Int) -> Bool { streams[player] != nil }

    /// The ring a trigger of `player` on `frame` starts, and whether it continues the ring
    /// already playing (then without a declick: both would read the one ring). The ring it
    /// replaces is retired (cued again) once `frame + tail` has been rendered and the render
    /// thread has confirmed that no voice reads it. Triggers come in frame order.
    func soundID(forTriggerOf player: Int, at frame: Frame, tail: Frame = 0) -> (sound: SoundID, continues: Bool) {
        guard var entry = streams[player] else { preconditionFailure("player \(player) does not stream") }
        defer { streams[player] = entry }
        if !entry.started {
            entry.started = true
            entry.lastSwitch = frame
            entry.stream.started(at: frame)
            return (entry.stream.activeSoundID, false)
        }
        guard frame - entry.lastSwitch >= entry.spacing + tail else { return (entry.stream.activeSoundID, true) }
        if entry.stream.isSwitching {
            // Retired now: cued again and filled here, before the start that plays it is sent.
            if entry.stream.maintain(renderedFrame: engine.renderedFrame) { streamer.fillAll() }
        }
        guard !entry.stream.isSwitching else {
            lateSwitchCount += 1
            options.report("stream retrigger: player \(player) (\"\(entry.id)\") continues its sound at frame \(frame): the ring it would restart on was not ready in time")
            return (entry.stream.activeSoundID, true)
        }
        entry.stream.switchToIdle(at: frame, recueLoops: entry.loops, tail: tail)
        entry.lastSwitch = frame
        return (entry.stream.activeSoundID, false)
    }

    /// Before commands up to `horizon` are produced: retires rings whose switch has been
    /// rendered, makes every ring hold the frames up to `horizon`, reports new underruns.
    func service(horizon: Frame) {
        streamer.start()
        let rendered = engine.renderedFrame
        // A ring retired now has a cue pending: its buffered count is still the old stream's
        // until the cue is applied, so it is filled here, on this thread, whatever that count
        // says; left to the disk thread, a start could read it before the cue resets it.
        var recued = false
        for entry in streams.values where entry.stream.isSwitching {
            if entry.stream.maintain(renderedFrame: rendered) { recued = true }
        }
        let needed = Int(max(0, min(Int64(Int.max), horizon - rendered)))
        if recued || streams.values.contains(where: { $0.stream.readers.contains { $0.bufferedFrames < min(needed, $0.ring.capacity) } }) {
            streamer.fillAll()
        }
        for (player, entry) in streams {
            let missing = entry.stream.takeNewUnderruns()
            if missing > 0 {
                options.report("stream underrun: player \(player) (\"\(entry.id)\") played \(missing) frames of silence; the disk was late, playback stays in time")
            }
        }
    }

    /// Frames played as silence for lack of data, over every streamed player.
    var underrunFrameCount: Int { streams.values.reduce(0) { $0 + $1.stream.underrunFrameCount } }
}

/// A trigger source that services a patch's streams before producing its triggers.
struct StreamServicingSource: TriggerSource {
    var inner: any TriggerSource
    let streams: PatchStreams

    var endFrame: Frame? { inner.endFrame }

    mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        streams.service(horizon: horizon)
        inner.produce(before: horizon, body)
    }
}
