import Foundation

/// The lines a program prints on standard error about refused OSC messages, at most
/// `linesPerSecond` a second: past that, refusals are counted and the count printed once a
/// second ("osc: 5120 more refused messages not shown"), so that a flood of bad messages is a
/// few lines, not as many lines as messages.
///
/// Control thread only (the program's OSC handler).
package final class OSCWarnings {
    package static let linesPerSecond = 10
    private let write: (String) -> Void
    private let now: () -> Double
    private var windowStart = -Double.infinity
    private var printed = 0
    private var withheld = 0

    /// `write` prints a line (standard error by default); `now` reads seconds on a steady clock.
    package init(write: @escaping (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
                 now: @escaping () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.write = write
        self.now = now
    }

    /// The line for a refusal of message `m`.
    package func refused(_ m: OSCMessage, _ what: String) {
        line("osc: \(m.path) ,\(m.types): \(what)")
    }

    /// `text`, unless this second's lines are spent (then counted).
    package func line(_ text: String) {
        flush()
        if now() - windowStart >= 1 {
            windowStart = now()
            printed = 0
        }
        guard printed < Self.linesPerSecond else {
            withheld += 1
            return
        }
        printed += 1
        write(text)
    }

    /// The count of what this second withheld, once the second is over (the program calls it
    /// every tick, so that a burst followed by silence is still counted).
    package func flush() {
        guard withheld > 0, now() - windowStart >= 1 else { return }
        write("osc: \(withheld) more refused message\(withheld == 1 ? "" : "s") not shown")
        withheld = 0
        windowStart = now()
        printed = 0
    }
}
