import JACKBackend
import SamplerCore
import Scheduling

/// A patch's song or pattern in an Ableton Link session (`sampler play --link`): every section at
/// the session's tempo, started on a bar of the session (the quantum is the first pattern's bar),
/// stopped and started with it, and re-anchored when the session's tempo or phase moves. A change
/// reaches the notes not yet sent (the feeder sends about 0.1 s ahead). Control thread only.
final class PatchLinkTrack {
    let link: LinkSession
    let patterns: [SequencePattern]
    let sections: [SongSection]
    let loops: Bool
    let quantum: Double
    var client: JACKClient?
    var sampleRate = 48000.0

    private var current: SongSequencer?
    private var pending: (from: Frame, sequencer: SongSequencer?)?
    private(set) var producedBefore: Frame = .min
    /// The grid the notes follow: its tempo, the (fractional) frame of the song's start and the
    /// session's beat there; nil while not playing.
    private var anchor: (tempo: Double, origin: Double, startBeat: Double)?

    init(link: LinkSession, patterns: [SequencePattern], sections: [SongSection], loops: Bool) {
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
        link.start(atHostTime: LinkSession.hostTime(ofFrame: at, client: client, sampleRate: sampleRate), quantum: quantum)
    }

    var isPlaying: Bool { anchor != nil }

    /// The section, bar and beat at `frame`, as far as is known.
    func position(at frame: Frame) -> SongPosition? {
        if let pending, frame >= pending.from { return pending.sequencer?.position(at: frame) }
        return current?.position(at: frame)
    }

    func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        if let p = pending, p.from < horizon {
            current?.produce(before: p.from, body)
            current = p.sequencer
            pending = nil
        }
        current?.produce(before: horizon, body)
        producedBefore = max(producedBefore, horizon)
    }

    /// From `frame` on (not yet produced), `sequencer` plays instead.
    private func hand(over frame: Frame, to sequencer: SongSequencer?) {
        if frame <= producedBefore {
            current = sequencer
            pending = nil
        } else {
            pending = (frame, sequencer)
        }
    }

    /// Matches the notes to the session's timeline (each tick).
    func follow(engine: Engine) {
        guard let client else { return }
        let grid = link.grid(client: client, sampleRate: sampleRate, quantum: quantum)
        let timeline = grid.timeline
        let earliest = max(LinkSession.earliestFrame(client: client), producedBefore)
        guard timeline.isPlaying else {
            if anchor != nil {
                hand(over: earliest, to: nil)
                anchor = nil
            }
            return
        }
        let startBeat: Double
        if let anchor {
            startBeat = anchor.startBeat
            let origin = grid.frame(atBeat: startBeat)
            if abs(anchor.tempo - timeline.tempo) <= 1e-9 * timeline.tempo,
               abs(origin - anchor.origin) <= LinkSession.tolerance(sampleRate: sampleRate) { return }
        } else {
            // From the session's first bar at or after its start (a bar starting on the start's
            // frame, give or take JACK's time estimate, is that bar) that can still be reached.
            let start = max(Double(earliest), grid.frame(atHostTime: timeline.playingChangeTime)) - LinkSession.tolerance(sampleRate: sampleRate)
            var beat = (grid.beat(atFrame: Frame(start.rounded(.down))) / quantum).rounded(.up) * quantum
            if grid.frame(atBeat: beat).rounded() < Double(earliest) { beat += quantum }
            startBeat = beat
        }
        let origin = grid.frame(atBeat: startBeat)
        let tempo = min(1000, max(1, timeline.tempo))
        var sequencer = SongSequencer(patterns: patterns, sections: sections.map { SongSection(pattern: $0.pattern, repeats: $0.repeats, tempo: tempo) },
                                      loops: loops, sampleRate: sampleRate, origin: Frame(origin.rounded()))
        // A re-anchor hands over at the first frame not yet sent: what falls before it was played
        // on the grid before. A start hands over on its first bar.
        let from = anchor == nil ? max(earliest, Frame(origin.rounded())) : earliest
        sequencer.produce(before: from) { _ in }
        hand(over: from, to: sequencer)
        anchor = (timeline.tempo, origin, startBeat)
    }
}

/// The feeder's view of a `PatchLinkTrack`: endless (the session decides).
struct PatchLinkSource: TriggerSource {
    let track: PatchLinkTrack
    var endFrame: Frame? { nil }
    mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) { track.produce(before: horizon, body) }
}
