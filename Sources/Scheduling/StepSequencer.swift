import SamplerCore

/// One trigger produced by a schedule: start `player` at `frame`, at `velocity` (0…1).
package struct Trigger: Equatable, Sendable {
    package var frame: Frame
    package var player: Int
    package var velocity: Float
    /// A note-off: the instrument's voices that follow note-offs begin their release (a MIDI
    /// file's; `Command.release`).
    package var isRelease: Bool
    /// The MIDI channel, 1…16.
    package var channel: Int = 1
    /// A channel message instead of a trigger (−1: none): a controller number, or one of
    /// `Command.ChannelMessage`'s codes, with `velocity` as its value (0…1) and `note` where it
    /// names one.
    package var channelMessage: Int64 = -1
    package var note: Int = 0

    package init(frame: Frame, player: Int, velocity: Float = 1, isRelease: Bool = false, channel: Int = 1) {
        self.frame = frame
        self.player = player
        self.velocity = velocity
        self.isRelease = isRelease
        self.channel = channel
    }

    /// A channel message (see `channelMessage`).
    package static func channelMessage(_ message: Int64, channel: Int, value: Float, note: Int = 0, at frame: Frame) -> Trigger {
        var t = Trigger(frame: frame, player: 0, velocity: value, channel: channel)
        t.channelMessage = message
        t.note = note
        return t
    }
}

/// Something that produces triggers in time order, asked window by window.
package protocol TriggerSource {
    /// Calls `body` with every trigger whose frame is before `horizon` and that has not been
    /// produced yet, in frame order. Control thread only.
    mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void)
    /// Where the source stops (nil = never).
    var endFrame: Frame? { get }
}

/// A looping step pattern at a constant tempo: step k (counted from `grid.origin`) plays
/// `steps[k % steps.count]`, each step being the players to start. Step frames come from the
/// grid, so they never drift. Control thread only.
package struct StepSequencer: TriggerSource {
    package let grid: TempoGrid
    package let steps: [[Int]]
    /// Stop after this many steps (nil = loop forever).
    package let stepLimit: Int64?
    private var nextStep: Int64 = 0

    /// - Parameters:
    ///   - stepsPerBeat: steps per quarter note.
    package init(steps: [[Int]], bpm: Double, stepsPerBeat: Int, sampleRate: Double, origin: Frame,
                stepLimit: Int64? = nil) {
        precondition(!steps.isEmpty, "a pattern needs at least one step")
        self.steps = steps
        self.grid = TempoGrid(origin: origin, bpm: bpm, sampleRate: sampleRate, unitsPerQuarter: Double(stepsPerBeat))
        self.stepLimit = stepLimit
    }

    package var endFrame: Frame? { stepLimit.map { grid.frame(at: $0) } }

    package mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
        while stepLimit.map({ nextStep < $0 }) ?? true {
            let frame = grid.frame(at: nextStep)
            if frame >= horizon { return }
            for player in steps[Int(nextStep % Int64(steps.count))] {
                body(Trigger(frame: frame, player: player))
            }
            nextStep += 1
        }
    }
}
