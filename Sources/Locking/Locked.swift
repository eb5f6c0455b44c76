import Glibc

/// A value behind a pthread mutex, for state that control threads and JACK's notification
/// threads share. `withLock` is short and never waits, sleeps or calls user code inside.
///
/// Not `Synchronization.Mutex`: ThreadSanitizer on Linux cannot see Mutex's futex-based locking
/// and reports every access under it as a race (checked with Swift 6.3.1: two threads appending
/// under one Mutex), while it understands pthread mutexes, so the project's TSan runs stay
/// meaningful.
///
/// `@unchecked Sendable` by contract: `value` is only ever touched inside `withLock`, with the
/// mutex held.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the mutex held.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
