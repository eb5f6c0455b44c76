import SoundFiles

extension WAVSampleFormat {
    /// The format a `--format` option names: float32, pcm24 or pcm16.
    init?(option: String) {
        switch option {
        case "float32": self = .float32
        case "pcm24": self = .pcm24
        case "pcm16": self = .pcm16
        default: return nil
        }
    }
}
