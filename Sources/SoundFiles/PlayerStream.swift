import Foundation
import SamplerCore

/// The streamed sound of one player: its file, opened once, and two rings with a reader each.
/// One ring plays; the other is cued ahead at the next start position (a seek target, or the
/// file's start for a retrigger), so that the start that switches to it lands on an exact frame.
/// Once the switch frame has been rendered, the old ring is parked (or cued again).
///
/// Control thread only; callers serialize (AudioPlayer under the session lock, a patch on its
/// control loop).
package final class PlayerStream {
    package let file: StreamFile
    package let readers: [StreamReader]
    package let soundIDs: [SoundID]
    /// One pass through the file at the playback rate.
    package let frameCount: Int64
    private let streamer: DiskStreamer
    package private(set) var active = 0
    /// The position the active ring's read index holds while the ring is not playing (after a
    /// prepare or a stop): starting it again then plays on from there. nil: it must be cued.
    private var resumable: Int64?
    /// The ring that played before the last switch: after `after` is rendered, and once the
    /// render thread has confirmed that no voice reads it (`request`, asked for then), it is
    /// parked, or cued at the file's start with `recueLoops` when set.
    private var retiring: (reader: Int, after: Frame, recueLoops: Int?, request: UnreferencedRequest?)?
    /// The engine whose render thread confirms that a retiring ring is no longer read (a tail
    /// may read it longer than predicted, a late start later). nil: the switch frame is trusted.
    private let engine: Engine?
    /// The frame the current playback started on (a seek never lands before it).
    package private(set) var startFrame: Frame = .min
    private var reportedUnderruns = 0

    /// A stream of `file` through `rings` (two, with their sound ids), served by `streamer`.
    package init(file: StreamFile, rings: [(ring: StreamRing, id: SoundID)], options: StreamReaderOptions,
         streamer: DiskStreamer, engine: Engine? = nil) throws {
        precondition(rings.count == 2)
        self.engine = engine
        self.file = file
        self.streamer = streamer
        do {
            readers = try rings.map { try StreamReader(file: file, ring: $0.ring, options: options) }
        } catch { throw SamplerError("\(error)") }
        soundIDs = rings.map(\.id)
        frameCount = readers[0].frameCount
        for reader in readers { streamer.add(reader) }
    }

    /// Stops serving the rings (their owner may reuse them once no voice reads them).
    package func close() {
        for reader in readers {
            reader.park()
            streamer.remove(reader)
        }
    }

    package var activeSoundID: SoundID { soundIDs[active] }
    package var idleSoundID: SoundID { soundIDs[1 - active] }
    package var activeReader: StreamReader { readers[active] }

    /// Where playback is in the file (output frames), by the active ring's read index.
    package var position: Int64 { resumable ?? readers[active].playbackPosition }

    /// Repeats still to come for the active ring (-1 = forever).
    package var remainingLoops: Int { readers[active].remainingLoops }

    /// Frames played as silence because the disk was late, over both rings.
    package var underrunFrameCount: Int { readers.reduce(0) { $0 + $1.ring.underrunFrameCount } }

    /// Underrun frames since the previous call.
    package func takeNewUnderruns() -> Int {
        let total = underrunFrameCount
        defer { reportedUnderruns = total }
        return total - reportedUnderruns
    }

    /// Makes the active ring ready to start at `position` with `loops` repeats after this pass:
    /// continues it when it already holds that position, else cues it and waits until it is
    /// filled. Only while the player is stopped (no voice reads the ring). Returns false when the
    /// disk did not deliver in time.
    /// `idle` is called between checks (the session releases its lock there).
    package func prepare(at position: Int64, loops: Int, renderedFrame: () -> Frame, idle: () -> Void = { usleep(500) }) -> Bool {
        settle(renderedFrame: renderedFrame, idle: idle)
        if resumable == position {
            readers[active].setLoops(loops)
            return true
        }
        let reader = readers[active]
        let ticket = reader.cue(at: position, loops: loops)
        guard reader.waitUntilPrimed(ticket, idle: idle) else { return false }
        resumable = position
        return true
    }

    /// The active ring has been started on `frame`.
    package func started(at frame: Frame) {
        resumable = nil
        startFrame = frame
    }

    /// The player stopped (its voice no longer reads the ring) at file position `position`.
    package func stopped(at position: Int64) { resumable = position }

    /// The active ring played to its end (or playback was abandoned): cue it again before use.
    package func invalidate() { resumable = nil }

    /// Cues the idle ring at `position` with `loops` repeats and waits until it is filled.
    /// First waits (boundedly) for a previous switch to be rendered, since the idle ring may be
    /// the one it retires. Returns false when the disk did not deliver in time.
    package func cueIdle(at position: Int64, loops: Int, renderedFrame: () -> Frame, idle: () -> Void = { usleep(500) }) -> Bool {
        guard settle(renderedFrame: renderedFrame, idle: idle) else { return false }
        let reader = readers[1 - active]
        return reader.waitUntilPrimed(reader.cue(at: position, loops: loops), idle: idle)
    }

    /// The idle ring starts on `frame` (its start command has been sent): it becomes the active
    /// one, and the old one retires once `frame` has been rendered.
    package func switchToIdle(at frame: Frame, recueLoops: Int? = nil, tail: Frame = 0) {
        // Asked now: every command naming the old ring has been sent (the start that replaces
        // it names the new one), and the render thread answers while it renders on, so a caller
        // that renders on its own thread (a ManualDevice) does not wait for a render it supplies.
        retiring = (active, frame + tail, recueLoops, engine?.requestUnreferenced(soundIDs[active]))
        active = 1 - active
        resumable = nil
        startFrame = max(startFrame, frame)
    }

    /// Whether the last switch's frame has been rendered and the old ring is free (retiring it
    /// then).
    @discardableResult
    package func maintain(renderedFrame: Frame) -> Bool {
        guard var r = retiring else { return true }
        guard renderedFrame > r.after else { return false }
        if let engine {
            // The request made at the switch; made here only if there was none then.
            if r.request == nil {
                r.request = engine.requestUnreferenced(soundIDs[r.reader])
                retiring = r
            }
            guard let request = r.request, engine.isUnreferenced(request) else { return false }
        }
        if let loops = r.recueLoops {
            readers[r.reader].cue(at: 0, loops: loops)
        } else {
            readers[r.reader].park()
        }
        retiring = nil
        return true
    }

    /// Whether a switch is still waiting for its frame.
    package var isSwitching: Bool { retiring != nil }

    @discardableResult
    private func settle(renderedFrame: () -> Frame, timeout: Double = 2, idle: () -> Void) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !maintain(renderedFrame: renderedFrame()) {
            if Date() > deadline { return false }
            idle()
        }
        return true
    }
}
