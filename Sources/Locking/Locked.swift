/// A value behind a lock, for state that control threads and JACK's notification threads share.
/// `withLock` is short and never waits, sleeps or calls user code inside.
///
/// The lock is a `CheckedLock` (an error-checking pthread mutex, visible to ThreadSanitizer,
/// unlike `Synchronization.Mutex` on Linux: checked with Swift 6.3.1, two threads appending
/// under one Mutex were reported as a race). Taking it again from inside `withLock` traps.
///
/// `@unchecked Sendable` by contract: `value` is only ever touched inside `withLock`, with the
/// lock held.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = CheckedLock("a Locked value's lock")
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, the lock held.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}
