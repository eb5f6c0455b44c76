import Foundation
import JACKBackend
import Locking
import SamplerCore
import Synchronization

/// A device that renders only when told to: `render(periods:)` runs the engine for the next
/// periods on the calling thread and returns what it wrote; `skip(periods:)` lets the clock run
/// over periods the engine never renders (as JACK does when it skips a client); `shutDown()`
/// and `restart()` play a server going away and coming back. A session made with it
/// (`AudioSession(configuration:device:)`) behaves as on JACK, deterministically and without a
/// server: for tests of a program's use of SamplerKit, and for ThreadSanitizer, which cannot run
/// in a process with a JACK client.
///
/// The clock: the next period starts on `nextFrame`; `currentFrame()` is that frame (the device
/// is between periods), host time is the frame in microseconds at `sampleRate`.
///
/// Threads: `render` and `skip` from one thread at a time (it plays JACK's process thread);
/// everything else from any thread. Nothing but the clock (an atomic) passes between the render
/// thread and the others, as with JACK, so ThreadSanitizer sees the engine's own synchronization.
///
/// `@unchecked Sendable` by contract: the clock, the shutdown flag and the xrun count are
/// atomics; the engine is behind `attached` (taken by `render` and by the session's attach and
/// close); the rest is immutable.
public final class ManualDevice: AudioDevice, @unchecked Sendable {
    public let sampleRate: Double
    public let bufferSize: Int
    public let outputLatencyFrames: Int
    public let name: String
    private let attached = Locked<Engine?>(nil)
    private let clock = Atomic<Int64>(0)
    private let shutDownFlag = Atomic<Bool>(false)
    private let xruns = Atomic<Int>(0)

    public init(name: String = "manual", sampleRate: Double = 48000, bufferSize: Int = 256, outputLatencyFrames: Int = 0) {
        precondition(sampleRate > 0 && bufferSize > 0 && outputLatencyFrames >= 0)
        self.name = name
        self.sampleRate = sampleRate
        self.bufferSize = bufferSize
        self.outputLatencyFrames = outputLatencyFrames
    }

    /// The first frame of the next period.
    public var nextFrame: Frame { clock.load(ordering: .relaxed) }

    /// Renders the next `periods` periods (silence when no session is attached) and returns
    /// them, `periods × bufferSize` frames per channel. Render thread.
    @discardableResult
    public func render(periods: Int = 1) -> (left: [Float], right: [Float]) {
        var left = [Float](repeating: 0, count: periods * bufferSize)
        var right = left
        let engine = attached.withLock { $0 }
        for p in 0..<periods {
            let start = clock.load(ordering: .relaxed)
            if let engine, !shutDownFlag.load(ordering: .relaxed) {
                left.withUnsafeMutableBufferPointer { l in
                    right.withUnsafeMutableBufferPointer { r in
                        engine.render(frameCount: bufferSize, periodStart: start,
                                      left: l.baseAddress! + p * bufferSize, right: r.baseAddress! + p * bufferSize)
                    }
                }
            }
            clock.store(start + Int64(bufferSize), ordering: .relaxed)
        }
        return (left, right)
    }

    /// Renders the next `periods` periods into `outputCount` stereo outputs (the main mix, then
    /// each of the session's `Configuration.outputs`) and returns their channels: left and
    /// right of output 0, of output 1, and so on. Render thread.
    public func render(periods: Int = 1, outputCount: Int) -> [[Float]] {
        let count = max(1, outputCount)
        var channels = [[Float]](repeating: [Float](repeating: 0, count: periods * bufferSize), count: 2 * count)
        let engine = attached.withLock { $0 }
        let block = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2 * count)
        let buffers = (0..<(2 * count)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: bufferSize) }
        defer {
            block.deallocate()
            buffers.forEach { $0.deallocate() }
        }
        for i in 0..<(2 * count) { block[i] = buffers[i] }
        for p in 0..<periods {
            let start = clock.load(ordering: .relaxed)
            if let engine, !shutDownFlag.load(ordering: .relaxed) {
                engine.render(frameCount: bufferSize, periodStart: start, outputs: block, outputCount: count)
                for i in 0..<(2 * count) {
                    for f in 0..<bufferSize { channels[i][p * bufferSize + f] = buffers[i][f] }
                }
            }
            clock.store(start + Int64(bufferSize), ordering: .relaxed)
        }
        return channels
    }

    /// Lets the clock run over `periods` periods the engine does not render (one xrun): what
    /// was due in them is a silent gap, and the music goes on at its place after it. Render
    /// thread.
    public func skip(periods: Int) {
        clock.add(Int64(periods * bufferSize), ordering: .relaxed)
        xruns.add(1, ordering: .relaxed)
    }

    /// The device goes away: nothing renders, and the session hears of it (an interruption).
    public func shutDown() { shutDownFlag.store(true, ordering: .relaxed) }

    /// A device is there again, its clock from 0 (a session with `reconnect` resumes on it).
    public func restart() {
        clock.store(0, ordering: .relaxed)
        shutDownFlag.store(false, ordering: .relaxed)
    }

    /// Attaches `engine` (the session's): `render` runs it from now on. Throws while shut down.
    func attach(_ engine: Engine) throws {
        guard !shutDownFlag.load(ordering: .relaxed) else {
            throw SamplerKitError.session("the manual device \(name) is shut down")
        }
        attached.withLock { $0 = engine }
    }

    // MARK: AudioDevice

    public func currentFrame() -> Frame { nextFrame }
    public func frame(atHostTime microseconds: UInt64) -> Frame {
        Frame((Double(microseconds) * sampleRate / 1_000_000).rounded())
    }
    public func hostTime(atFrame frame: Frame) -> UInt64 {
        UInt64(max(0, (Double(frame) * 1_000_000 / sampleRate).rounded()))
    }
    public var hostTimeNow: UInt64 { hostTime(atFrame: nextFrame) }
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }
    public var isShutDown: Bool { shutDownFlag.load(ordering: .relaxed) }
    /// nil: its cycles are the engine's renders.
    public var cycleFrame: UInt32? { nil }
    public var outputPortNames: [String] { ["\(name):out_L", "\(name):out_R"] }
    public func takeRouteChanges() -> [RouteChange] { [] }
    public func takeRegisteredPorts() -> [String] { [] }
    public func isConnected(_ source: String, to destination: String) -> Bool { true }
    public func connectOutputs(to ports: [String]) throws {}
    public func close() { attached.withLock { $0 = nil } }
}
