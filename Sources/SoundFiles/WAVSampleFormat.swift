import CSndFile

/// How samples are stored in a written file.
package enum WAVSampleFormat: Sendable, Equatable {
    /// 32-bit IEEE float: lossless for the engine's samples, and keeps values beyond ±1.
    case float32
    /// 16-bit integer; values beyond ±1 are clipped.
    case pcm16
    /// 24-bit integer; values beyond ±1 are clipped.
    case pcm24

    var libsndfileSubtype: Int32 {
        switch self {
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .pcm16: Int32(SF_FORMAT_PCM_16)
        case .pcm24: Int32(SF_FORMAT_PCM_24)
        }
    }

    var name: String {
        switch self {
        case .float32: "32-bit float"
        case .pcm16: "16-bit"
        case .pcm24: "24-bit"
        }
    }
}
