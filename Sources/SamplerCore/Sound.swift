/// A decoded sound held in memory: one or two channels of 32-bit float samples at a fixed rate.
///
/// Immutable once made. Samples are stored planar (one contiguous buffer per channel) in memory
/// this object owns, so the mixer reads them through plain pointers without retaining anything.
/// A `Sound` must outlive every voice that plays it; `Engine` keeps registered sounds alive.
///
/// Create on the control thread; read from any thread.
///
/// `@unchecked Sendable` by contract: immutable after `init` (every property is a `let` and the
/// samples are written only there), so any thread may read it; the samples are freed only in `deinit`.
public final class Sound: @unchecked Sendable {
    /// Number of channels (1 or 2).
    public let channelCount: Int
    /// Length in frames (at least 1).
    public let frameCount: Int
    /// The rate the samples are at, in frames per second.
    public let sampleRate: Double

    /// Channel 0 (left, or the only channel of a mono sound).
    public let left: UnsafeMutablePointer<Float>
    /// Channel 1; the same memory as `left` for a mono sound.
    public let right: UnsafeMutablePointer<Float>

    /// The largest magnitude of any sample (infinity if one is NaN, infinite or beyond a quarter
    /// of the largest float): with the gains, a bound on what the sound adds to a mix (see the
    /// render's check for non-finite output).
    public let peak: Float
    /// Where a looping voice goes on from after the last frame (0: the first frame; SFZ's
    /// `loop_start`, the last frame being its `loop_end`).
    public let loopStart: Int
    /// Where the samples came from (`nil`: the heap), to give them back.
    private let memory: (any SampleMemory)?
    /// For a slice: the sound whose samples it reads (kept alive; nothing is freed by the slice).
    private let parent: Sound?

    /// Makes a sound from planar channels, its samples in `memory` (the heap when `nil`). Throws
    /// if there are no frames, the channels differ in length, or there are not 1 or 2 channels.
    public init(channels: [[Float]], sampleRate: Double, memory: (any SampleMemory)? = nil) throws(SoundError) {
        guard channels.count == 1 || channels.count == 2 else {
            throw .unsupportedChannelCount(channels.count)
        }
        let frames = channels[0].count
        guard frames > 0 else { throw .empty }
        guard channels.allSatisfy({ $0.count == frames }) else { throw .channelLengthMismatch }
        guard sampleRate > 0, sampleRate.isFinite else { throw .invalidSampleRate(sampleRate) }
        self.channelCount = channels.count
        self.frameCount = frames
        self.sampleRate = sampleRate
        self.memory = memory
        parent = nil
        loopStart = 0
        left = memory?.allocateSamples(frames) ?? .allocate(capacity: frames)
        left.initialize(from: channels[0], count: frames)
        if channels.count == 2 {
            right = memory?.allocateSamples(frames) ?? .allocate(capacity: frames)
            right.initialize(from: channels[1], count: frames)
        } else {
            right = left
        }
        peak = max(Self.peak(left, count: frames), channels.count == 2 ? Self.peak(right, count: frames) : 0)
    }

    /// Makes a sound of `frames` frames of `channelCount` channels (1 or 2), its samples in
    /// `memory` (the heap when `nil`), written by `fill` (each channel's `frames` samples: left,
    /// then right, the same pointer for mono), which returns whether it wrote them all; nil when
    /// it did not (the memory is given back).
    public init?(frames: Int, channelCount: Int, sampleRate: Double, memory: (any SampleMemory)? = nil,
                 fill: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) -> Bool) {
        guard frames > 0, channelCount == 1 || channelCount == 2, sampleRate > 0, sampleRate.isFinite else { return nil }
        let left = memory?.allocateSamples(frames) ?? .allocate(capacity: frames)
        let right = channelCount == 2 ? memory?.allocateSamples(frames) ?? .allocate(capacity: frames) : left
        guard fill(left, right) else {
            Self.giveBack(left, right, count: frames, to: memory)
            return nil
        }
        self.channelCount = channelCount
        frameCount = frames
        self.sampleRate = sampleRate
        self.memory = memory
        parent = nil
        loopStart = 0
        self.left = left
        self.right = right
        peak = max(Self.peak(left, count: frames), channelCount == 2 ? Self.peak(right, count: frames) : 0)
    }

    /// The largest |sample| of `samples[0 ..< count]`; infinity if one is NaN or infinite, or so
    /// large (beyond a quarter of the largest float) that the difference of two neighbours, as
    /// varispeed interpolation takes it, could overflow.
    static func peak(_ samples: UnsafePointer<Float>, count: Int) -> Float {
        var largest: Float = 0
        for i in 0..<count {
            let a = abs(samples[i])
            if !(a <= largest) { largest = a.isNaN ? .infinity : a }
        }
        return largest > Float.greatestFiniteMagnitude / 4 ? .infinity : largest
    }

    /// Makes a sound from interleaved samples (`frame0ch0, frame0ch1, frame1ch0, …`).
    public convenience init(interleaved samples: [Float], channelCount: Int, sampleRate: Double) throws(SoundError) {
        guard channelCount == 1 || channelCount == 2 else { throw .unsupportedChannelCount(channelCount) }
        var planes = [[Float]](repeating: [], count: channelCount)
        let frames = samples.count / channelCount
        for c in 0..<channelCount {
            planes[c].reserveCapacity(frames)
            for f in 0..<frames { planes[c].append(samples[f * channelCount + c]) }
        }
        try self.init(channels: planes, sampleRate: sampleRate)
    }

    /// Frames `start ..< start + count` of `sound`, without copying: the slice reads the
    /// sound's samples and keeps it alive. `start` and `count` are clamped to the sound (at
    /// least one frame); so is `loopStart`, a frame of the slice.
    public init(slicing sound: Sound, from start: Int, count: Int, loopStart: Int = 0) {
        let first = max(0, min(start, sound.frameCount - 1))
        channelCount = sound.channelCount
        frameCount = max(1, min(count, sound.frameCount - first))
        self.loopStart = max(0, min(loopStart, frameCount - 1))
        sampleRate = sound.sampleRate
        memory = nil
        parent = sound
        left = sound.left + first
        right = sound.right + first
        peak = sound.peak
    }

    deinit {
        guard parent == nil else { return }
        Self.giveBack(left, right, count: frameCount, to: memory)
    }

    /// Frees channels `left` and `right` (the same for mono) of `count` samples, taken from
    /// `memory` (the heap when nil).
    private static func giveBack(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int,
                                 to memory: (any SampleMemory)?) {
        if let memory {
            if right != left { memory.deallocateSamples(right, count: count) }
            memory.deallocateSamples(left, count: count)
        } else {
            if right != left { right.deallocate() }
            left.deallocate()
        }
    }

    /// The samples of channel `index` (0 or 1) as an array, for tests and tools.
    public func samples(channel index: Int) -> [Float] {
        let p = index == 0 ? left : right
        return Array(UnsafeBufferPointer(start: p, count: frameCount))
    }

    /// Duration in seconds.
    public var duration: Double { Double(frameCount) / sampleRate }
}

/// Memory for sounds' samples other than the heap (e.g. on huge pages, so that thousands of voices
/// reading thousands of sounds do not miss in the TLB). Called on control threads only, when a
/// sound is made or freed; never by the render thread.
public protocol SampleMemory: AnyObject, Sendable {
    /// Room for `count` samples, at least 64-byte aligned.
    func allocateSamples(_ count: Int) -> UnsafeMutablePointer<Float>
    /// Gives back what `allocateSamples(count)` returned.
    func deallocateSamples(_ samples: UnsafeMutablePointer<Float>, count: Int)
}

/// Why a `Sound` could not be made.
public enum SoundError: Error, Equatable, CustomStringConvertible {
    case empty
    case unsupportedChannelCount(Int)
    case channelLengthMismatch
    case invalidSampleRate(Double)

    public var description: String {
        switch self {
        case .empty: "the sound has zero frames"
        case .unsupportedChannelCount(let n): "unsupported channel count \(n) (expected 1 or 2)"
        case .channelLengthMismatch: "channels have different lengths"
        case .invalidSampleRate(let r): "invalid sample rate \(r)"
        }
    }
}
