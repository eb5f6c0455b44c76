/// The MIDI clock messages a metronome sends (MIDI 1.0 system real-time and common messages),
/// carried through the scheduling layer as triggers on `Metronome.clockPlayer` whose velocity
/// encodes the message (see `velocity` and `init?(velocity:)`).
package enum MIDIClockMessage: Equatable, Sendable {
    /// Timing clock, 0xF8: 24 per quarter note.
    case tick
    /// Start, 0xFA: play from the song's beginning on the next tick.
    case start
    /// Continue, 0xFB: play from the song position on the next tick.
    case `continue`
    /// Stop, 0xFC.
    case stop
    /// Song position pointer, 0xF2: the position in sixteenth notes (6 ticks each), 0…16383.
    case songPosition(Int)

    /// Ticks per quarter note.
    package static let ticksPerQuarter = 24

    /// The message's bytes.
    package var bytes: [UInt8] {
        switch self {
        case .tick: [0xF8]
        case .start: [0xFA]
        case .continue: [0xFB]
        case .stop: [0xFC]
        case .songPosition(let p):
            [0xF2, UInt8(min(max(p, 0), 16383) & 0x7F), UInt8(min(max(p, 0), 16383) >> 7)]
        }
    }

    /// The trigger velocity that stands for the message (exact in a `Float`).
    package var velocity: Float {
        switch self {
        case .tick: 0xF8
        case .start: 0xFA
        case .continue: 0xFB
        case .stop: 0xFC
        case .songPosition(let p): Float(0x10000 + min(max(p, 0), 16383))
        }
    }

    package init?(velocity: Float) {
        switch velocity {
        case 0xF8: self = .tick
        case 0xFA: self = .start
        case 0xFB: self = .continue
        case 0xFC: self = .stop
        case 0x10000...Float(0x10000 + 16383) where velocity == velocity.rounded(): self = .songPosition(Int(velocity) - 0x10000)
        default: return nil
        }
    }
}
