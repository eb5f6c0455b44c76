import SoundFiles

/// The sample formats an offline render can write (float32, pcm24, pcm16).
package typealias WAVSampleFormat = SoundFiles.WAVSampleFormat

extension WAVSampleFormat {
    /// The format named on a command line: "float32", "pcm24" or "pcm16"; nil for anything else.
    package init?(option: String) {
        switch option {
        case "float32": self = .float32
        case "pcm24": self = .pcm24
        case "pcm16": self = .pcm16
        default: return nil
        }
    }
}
