import SamplerCore

/// One instrument's part in a `SequencePattern`.
package struct SequenceTrack: Equatable, Sendable {
    /// The instrument (the `player` of the triggers produced).
    package var instrument: Int
    /// Per step, 0 (rest) … 127.
    package var velocities: [Int]
    /// Per step, the chance (0…1) that the note plays.
    package var probabilities: [Double]

    package init(instrument: Int, velocities: [Int], probabilities: [Double]? = nil) {
        self.instrument = instrument
        self.velocities = velocities
        self.probabilities = probabilities ?? Array(repeating: 1, count: velocities.count)
    }
}

/// A step pattern as the sequencer plays it.
package struct SequencePattern: Equatable, Sendable {
    package var name: String
    package var beatsPerBar: Int
    /// Steps per quarter note.
    package var stepsPerBeat: Int
    package var stepCount: Int
    package var tracks: [SequenceTrack]
    /// Percent of a step by which the second step of each pair is delayed.
    package var swing: Double
    /// Seeds the probability draws.
    package var seed: UInt64
    /// Seeded deviations, ± frames and ± velocity (nil: none).
    package var humanize: (seed: UInt64, frames: Int, velocity: Int)?

    package init(name: String, beatsPerBar: Int = 4, stepsPerBeat: Int = 4, stepCount: Int, tracks: [SequenceTrack],
                swing: Double = 0, seed: UInt64 = 1, humanize: (seed: UInt64, frames: Int, velocity: Int)? = nil) {
        precondition(stepCount > 0 && beatsPerBar > 0 && stepsPerBeat > 0, "a pattern needs at least one step")
        self.name = name
        self.beatsPerBar = beatsPerBar
        self.stepsPerBeat = stepsPerBeat
        self.stepCount = stepCount
        self.tracks = tracks
        self.swing = swing
        self.seed = seed
        self.humanize = humanize
    }

    package static func == (a: SequencePattern, b: SequencePattern) -> Bool {
        a.name == b.name && a.beatsPerBar == b.beatsPerBar && a.stepsPerBeat == b.stepsPerBeat && a.stepCount == b.stepCount
            && a.tracks == b.tracks && a.swing == b.swing && a.seed == b.seed
            && a.humanize?.seed == b.humanize?.seed && a.humanize?.frames == b.humanize?.frames
            && a.humanize?.velocity == b.humanize?.velocity
    }
}

/// A pattern played `repeats` times at `tempo` (quarter notes per minute).
package struct SongSection: Equatable, Sendable {
    package var pattern: Int
    package var repeats: Int
    package var tempo: Double

    package init(pattern: Int, repeats: Int = 1, tempo: Double) {
        precondition(repeats > 0 && tempo > 0, "a section plays at least once, at a positive tempo")
        self.pattern = pattern
        self.repeats = repeats
        self.tempo = tempo
    }
}

/// Where a song is: which section, pattern, bar and beat (both from 1).
package struct SongPosition: Equatable, Sendable {
    package var section: Int
    package var pattern: String
    package var bar: Int
    package var beat: Int
}

/// Plays patterns in song order, each section's plays back to back, from an absolute frame.
///
/// Positions are musical and absolute: each play of a pattern starts where the previous ones
/// end, computed as `Double` frames from tempos and lengths (loops × song length + the section's
/// offset + repeats × play length, products rather than a running sum), and a step's frame is that start plus
/// its ideal offset (with swing), rounded once, plus its humanize offset. Nothing is rounded
/// twice, so a song never drifts, and the same song gives the same frames whatever the window
/// sizes it is asked with. Probability and humanize draws are hashed from the seed and the
/// note's place in the song, so they are deterministic too. Control thread only.
package struct SongSequencer: TriggerSource {
    package let patterns: [SequencePattern]
    package let sections: [SongSection]
    package let loops: Bool
    package let sampleRate: Double
    package let origin: Frame

    // The next play: its section, repeat, global index and start (frames after origin).
    private var section = 0
    private var repeatIndex = 0
    private var playIndex: UInt64 = 0
    private var playStart = 0.0
    /// Times the whole song has been played through (a looping song).
    private var loopIndex = 0
    /// Frames from the song's start to each section's first play (not rounded).
    private let sectionOffsets: [Double]
    private var step = 0
    private var finished = false
    private var buffer: [Trigger] = []
    private let maxHumanize: Frame

    package init(patterns: [SequencePattern], sections: [SongSection], loops: Bool, sampleRate: Double, origin: Frame) {
        precondition(!sections.isEmpty && sections.allSatisfy { patterns.indices.contains($0.pattern) },
                     "a song needs sections naming its patterns")
        precondition(sampleRate > 0)
        self.patterns = patterns
        self.sections = sections
        self.loops = loops
        self.sampleRate = sampleRate
        self.origin = origin
        maxHumanize = Frame(patterns.map { $0.humanize?.frames ?? 0 }.max() ?? 0)
        var offsets: [Double] = []
        var sum = 0.0
        for s in sections.indices {
            offsets.append(sum)
            // As `playLength(section:)` computes it, so that the offsets add up to `songLength`.
            let pattern = patterns[sections[s].pattern]
            sum += Double(sections[s].repeats) * (Double(pattern.stepCount) * (60 * sampleRate / (sections[s].tempo * Double(pattern.stepsPerBeat))))
        }
        sectionOffsets = offsets
    }

    /// Frames per step of `section` (not rounded).
    package func framesPerStep(section: Int) -> Double {
        let s = sections[section]
        return 60 * sampleRate / (s.tempo * Double(patterns[s.pattern].stepsPerBeat))
    }

    /// Frames one play of `section`'s pattern lasts (not rounded).
    package func playLength(section: Int) -> Double {
        Double(patterns[sections[section].pattern].stepCount) * framesPerStep(section: section)
    }

    /// Frames the whole song lasts once through (not rounded).
    package var songLength: Double {
        sections.indices.reduce(0) { $0 + Double(sections[$1].repeats) * playLength(section: $1) }
    }

    package var endFrame: Frame? { loops ? nil : origin + Frame(songLength.rounded()) }

    /// The frame of `step` in a play starting `playStart` frames after the origin, before humanize.
    package func idealFrame(step: Int, section: Int, playStart: Double) -> Frame {
        let pattern = patterns[sections[section].pattern]
        var offset = Double(step)
        if step % 2 == 1 { offset += pattern.swing / 100 }
        return origin + Frame((playStart + offset * framesPerStep(section: section)).rounded())
    }

    package mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        while !finished {
            let ideal = idealFrame(step: step, section: section, playStart: playStart)
            if ideal - maxHumanize >= horizon { break }
            emitStep(ideal: ideal)
            advance()
        }
        guard !buffer.isEmpty else { return }
        buffer.sort { ($0.frame, $0.player) < ($1.frame, $1.player) }
        let ready = buffer.prefix { $0.frame < horizon }
        ready.forEach(body)
        buffer.removeFirst(ready.count)
    }

    private mutating func emitStep(ideal: Frame) {
        let pattern = patterns[sections[section].pattern]
        for (t, track) in pattern.tracks.enumerated() {
            var velocity = track.velocities[step]
            guard velocity > 0 else { continue }
            let p = track.probabilities[step]
            if p < 1, Self.unit(Self.hash(pattern.seed, playIndex, UInt64(step), UInt64(t))) >= p { continue }
            var frame = ideal
            if let h = pattern.humanize {
                let r = Self.hash(h.seed, playIndex, UInt64(step), UInt64(t))
                frame += Self.spread(r, h.frames)
                velocity = min(127, max(1, velocity + Int(Self.spread(r >> 32 | r << 32, h.velocity))))
                frame = max(origin, frame)
            }
            buffer.append(Trigger(frame: frame, player: track.instrument, velocity: Float(velocity) / 127))
        }
    }

    private mutating func advance() {
        step += 1
        guard step == patterns[sections[section].pattern].stepCount else { return }
        step = 0
        playIndex += 1
        repeatIndex += 1
        if repeatIndex == sections[section].repeats {
            repeatIndex = 0
            section += 1
            if section == sections.count {
                section = 0
                loopIndex += 1
                if !loops { finished = true }
            }
        }
        // From the song's start, as a product per level (loops, sections, repeats), never a
        // running sum: a pattern looped on its own starts its n-th play at n × its length.
        playStart = Double(loopIndex) * songLength + sectionOffsets[section] + Double(repeatIndex) * playLength(section: section)
    }

    /// The section, pattern, bar and beat playing at `frame` (nil before the origin or after the end).
    package func position(at frame: Frame) -> SongPosition? {
        var offset = Double(frame - origin)
        guard offset >= 0 else { return nil }
        let length = songLength
        if loops { offset = offset.truncatingRemainder(dividingBy: length) } else if offset >= length { return nil }
        for s in sections.indices {
            let sectionLength = Double(sections[s].repeats) * playLength(section: s)
            if offset < sectionLength {
                let pattern = patterns[sections[s].pattern]
                let within = offset.truncatingRemainder(dividingBy: playLength(section: s))
                let beat = Int(within / (framesPerStep(section: s) * Double(pattern.stepsPerBeat)))
                return SongPosition(section: s, pattern: pattern.name, bar: beat / pattern.beatsPerBar + 1,
                                    beat: beat % pattern.beatsPerBar + 1)
            }
            offset -= sectionLength
        }
        return nil
    }

    /// SplitMix64 over the inputs: a stateless, seeded draw for one note.
    static func hash(_ values: UInt64...) -> UInt64 {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for v in values {
            x = (x ^ v) &+ 0x9E37_79B9_7F4A_7C15
            x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
            x ^= x >> 31
        }
        return x
    }

    /// A draw in 0 ..< 1.
    static func unit(_ r: UInt64) -> Double { Double(r >> 11) / Double(1 << 53) }

    /// A whole number in -width … width.
    static func spread(_ r: UInt64, _ width: Int) -> Frame {
        guard width > 0 else { return 0 }
        return Frame(r % UInt64(2 * width + 1)) - Frame(width)
    }
}
