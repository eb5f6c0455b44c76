import Locking
import Testing

/// The session's lock is not recursive: a nested lock, which a recursive lock hid (and which
/// made a sleep under it keep the lock held), now stops the program at once, naming the lock.
@Suite struct CheckedLockTests {
    @Test func takingTheLockTwiceOnOneThreadTraps() async {
        await #expect(processExitsWith: .failure) {
            let lock = CheckedLock("the test lock")
            lock.withLock { lock.lock() }
        }
    }

    @Test func releasingALockNotHeldTraps() async {
        await #expect(processExitsWith: .failure) {
            CheckedLock("the test lock").unlock()
        }
    }

    @Test func twoThreadsTakeTurns() async {
        let lock = CheckedLock("the test lock")
        let count = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<1000 { lock.withLock { count.withLock { $0 += 1 } } } }
            }
        }
        #expect(count.withLock { $0 } == 4000)
    }
}
