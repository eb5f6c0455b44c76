import Glibc

/// A non-recursive pthread mutex that traps, naming itself, when the thread holding it tries to
/// take it again (an error-checking mutex: a nested lock is a bug found at once, not a deadlock
/// found later). For locks whose holders call helpers that must not lock again: the caller knows
/// whether it holds the lock, and the type says so.
///
/// Not `Synchronization.Mutex`: ThreadSanitizer on Linux sees
/// pthread mutexes and not Mutex's futex.
///
/// `@unchecked Sendable` by contract: the pthread mutex is made once in `init` and only used
/// through the pthread calls, which are thread-safe; `name` is immutable.
package final class CheckedLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    package let name: String

    package init(_ name: String) {
        self.name = name
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Takes the lock; traps if this thread holds it already.
    package func lock() {
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "\(name) taken again by the thread that holds it")
    }

    /// Releases the lock; traps if this thread does not hold it.
    package func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "\(name) released by a thread that does not hold it")
    }

    /// Runs `body` with the lock held.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
