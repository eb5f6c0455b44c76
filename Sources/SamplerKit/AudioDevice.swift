import JACKBackend
import SamplerCore

/// What an `AudioSession` plays through: a JACK client (`JACKClient`), or a `ManualDevice` that a
/// program or a test renders period by period.
///
/// Threads: the session calls it with its lock held (one control thread at a time); the device's
/// own render thread runs the engine.
public protocol AudioDevice: AnyObject, Sendable {
    /// Frames per second of the device clock.
    var sampleRate: Double { get }
    /// Frames per period.
    var bufferSize: Int { get }
    /// The device clock now, in frames.
    func currentFrame() -> Frame
    /// The device frame at host time `microseconds`.
    func frame(atHostTime microseconds: UInt64) -> Frame
    /// The host time (microseconds) of device frame `frame`.
    func hostTime(atFrame frame: Frame) -> UInt64
    /// The host clock now, in microseconds.
    var hostTimeNow: UInt64 { get }
    /// Frames from a period's render to its leaving the output (the largest of the ports').
    var outputLatencyFrames: Int { get }
    /// Cycles the device reported lost.
    var xrunCount: Int { get }
    /// Whether the device went away (the server stopped, or threw the client out).
    var isShutDown: Bool { get }
    /// Where the device's own cycle is, in frames (32 bits, wrapping), whether or not it runs the
    /// engine: JACK's server goes on without a client it skips. nil for a device whose cycles are
    /// the engine's renders (a `ManualDevice`). The session's watchdog compares the two.
    var cycleFrame: UInt32? { get }
    /// The output ports' full names, left then right.
    var outputPortNames: [String] { get }
    /// Connections made or broken since the previous call.
    func takeRouteChanges() -> [RouteChange]
    /// Ports registered since the previous call.
    func takeRegisteredPorts() -> [String]
    func isConnected(_ source: String, to destination: String) -> Bool
    func connectOutputs(to ports: [String]) throws
    /// Stops rendering and lets go of the device. Idempotent.
    func close()
}

extension JACKClient: AudioDevice {
    public var outputLatencyFrames: Int { playbackLatency.max }
    public var cycleFrame: UInt32? { serverCycleFrame }
}
