import CSndFile

/// The container a writer produces. WAV is the default everywhere; the others exist mostly so
/// tests and tools can make files of every kind the loader reads.
package enum SoundFileFormat: Sendable, Equatable {
    case wav
    case aiff
    /// FLAC holds 16- and 24-bit integer samples only.
    case flac
    /// Ogg Vorbis: lossy; the sample format is ignored.
    case ogg

    func libsndfileFormat(_ samples: WAVSampleFormat) -> Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV) | samples.libsndfileSubtype
        case .aiff: Int32(SF_FORMAT_AIFF) | samples.libsndfileSubtype
        case .flac: Int32(SF_FORMAT_FLAC) | samples.libsndfileSubtype
        case .ogg: Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_VORBIS)
        }
    }

    var name: String {
        switch self {
        case .wav: "WAV"
        case .aiff: "AIFF"
        case .flac: "FLAC"
        case .ogg: "Ogg Vorbis"
        }
    }
}
