import Foundation
import MallocInterposerSwift
import Synchronization

/// Counts the allocations made on one thread only. malloc-interposer counts every thread of the
/// process (the test runner's threads allocate too); its per-allocation hook runs on the
/// allocating thread, so comparing `pthread_self()` there picks out the thread under test.
enum ThreadAllocationCounter {
    nonisolated(unsafe) static var target: pthread_t = pthread_self()
    static let count = Atomic<Int>(0)

    /// Starts counting allocations made on `thread`.
    static func start(on thread: pthread_t) {
        MallocInterposerSwift.initialize()
        target = thread
        count.store(0, ordering: .relaxed)
        MallocInterposerSwift.setAllocationHook { _ in
            if pthread_equal(pthread_self(), ThreadAllocationCounter.target) != 0 {
                ThreadAllocationCounter.count.add(1, ordering: .relaxed)
            }
        }
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
    }

    /// Stops counting; returns the allocations counted on the thread.
    static func stop() -> Int {
        MallocInterposerSwift.unhook()
        MallocInterposerSwift.setAllocationHook(nil)
        return count.load(ordering: .relaxed)
    }
}
