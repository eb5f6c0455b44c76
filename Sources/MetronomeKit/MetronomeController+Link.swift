import JACKBackend
import ProgramHost
import SamplerCore
import Scheduling
import Sync

/// The metronome in an Ableton Link session (`--link`): each tick reads the session's timeline
/// and, when it no longer matches the clicks being sent (another tempo, a phase moved, a start or
/// a stop), re-anchors them. A click leaves the output port at the host time of its Link beat:
/// its device frame is the beat's host time through JACK's clock, less the port's playback
/// latency. Control thread only.
extension MetronomeController {
    /// Link's quantum: a bar of the meter, counted in quarter notes (Link's beats).
    var linkQuantum: Double {
        let meter = settings.map.sections[0].meter
        return Double(meter.beats) * 4 / Double(meter.denominator)
    }

    /// The time on Link's clock at which device frame `frame` leaves the output port.
    func linkHostTime(ofFrame frame: Frame) -> Int64 {
        guard let link else { return 0 }
        guard let client else { return link.hostTimeNow }
        return link.hostTime(ofFrame: frame, client: client, sampleRate: sampleRate)
    }

    /// The first frame a change can still reach.
    func linkEarliestFrame(engine: Engine) -> Frame {
        client.map(LinkSession.earliestFrame) ?? engine.renderedFrame + 512
    }

    var linkIsPlaying: Bool {
        guard let link, let client else { return false }
        return link.grid(client: client, sampleRate: sampleRate, quantum: linkQuantum).timeline.isPlaying
    }

    /// Matches the clicks to the session's timeline.
    func followLink(engine: Engine, feeder: inout CommandFeeder) {
        guard let link, let client else { return }
        let quantum = linkQuantum
        let grid = link.grid(client: client, sampleRate: sampleRate, quantum: quantum)
        let timeline = grid.timeline
        let earliest = linkEarliestFrame(engine: engine)
        let rate = sampleRate

        guard timeline.isPlaying else {
            if linkAnchor != nil || running {
                let at = max(earliest, Frame(grid.frame(atHostTime: timeline.playingChangeTime).rounded(.up)))
                track.stop(at: at)
                cancelSent(from: at, engine: engine)
                linkAnchor = nil
                running = false
            }
            return
        }
        if let pending = linkPendingTempo, abs(pending.bpm - timeline.tempo) < 1e-9 * pending.bpm { linkPendingTempo = nil }
        let framesPerBeat = grid.framesPerBeat
        var first = earliest
        if linkAnchor == nil {
            // From the start (a beat on the start's frame, give or take JACK's time estimate,
            // plays), or the first frame still reachable.
            let start = grid.frame(atHostTime: timeline.playingChangeTime) - LinkSession.tolerance(sampleRate: rate)
            first = max(earliest, Frame(start.rounded(.up)))
        }
        // The bar holding `first` and the (fractional) frame of its first beat.
        let bar = (grid.beat(atFrame: first) / quantum).rounded(.down)
        let barFrame = grid.frame(atBeat: bar * quantum)
        if let a = linkAnchor, abs(a.tempo - timeline.tempo) <= 1e-9 * timeline.tempo {
            let predicted = a.barFrame + (bar - a.bar) * quantum * framesPerBeat
            if abs(predicted - barFrame) <= LinkSession.tolerance(sampleRate: rate) { return }
        }

        // Re-anchor from `first`. Clicks already sent from there on are withdrawn; the click
        // of the new grid that stands for the last one played is not played again.
        var handover = first
        if linkAnchor != nil {
            cancelSent(from: first, engine: engine)
            let denominator = Double(settings.map.sections[0].meter.denominator)
            let unit = framesPerBeat * 4 / denominator / Double(settings.subdivision)
            let sentBefore = sent.filter { $0.frame < first && $0.player != Metronome.clockPlayer }.map(\.frame).max()
            if let last = sentBefore ?? lastRenderedClick {
                let nearest = barFrame + ((Double(last) - barFrame) / unit).rounded() * unit
                if abs(nearest - Double(last)) < unit / 2 { handover = max(first, Frame((nearest + unit / 2).rounded())) }
            }
        }
        let section = settings.map.sections[0]
        guard let map = try? TempoMap.constant(bpm: min(TempoMap.tempoRange.upperBound, max(TempoMap.tempoRange.lowerBound, timeline.tempo)),
                                               meter: section.meter, pattern: section.pattern, volume: section.volume) else { return }
        let origin = Frame(barFrame.rounded(.down))
        let metronome = Metronome(timing: TempoMapTiming(map: map, sampleRate: rate), origin: origin, phase: barFrame - Double(origin),
                                  subdivision: settings.subdivision, subdivisionVelocity: settings.subdivisionVelocity,
                                  startingAt: handover, barNumberOffset: Int(bar))
        track.hand(over: handover, to: metronome)
        linkAnchor = (timeline.tempo, barFrame, bar)
        running = true
        // What is due before the horizon already reached goes out now, not on the next tick.
        feeder.feed(engine, before: track.producedBefore)
    }
}
