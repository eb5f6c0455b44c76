import Glibc
import Synchronization

/// A lock-free single-producer/single-consumer ring of fixed capacity.
///
/// Exactly one thread may push and exactly one (other) thread may pop. Neither side ever blocks
/// or allocates: `push` returns `false` when the ring is full and `pop` returns `nil` when it is
/// empty. Storage is allocated once, in `init`, on the control thread, and written there once
/// (zeros), so that its pages are resident from the start: neither side takes a page fault on
/// the real-time thread as the indices first go round, and the process does not grow as they do.
///
/// The producer publishes an element by storing `tail` with release ordering after writing the
/// slot; the consumer reads `tail` with acquire ordering before reading the slot (and the reverse
/// for `head`), so an element is never read before it is fully written nor overwritten before it
/// has been read.
///
/// Non-copyable so that it lives inline in its owner and the render thread reaches it without
/// reference counting. `push`/`pop` are `@inlinable` so that the real-time checker sees their
/// specialized bodies inside the `@_noLocks` functions that call them.
///
/// `@unchecked Sendable` by contract: `capacity` and `storage` are fixed in `init`; a slot is written
/// only by the one producer before it releases `tail` and read only by the one consumer after it
/// acquires `tail` (and the reverse through `head` before a slot is reused); callers keep to one
/// producer thread and one consumer thread.
public struct SPSCRing<Element: BitwiseCopyable>: ~Copyable, @unchecked Sendable {
    /// The most elements the ring holds at once.
    public let capacity: Int
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    /// Count of elements ever popped; written by the consumer only.
    @usableFromInline let head = Atomic<Int>(0)
    /// Count of elements ever pushed; written by the producer only.
    @usableFromInline let tail = Atomic<Int>(0)

    /// A ring holding at most `capacity` elements (at least 1). Control thread only.
    @inlinable
    public init(capacity: Int) {
        precondition(capacity >= 1, "SPSCRing capacity must be at least 1")
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
        // Bytes only (no typed initialization): elements are written by `push`.
        memset(storage, 0, capacity * MemoryLayout<Element>.stride)
    }

    @inlinable
    deinit { storage.deallocate() }

    /// Whether a `push` now would find room. Producer thread only (the consumer only makes room).
    @inlinable
    public var hasRoom: Bool {
        tail.load(ordering: .relaxed) &- head.load(ordering: .acquiring) < capacity
    }

    /// Appends `element`; returns `false` (and changes nothing) when the ring is full.
    /// Producer side only. Real-time safe.
    @inlinable
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        if t &- h >= capacity { return false }
        (storage + t % capacity).initialize(to: element)
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Appends up to `count` elements made by `element(i)` for i in 0..<count, as many as fit;
    /// returns how many were appended. Producer side only. Real-time safe when `element` is.
    @inlinable
    public func push(count: Int, _ element: (Int) -> Element) -> Int {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        let n = min(count, capacity - (t &- h))
        for i in 0..<n { (storage + (t &+ i) % capacity).initialize(to: element(i)) }
        tail.store(t &+ n, ordering: .releasing)
        return n
    }

    /// Removes up to `count` of the oldest elements, passing each to `body` with its index;
    /// returns how many were removed. Consumer side only.
    @inlinable
    public func pop(upTo count: Int, _ body: (Int, Element) -> Void) -> Int {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        let n = min(count, t &- h)
        for i in 0..<n { body(i, storage[(h &+ i) % capacity]) }
        head.store(h &+ n, ordering: .releasing)
        return n
    }

    /// Removes and returns the oldest element, or `nil` when the ring is empty.
    /// Consumer side only. Real-time safe.
    @inlinable
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        if h == t { return nil }
        let element = storage[h % capacity]
        head.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// The number of elements in the ring at this instant (exact only on the producer or consumer
    /// thread, an estimate elsewhere). Real-time safe.
    @inlinable
    public var count: Int {
        tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring)
    }
}
