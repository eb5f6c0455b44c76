import SamplerCore
import Scheduling

/// Moves triggers from a schedule into the engine's command queue ahead of time, window by window:
/// everything before a horizon is sent, so the render thread has each start before its frame
/// comes. The same feeder drives the live engine and the offline renderer, which is why both
/// produce the same frames. Control thread only.
package struct CommandFeeder {
    private var source: any TriggerSource
    private let makeCommand: (Trigger) -> Command
    /// Triggers that did not fit in the command queue (the queue was full).
    package private(set) var droppedCount = 0
    /// Triggers sent so far.
    package private(set) var sentCount = 0
    /// The command that did not fit, kept as made: making a command can have effects (a
    /// streamed instrument's ring is switched when its start is made), so it is made once.
    private var pending: Command?
    /// Called first on every `feed`, whatever follows (an offline render's disk reads, which
    /// must happen before each block: `LoadedPatch.tailService`).
    package var beforeEachFeed: (() -> Void)?

    package init(source: any TriggerSource, makeCommand: @escaping (Trigger) -> Command) {
        self.source = source
        self.makeCommand = makeCommand
    }

    /// Where the schedule ends, if it does.
    package var endFrame: Frame? { source.endFrame }

    /// Sends every trigger before `horizon` to `engine`. When the command queue is full the
    /// trigger is kept and retried on the next call rather than lost, unless its frame has
    /// already been rendered.
    package mutating func feed(_ engine: Engine, before horizon: Frame) {
        beforeEachFeed?()
        if let p = pending {
            if engine.send(p) { pending = nil; sentCount += 1 } else { return }
        }
        var blocked: Command?
        var sent = 0, dropped = 0
        let makeCommand = self.makeCommand
        source.produce(before: horizon) { trigger in
            if blocked != nil { dropped += 1; return }
            let command = makeCommand(trigger)
            if engine.send(command) { sent += 1 } else { blocked = command }
        }
        sentCount += sent
        droppedCount += dropped
        pending = blocked
    }
}
