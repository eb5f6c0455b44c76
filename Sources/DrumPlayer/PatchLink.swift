import JACKBackend
import ProgramHost
import SamplerCore
import Scheduling
import Sync

/// A patch's song or pattern in an Ableton Link session (`sampler play --link`): every section at
/// the session's tempo, started on a bar of the session (the quantum is the first pattern's bar),
/// stopped and started with it, and re-anchored when the session's tempo or phase moves: the notes
/// already sent from two periods ahead on are withdrawn and sent again on the new grid, by their
/// place in the music (a streamed instrument's are not withdrawn: its new grid begins after what
/// was sent, about 0.1 s ahead). Control thread only.
final class PatchLinkTrack {
    let link: LinkSession
    let patterns: [SequencePattern]
    let sections: [SongSection]
    let loops: Bool
    let quantum: Double
    var client: JACKClient?
    var sampleRate = 48000.0
    /// Instruments whose triggers are not withdrawn (streamed: a withdrawn trigger would leave
    /// its ring cued for nothing).
    var streamed: Set<Int> = []
    /// Frames of the triggers sent and not yet rendered (for choosing a handover frame clear of
    /// every note).
    private var sentFrames: [Frame] = []
    /// A streamed instrument's triggers on the new grid before this frame are not sent (its
    /// old ones there stand).
    private var streamedFrom: Frame = .min

    private var current: SongSequencer?
    private var pending: (from: Frame, sequencer: SongSequencer?)?
    private(set) var producedBefore: Frame = .min
    /// The grid the notes follow: its tempo, the (fractional) frame of the song's start and the
    /// session's beat there; nil while not playing.
    private var anchor: (tempo: Double, origin: Double, startBeat: Double)?

    let instrumentCount: Int

    init(link: LinkSession, patterns: [SequencePattern], sections: [SongSection], loops: Bool, instrumentCount: Int) {
        self.instrumentCount = instrumentCount
        self.link = link
        self.patterns = patterns
        self.sections = sections
        self.loops = loops
        quantum = Double(patterns[sections[0].pattern].beatsPerBar)
    }

    /// Asks the session to play from `frame` (beat 0 there when alone).
    func requestStart(at frame: Frame) {
        guard let client else { return }
        // Late enough for the first tick's `follow` to reach it.
        let at = max(frame, LinkSession.earliestFrame(client: client) + Frame(client.bufferSize))
        link.start(atHostTime: link.hostTime(ofFrame: at, client: client, sampleRate: sampleRate), quantum: quantum)
    }

    var isPlaying: Bool { anchor != nil }

    /// The section, bar and beat at `frame`, as far as is known.
    func position(at frame: Frame) -> SongPosition? {
        if let pending, frame >= pending.from { return pending.sequencer?.position(at: frame) }
        return current?.position(at: frame)
    }

    func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        let send = { (t: Trigger) in
            if t.frame < self.streamedFrom && self.streamed.contains(t.player) { return }
            self.sentFrames.append(t.frame)
            body(t)
        }
        if let p = pending, p.from < horizon {
            current?.produce(before: p.from, send)
            current = p.sequencer
            pending = nil
        }
        current?.produce(before: horizon, send)
        producedBefore = max(producedBefore, horizon)
    }

    /// Matches the notes to the session's timeline (each tick).
    func follow(engine: Engine) {
        guard let client else { return }
        let grid = link.grid(client: client, sampleRate: sampleRate, quantum: quantum)
        let timeline = grid.timeline
        let tolerance = LinkSession.tolerance(sampleRate: sampleRate)
        sentFrames.removeAll { $0 < engine.renderedFrame }
        // The first frame a change reaches, moved clear of the notes sent (a note within a few
        // frames of it is the old grid's or the new one's, not both).
        var earliest = LinkSession.earliestFrame(client: client)
        while sentFrames.contains(where: { abs($0 - earliest) <= 3 }) { earliest += 4 }
        guard timeline.isPlaying else {
            if anchor != nil {
                // From the stop's frame, or the first one still reachable.
                let at = max(earliest, Frame(grid.frame(atHostTime: timeline.playingChangeTime).rounded(.up)))
                withdraw(from: at, engine: engine)
                hand(over: at, to: nil, silencing: false)
                anchor = nil
            }
            return
        }
        let tempo = min(1000, max(1, timeline.tempo))
        let framesPerBeat = 60 * sampleRate / tempo
        let startBeat: Double
        var from: Frame
        if let anchor {
            startBeat = anchor.startBeat
            let origin = grid.frame(atBeat: startBeat)
            if abs(anchor.tempo - timeline.tempo) <= 1e-9 * timeline.tempo, abs(origin - anchor.origin) <= tolerance { return }
            // The notes from `earliest` on are withdrawn and played on the new grid from the same
            // place in the music; a streamed instrument's from where its sending stopped.
            withdraw(from: earliest, engine: engine)
            let oldFramesPerBeat = 60 * sampleRate / min(1000, max(1, anchor.tempo))
            func newFrame(ofOld frame: Frame) -> Frame {
                let beats = (Double(frame) - anchor.origin) / oldFramesPerBeat
                return Frame((origin + beats * framesPerBeat).rounded())
            }
            from = newFrame(ofOld: earliest)
            streamedFrom = newFrame(ofOld: producedBefore)
            if from < LinkSession.earliestFrame(client: client) - Frame(client.bufferSize) {
                // The grid jumped back further than can be reached: from the first reachable frame.
                from = LinkSession.earliestFrame(client: client)
            }
        } else {
            // From the session's first bar at or after its start (a bar starting on the start's
            // frame, give or take JACK's time estimate, is that bar) that can still be reached.
            let start = max(Double(earliest), grid.frame(atHostTime: timeline.playingChangeTime)) - tolerance
            var beat = (grid.beat(atFrame: Frame(start.rounded(.down))) / quantum).rounded(.up) * quantum
            if grid.frame(atBeat: beat).rounded() < Double(earliest) { beat += quantum }
            startBeat = beat
            from = max(earliest, Frame(grid.frame(atBeat: beat).rounded()))
            streamedFrom = .min
        }
        let origin = grid.frame(atBeat: startBeat)
        var sequencer = SongSequencer(patterns: patterns, sections: sections.map { SongSection(pattern: $0.pattern, repeats: $0.repeats, tempo: tempo) },
                                      loops: loops, sampleRate: sampleRate, origin: Frame(origin.rounded()))
        sequencer.produce(before: from) { _ in }
        hand(over: from, to: sequencer, silencing: true)
        anchor = (timeline.tempo, origin, startBeat)
    }

    /// Withdraws the triggers sent for `frame` or later (but a streamed instrument's).
    private func withdraw(from frame: Frame, engine: Engine) {
        for i in 0..<instrumentCount where !streamed.contains(i) {
            engine.send(.cancelPendingTriggers(instrument: i, from: frame))
        }
        sentFrames.removeAll { $0 >= frame }
    }

    /// From `frame` on `sequencer` plays instead: at once when `frame` was produced already.
    /// With `silencing`, the grid before sends nothing more (a re-anchor: what it sent from the
    /// change on was withdrawn, and the new grid starts from that place in the music even when
    /// its frame comes later); without, it plays up to `frame` (a stop).
    private func hand(over frame: Frame, to sequencer: SongSequencer?, silencing: Bool) {
        if silencing { current = nil }
        if frame <= producedBefore {
            current = sequencer
            pending = nil
            // Produced again from `frame`; the next feed sends it.
            producedBefore = frame
        } else {
            pending = (frame, sequencer)
        }
    }
}

/// The feeder's view of a `PatchLinkTrack`: endless (the session decides).
struct PatchLinkSource: TriggerSource {
    let track: PatchLinkTrack
    var endFrame: Frame? { nil }
    mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) { track.produce(before: horizon, body) }
}
