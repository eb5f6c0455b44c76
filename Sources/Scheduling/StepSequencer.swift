import SamplerCore

/// One trigger produced by a schedule: start `player` at `frame`, at `velocity` (0…1).
public struct Trigger: Equatable, Sendable {
    public var frame: Frame
    public var player: Int
    public var velocity: Float

    public init(frame: Frame, player: Int, velocity: Float = 1) {
        self.frame = frame
        self.player = player
        self.velocity = velocity
    }
}

/// Something that produces triggers in time order, asked window by window.
public protocol TriggerSource {
    /// Calls `body` with every trigger whose frame is before `horizon` and that has not been
    /// produced yet, in frame order. Control thread only.
    mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void)
    /// Where the source stops (nil = never).
    var endFrame: Frame? { get }
}

/// A looping step pattern at a constant tempo: step k (counted from `grid.origin`) plays
/// `steps[k % steps.count]`, each step being the players to start. Step frames come from the
/// grid, so they never drift. Control thread only.
public struct StepSequencer: TriggerSource {
    public let grid: TempoGrid
    public let steps: [[Int]]
    /// Stop after this many steps (nil = loop forever).
    public let stepLimit: Int64?
    private var nextStep: Int64 = 0

    /// - Parameters:
    ///   - stepsPerBeat: steps per quarter note.
    public init(steps: [[Int]], bpm: Double, stepsPerBeat: Int, sampleRate: Double, origin: Frame,
                stepLimit: Int64? = nil) {
        precondition(!steps.isEmpty, "a pattern needs at least one step")
        self.steps = steps
        self.grid = TempoGrid(origin: origin, bpm: bpm, sampleRate: sampleRate, unitsPerQuarter: Double(stepsPerBeat))
        self.stepLimit = stepLimit
    }

    public var endFrame: Frame? { stepLimit.map { grid.frame(at: $0) } }

    public mutating func produce(before horizon: Frame, _ body: (Trigger) -> Void) {
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
