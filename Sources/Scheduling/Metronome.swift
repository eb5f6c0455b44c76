import SamplerCore

/// The clicks of a tempo map as triggers: beats on player 0 (accent) or 1 (normal) as the
/// section's pattern says, and, with `subdivision` > 1, the notes between beats on player 2 at
/// `subdivisionVelocity`. Every trigger's velocity carries its section's volume.
///
/// The map's start (its first beat) is at device frame `origin` (plus `phase`, a fraction of a
/// frame, when the anchor came from a foreign position such as JACK's bar/beat/tick). Click `c`
/// lands on `origin + round(phase + position(c))`, its position coming from `TempoMapTiming`:
/// one rounding per click, never a sum of rounded intervals.
///
/// Control thread only.
package struct Metronome: TriggerSource {
    package static let accentPlayer = 0
    package static let normalPlayer = 1
    package static let subdivisionPlayer = 2
    /// Players the clicks need.
    package static let playerCount = 3
    /// The player MIDI clock messages are produced on (one more player than the clicks need;
    /// see `MIDIClockMessage`).
    package static let clockPlayer = 3

    /// How a metronome with MIDI clock begins.
    package enum ClockStart: Equatable, Sendable {
        /// With a song position and Start (0xFA) on its first tick when that is the music's
        /// first, else a song position and Continue (0xFB) on the first tick on a sixteenth.
        case start
        /// With ticks only: it carries on another metronome's clock (a tempo change).
        case continuation
    }
    /// Notes per beat accepted for subdivisions.
    package static let subdivisionRange = 1...16

    package let timing: TempoMapTiming
    /// The device frame of the map's first beat (before `phase`).
    package let origin: Frame
    /// A fraction of a frame added to every position before rounding (0 unless anchored to a
    /// foreign musical position).
    package let phase: Double
    /// Notes per beat (1 = beats only).
    package let subdivision: Int
    package let subdivisionVelocity: Float
    /// Stop at the first beat of this bar (counted from 0, count-in included); nil = at the end
    /// of the map.
    package let barLimit: Int?
    /// No click on or after this frame.
    package private(set) var stopFrame: Frame?
    /// Added to bar numbers shown to the user (a metronome re-anchored at bar 12 shows 12, not 1).
    package let barNumberOffset: Int
    /// MIDI clock (24 ticks per quarter note, on `clockPlayer`), nil for none. Each tick is on
    /// the frame its musical position rounds to, from the same timing as the clicks; a Stop
    /// (0xFC) follows on the music's end (not on `stop(at:)`: whoever stops it says Stop).
    package let midiClock: ClockStart?

    private var section = 0
    private var beat = 0
    private var note = 0
    private var finished = false
    // The next MIDI clock tick: its section and tick within the section.
    private var clockSection = 0
    private var clockTick = 0
    private var clockFinished = false
    private var clockAnnounced = false
    private var clockStopped = false
    /// Every click before this frame has been produced (the latest horizon asked for).
    package private(set) var producedBefore: Frame = .min

    /// - Parameters:
    ///   - startingAt: produce nothing before this frame (for a metronome anchored in the past,
    ///     e.g. joining a rolling JACK transport mid-song).
    package init(timing: TempoMapTiming, origin: Frame, phase: Double = 0, subdivision: Int = 1,
                subdivisionVelocity: Float = 0.5, barLimit: Int? = nil, stopFrame: Frame? = nil,
                startingAt first: Frame? = nil, barNumberOffset: Int = 0, midiClock: ClockStart? = nil) {
        precondition(Metronome.subdivisionRange.contains(subdivision), "subdivision out of range")
        self.midiClock = midiClock
        clockAnnounced = midiClock != .start
        self.timing = timing
        self.origin = origin
        self.phase = phase
        self.subdivision = subdivision
        self.subdivisionVelocity = subdivisionVelocity
        self.barLimit = barLimit
        self.stopFrame = stopFrame
        self.barNumberOffset = barNumberOffset
        if let first, first > origin { skip(to: first) }
        if midiClock != nil { skipClock(to: max(first ?? origin, origin)) }
    }

    /// The device frame of a position in frames from the map's start: rounded once.
    /// Positions beyond 2^62 frames (millions of years) saturate there instead of trapping.
    package func frame(atPosition position: Double) -> Frame {
        let offset = (phase + position).rounded()
        return offset < 0x1p62 ? origin + Frame(offset) : 1 << 62
    }

    /// The frame where the clicks end: the end of the map, the bar limit or the stop frame,
    /// whichever comes first; nil when endless.
    package var endFrame: Frame? {
        guard let stopFrame else { return naturalEndFrame }
        return min(naturalEndFrame ?? stopFrame, stopFrame)
    }

    /// The end of the map or the bar limit, whichever comes first (not `stopFrame`).
    package var naturalEndFrame: Frame? {
        var end: Frame?
        func take(_ f: Frame) { end = min(end ?? f, f) }
        if let length = timing.length { take(frame(atPosition: length)) }
        if let barLimit, let start = timing.start(ofBar: barLimit) { take(frame(atPosition: start)) }
        return end
    }

    /// The device frame of bar `bar`'s first beat (from 0, count-in included); nil beyond the map.
    package func frame(ofBar bar: Int) -> Frame? {
        timing.start(ofBar: bar).map(frame(atPosition:))
    }

    /// Bars of count-in at the start of the map.
    package var countInBars: Int { timing.sectionFirstBars[timing.map.countInSections] }

    package mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        let limit = min(horizon, endFrame ?? .max)
        while true {
            let click = finished ? Frame.max : currentFrame()
            let tick = midiClock == nil || clockFinished ? Frame.max : clockFrame()
            if min(click, tick) >= limit { break }
            if tick <= click {
                // On a shared frame the clock goes first (Start before the first tick).
                produceTick(at: tick, body)
            } else {
                if let trigger = currentTrigger(at: click) { body(trigger) }
                advance()
            }
        }
        if midiClock != nil, clockAnnounced, !clockStopped, let end = naturalEndFrame, end < horizon, end <= (stopFrame ?? .max) {
            clockStopped = true
            body(Trigger(frame: end, player: Metronome.clockPlayer, velocity: MIDIClockMessage.stop.velocity))
        }
        producedBefore = max(producedBefore, horizon)
    }

    // MARK: - MIDI clock

    private func clockFrame() -> Frame {
        let d = timing.map.sections[clockSection].meter.denominator
        // Tick k of a section is at quarter note k / 24, beat k × d / 96.
        return frame(atPosition: timing.position(section: clockSection, beat: clockTick * d, per: 4 * MIDIClockMessage.ticksPerQuarter))
    }

    /// Ticks in section `s` (nil: endless): one per 1/24 quarter note that starts inside it.
    private func ticks(inSection s: Int) -> Int? {
        let section = timing.map.sections[s]
        let perWhole = 4 * MIDIClockMessage.ticksPerQuarter
        return section.beatCount.map { ($0 * perWhole + section.meter.denominator - 1) / section.meter.denominator }
    }

    /// Ticks from the music's start to the next tick.
    private func clockTickIndex() -> Int {
        (0..<clockSection).reduce(clockTick) { $0 + (ticks(inSection: $1) ?? 0) }
    }

    private mutating func advanceClock() {
        clockTick += 1
        if let n = ticks(inSection: clockSection), clockTick >= n {
            clockTick = 0
            clockSection += 1
            if clockSection == timing.map.sections.count { clockFinished = true }
        }
    }

    private mutating func produceTick(at frame: Frame, _ body: (Trigger) -> Void) {
        if !clockAnnounced {
            clockAnnounced = true
            let index = clockTickIndex()
            body(Trigger(frame: frame, player: Metronome.clockPlayer, velocity: MIDIClockMessage.songPosition(index / 6).velocity))
            body(Trigger(frame: frame, player: Metronome.clockPlayer,
                         velocity: (index == 0 ? MIDIClockMessage.start : MIDIClockMessage.continue).velocity))
        }
        body(Trigger(frame: frame, player: Metronome.clockPlayer, velocity: MIDIClockMessage.tick.velocity))
        advanceClock()
    }

    /// Moves the clock to its first tick at or after `first` (for a start later in the music,
    /// to the first tick on a sixteenth note, where a song position can point).
    private mutating func skipClock(to first: Frame) {
        if let (s, _) = timing.locate(Double(first - origin) - phase) {
            clockSection = s
            clockTick = 0
        } else if Double(first - origin) - phase > 0 {
            clockFinished = true
            return
        }
        while !clockFinished && clockFrame() < first { advanceClock() }
        if midiClock == .start {
            while !clockFinished && clockTickIndex() % 6 != 0 { advanceClock() }
        }
    }

    /// No click on or after `frame` (clicks already produced are the caller's to cancel).
    package mutating func stop(at frame: Frame) {
        stopFrame = min(stopFrame ?? frame, frame)
    }

    private func currentFrame() -> Frame {
        frame(atPosition: timing.position(section: section, beat: beat * subdivision + note, per: subdivision))
    }

    private func currentTrigger(at frame: Frame) -> Trigger? {
        let s = timing.map.sections[section]
        let volume = Float(s.volume)
        if note > 0 {
            return Trigger(frame: frame, player: Metronome.subdivisionPlayer, velocity: volume * subdivisionVelocity)
        }
        switch s.kind(ofBeat: beat % s.meter.beats) {
        case .accent: return Trigger(frame: frame, player: Metronome.accentPlayer, velocity: volume)
        case .normal: return Trigger(frame: frame, player: Metronome.normalPlayer, velocity: volume)
        case .silent: return nil
        }
    }

    private mutating func advance() {
        note += 1
        guard note == subdivision else { return }
        note = 0
        beat += 1
        if let n = timing.map.sections[section].beatCount, beat >= n {
            beat = 0
            section += 1
            if section == timing.map.sections.count { finished = true }
        }
    }

    /// Moves the cursor to the first click at or after `first` without producing anything.
    private mutating func skip(to first: Frame) {
        let position = Double(first - origin) - phase
        if let (s, b) = timing.locate(position) {
            section = s
            beat = max(0, Int(b) - 1)
            note = 0
        } else if position > 0 {
            finished = true
            return
        }
        while !finished && currentFrame() < first { advance() }
    }

    // MARK: - Where the music is

    /// A musical position for the status line.
    package struct Position: Equatable, Sendable {
        /// Bar number as shown (from 1; count-in bars count separately from 1).
        package var bar: Int
        /// Beat within the bar, from 1.
        package var beat: Int
        package var beatsPerBar: Int
        /// Tempo in quarter notes per minute at this point.
        package var tempo: Double
        package var isCountIn: Bool
        /// The bar's index from the map's start (count-in included), from 0.
        package var barIndex: Int
    }

    /// Where device frame `frame` is in the music; nil before the first beat or after the end.
    package func position(at frame: Frame) -> Position? {
        guard let (s, b) = timing.locate(Double(frame - origin) - phase) else { return nil }
        let section = timing.map.sections[s]
        let beatIndex = Int(b)
        let barIndex = timing.sectionFirstBars[s] + beatIndex / section.meter.beats
        let countIn = countInBars
        return Position(bar: section.isCountIn ? barIndex + 1 : barIndex - countIn + 1 + barNumberOffset,
                        beat: beatIndex % section.meter.beats + 1, beatsPerBar: section.meter.beats,
                        tempo: timing.tempo(inSection: s, atBeat: b), isCountIn: section.isCountIn, barIndex: barIndex)
    }

    /// The first bar (index from 0) whose first beat is on or after `frame` and after every click
    /// produced so far, with that beat's frame; nil when the map ends first.
    package func nextBar(notBefore frame: Frame) -> (bar: Int, frame: Frame)? {
        let target = max(frame, producedBefore)
        var bar = 0
        if let (s, b) = timing.locate(Double(target - origin) - phase) {
            bar = timing.sectionFirstBars[s] + Int(b) / timing.map.sections[s].meter.beats
        } else if Double(target - origin) - phase > 0 {
            return nil
        }
        while let f = self.frame(ofBar: bar) {
            if f >= target {
                if let barLimit, bar >= barLimit { return nil }
                return (bar, f)
            }
            bar += 1
        }
        return nil
    }

    /// The same clicks at `bpm` from the first bar that starts on or after `frame` and has not
    /// been produced yet: a fresh grid anchored on that bar's frame (so the new tempo is exact
    /// from there), endless, in that bar's meter, pattern and volume. Nil when the map ends first.
    package func changingTempo(to bpm: Double, notBefore frame: Frame) -> (metronome: Metronome, bar: Int, frame: Frame)? {
        guard let (bar, barFrame) = nextBar(notBefore: frame) else { return nil }
        let sections = timing.map.sections
        // A change during the count-in applies to the music after it.
        let at = max(bar, countInBars)
        guard let (s, _) = timing.section(ofBar: at) ?? timing.section(ofBar: bar) else { return nil }
        let model = sections[s]
        guard let map = try? TempoMap.constant(bpm: bpm, meter: model.meter, pattern: model.pattern, volume: model.volume) else {
            return nil
        }
        var next = Metronome(timing: TempoMapTiming(map: map, sampleRate: timing.sampleRate), origin: barFrame,
                             subdivision: subdivision, subdivisionVelocity: subdivisionVelocity,
                             barLimit: barLimit.map { $0 - bar }, stopFrame: stopFrame,
                             barNumberOffset: bar - countInBars + barNumberOffset,
                             midiClock: midiClock == nil ? nil : .continuation)
        next.producedBefore = producedBefore
        return (next, bar, barFrame)
    }
}
