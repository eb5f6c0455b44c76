import SamplerCore

/// A point in time, like AVAudioTime: a sample time (frames on the device clock) and/or a host
/// time (microseconds on JACK's clock, as `jack_get_time` counts). A time with neither means
/// "as soon as possible". Convert between them with `AudioSession.frame(for:)` /
/// `AudioSession.hostTime(forFrame:)`. Plain value; any thread.
public struct AudioTime: Equatable, Sendable {
    /// Frames on the device clock, if valid.
    public var sampleTime: Frame?
    /// Microseconds on JACK's clock, if valid.
    public var hostTime: UInt64?
    /// The rate `sampleTime` counts at.
    public var sampleRate: Double

    public init(sampleTime: Frame, atRate sampleRate: Double) {
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
    }

    public init(hostTime: UInt64) {
        self.hostTime = hostTime
        self.sampleRate = 0
    }

    public init(hostTime: UInt64, sampleTime: Frame, atRate sampleRate: Double) {
        self.hostTime = hostTime
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
    }

    /// "As soon as possible".
    public static let now = AudioTime(sampleTime: nil, hostTime: nil, sampleRate: 0)

    private init(sampleTime: Frame?, hostTime: UInt64?, sampleRate: Double) {
        self.sampleTime = sampleTime
        self.hostTime = hostTime
        self.sampleRate = sampleRate
    }

    public var isSampleTimeValid: Bool { sampleTime != nil }
    public var isHostTimeValid: Bool { hostTime != nil }

    /// The time `seconds` after this one (sample time only).
    public func offset(bySeconds seconds: Double) -> AudioTime {
        guard let sampleTime else { return self }
        return AudioTime(sampleTime: sampleTime + Frame((seconds * sampleRate).rounded()), atRate: sampleRate)
    }
}

/// When a scheduled item's completion handler is called.
public enum CompletionCallbackType: Sendable {
    /// Its data has been read by the render thread (its last frame has been mixed).
    case dataConsumed
    /// Its data has been rendered (its last period has been handed to JACK).
    case dataRendered
    /// Its last frame has left the JACK output port (after the port's playback latency).
    case dataPlayedBack
}

/// Options for scheduling a buffer, as AVAudioPlayerNodeBufferOptions.
public struct BufferOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Loop the buffer until another one interrupts it or the node stops.
    public static let loops = BufferOptions(rawValue: 1)
    /// Start at once (or at the given time), replacing whatever is scheduled or playing.
    public static let interrupts = BufferOptions(rawValue: 2)
    /// Start at the end of the current loop pass of a looping buffer, replacing what follows.
    public static let interruptsAtLoop = BufferOptions(rawValue: 4)
}
