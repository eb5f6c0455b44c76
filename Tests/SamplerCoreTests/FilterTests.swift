@testable import SamplerCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A voice's filter: the response sfizz's coefficients give, the same bits whatever the period's
/// split and whichever path mixes the voice, cutoffs moved by controllers on their frame, and
/// frames the device skipped leaving the filter where rendering them would.
@Suite struct FilterTests {
    /// Deterministic noise in −0.5…0.5.
    static func noise(_ frames: Int, seed: UInt64) -> [Float] {
        var random = SeededRandom(state: seed)
        return (0..<frames).map { _ in Float(random.next() >> 40) / Float(1 << 24) - 0.5 }
    }

    static func engine(stereo: Bool = false) throws -> (Engine, SoundID) {
        let engine = Engine(configuration: .init(maxPlayers: 16))
        let channels = stereo ? [noise(40_000, seed: 3), noise(40_000, seed: 4)] : [noise(40_000, seed: 3)]
        return (engine, try engine.register(Sound(channels: channels, sampleRate: 48_000)))
    }

    static func midi(_ engine: Engine, _ bytes: [UInt8], at frame: Frame) {
        bytes.withUnsafeBufferPointer { engine.receiveMIDI($0.baseAddress!, count: bytes.count, at: frame) }
    }

    /// A program that takes every path a filtered voice has: plain, a retrigger (its declick
    /// tail filtered on), a cutoff and a resonance moved by controllers, a pitch bend
    /// (varispeed), a volume change (a level glide), a choke fade.
    static func program(_ engine: Engine, sound: SoundID, kind: FilterKind) {
        var i = InstrumentDefinition(firstPlayer: 0, voiceCount: 2, pan: 0.3, layers: [InstrumentLayer(sounds: [sound])],
                                     midiNotes: [50])
        i.filter = VoiceFilter(kind: kind, cutoff: 900, resonance: 6, keytrack: 20, keycenter: 60, veltrack: 1200, random: 300)
        i.modulations = [ControllerModulation(controller: 74, target: .cutoff, depth: 3600),
                         ControllerModulation(controller: 71, target: .resonance, depth: 12),
                         ControllerModulation(controller: 1, target: .volume, depth: -12)]
        i.bendUp = 200
        i.bendDown = 200
        var other = InstrumentDefinition(firstPlayer: 2, layers: [InstrumentLayer(sounds: [sound])], midiNotes: [51])
        other.filter = VoiceFilter(kind: kind, cutoff: 3000)
        other.group = 1
        i.offBy = 1
        engine.setInstruments([i, other])
        midi(engine, [0x90, 50, 100], at: 10)
        midi(engine, [0xB0, 74, 90], at: 700)
        midi(engine, [0x90, 50, 60], at: 1_500)        // a second voice
        midi(engine, [0xB0, 71, 127], at: 2_222)
        midi(engine, [0xE0, 0, 90], at: 3_000)         // bend up: varispeed
        midi(engine, [0xE0, 0, 64], at: 5_001)
        midi(engine, [0xB0, 1, 100], at: 6_100)        // a level glide
        midi(engine, [0x90, 51, 127], at: 7_777)       // chokes both voices: fades
        midi(engine, [0xB0, 74, 0], at: 8_000)
    }

    static func render(kind: FilterKind, stereo: Bool, blockSize: Int) throws -> (left: [Float], right: [Float]) {
        let (engine, sound) = try engine(stereo: stereo)
        program(engine, sound: sound, kind: kind)
        return renderBlocks(engine, periods: 12_288 / blockSize, blockSize: blockSize)
    }

    @Test(arguments: [FilterKind.lowpass2, .highpass1, .bandpass2], [false, true])
    func aFilteredVoiceIsTheSameToTheBitWhateverTheBlockSize(kind: FilterKind, stereo: Bool) throws {
        let large = try Self.render(kind: kind, stereo: stereo, blockSize: 4_096)
        for blockSize in [64, 1_024] {
            let small = try Self.render(kind: kind, stereo: stereo, blockSize: blockSize)
            #expect(small.left == large.left, "\(blockSize)-frame blocks, left")
            #expect(small.right == large.right, "\(blockSize)-frame blocks, right")
        }
        #expect(large.left.contains { $0 != 0 } && large.left[8_500...].allSatisfy { $0 != 0 })
    }

    /// The filter does what its kind says: a sine at the cutoff through a 2-pole low-pass with
    /// 0 dB resonance (Q = 1) keeps its level; an octave up is ~12 dB down; a high-pass lets it through.
    @Test func theResponseIsTheCookbookBiquads() throws {
        func level(_ kind: FilterKind, cutoff: Float, resonance: Float, frequency: Double) -> Double {
            var f = FilterState()
            f.kind = kind
            f.baseCutoff = cutoff
            f.baseResonance = resonance
            f.reset(sampleRate: 48_000)
            var x = (0..<48_000).map { Float(sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
            x.withUnsafeMutableBufferPointer { Filtering.apply($0.baseAddress!, count: $0.count, f.coefficients, &f.left) }
            let tail = x[24_000...]
            return 20 * log10(sqrt(tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(tail.count)) * sqrt(2))
        }
        #expect(abs(level(.lowpass2, cutoff: 1_000, resonance: 0, frequency: 1_000)) < 0.05)
        #expect(abs(level(.lowpass2, cutoff: 1_000, resonance: 12, frequency: 1_000) - 12) < 0.05)
        #expect(level(.lowpass2, cutoff: 1_000, resonance: 0, frequency: 2_000) < -9)
        #expect(level(.lowpass2, cutoff: 1_000, resonance: 0, frequency: 100) > -0.1)
        #expect(abs(level(.highpass2, cutoff: 1_000, resonance: 0, frequency: 10_000)) < 0.1)
        #expect(level(.highpass2, cutoff: 1_000, resonance: 0, frequency: 250) < -20)
        #expect(abs(level(.bandpass2, cutoff: 2_000, resonance: 0, frequency: 2_000)) < 0.05)
        #expect(level(.notch2, cutoff: 2_000, resonance: 0, frequency: 2_000) < -40)
        #expect(level(.lowpass1, cutoff: 500, resonance: 0, frequency: 8_000) < -20)
        #expect(abs(level(.highpass1, cutoff: 100, resonance: 0, frequency: 10_000)) < 0.1)
    }

    /// Two filtered voices mixed as a pair (`mixFilteredPair`) give the same bits as each on the
    /// general path (a metered voice takes it), mono and stereo.
    @Test(arguments: [false, true])
    func aPairOfFilteredVoicesIsTheSameToTheBitAsEachAlone(stereo: Bool) throws {
        func run(metered: Bool) throws -> [Float] {
            let (engine, sound) = try Self.engine(stereo: stereo)
            // An unfiltered voice first in the mix: the pair adds to what is there.
            let plain = InstrumentDefinition(firstPlayer: 0, pan: 0.5, layers: [InstrumentLayer(sounds: [sound])], midiNotes: [61])
            var i = InstrumentDefinition(firstPlayer: 1, voiceCount: 2, pan: -0.4, layers: [InstrumentLayer(sounds: [sound])],
                                         midiNotes: [60])
            i.filter = VoiceFilter(kind: .lowpass2, cutoff: 700, resonance: 9, veltrack: 2400)
            engine.setInstruments([plain, i])
            if metered { engine.send(.setMetering(player: 1, true)) }
            Self.midi(engine, [0x90, 61, 90], at: 0)
            Self.midi(engine, [0x90, 60, 127], at: 0)
            Self.midi(engine, [0x90, 60, 40], at: 100)
            return renderBlocks(engine, periods: 16, blockSize: 256).left
        }
        let paired = try run(metered: false)
        #expect(try run(metered: true) == paired)
        #expect(paired[200...].allSatisfy { $0 != 0 })
    }

    /// Every cutoff down to 1 Hz, with any resonance, is a stable filter: its poles inside the
    /// unit circle, and noise through it for two seconds stays bounded (in single precision the
    /// lowest cutoffs' poles round onto the circle and the output grows without end).
    @Test(arguments: [FilterKind.lowpass2, .highpass2, .bandpass2, .notch2, .lowpass1, .highpass1])
    func lowCutoffsStayStable(kind: FilterKind) throws {
        for rate in [44_100.0, 48_000, 96_000] {
            for cutoff: Float in [0, 1, 1.5, 2, 3, 5, 20] {
                for resonance: Float in [-60, -2, 0, 24, 60] {
                    let c = BiquadCoefficients.make(kind, cutoff: cutoff, resonance: resonance, sampleRate: rate)
                    let d = c.na1 * c.na1 + 4 * c.na2
                    let r = d < 0 ? (-c.na2).squareRoot() : max(abs(c.na1 + d.squareRoot()), abs(c.na1 - d.squareRoot())) / 2
                    #expect(r < 1, "\(kind) at \(cutoff) Hz, \(resonance) dB, \(rate) Hz: a pole at radius \(r)")
                }
            }
        }
        var f = FilterState()
        f.kind = kind
        f.baseCutoff = 1
        f.baseResonance = 24
        f.reset(sampleRate: 48_000)
        var x = Self.noise(96_000, seed: 9).map { $0 * 0.6 }
        x.withUnsafeMutableBufferPointer { Filtering.apply($0.baseAddress!, count: $0.count, f.coefficients, &f.left) }
        #expect(x.allSatisfy { abs($0) < 100 })
    }

    /// A skip longer than the filter needs to forget what came before it: the periods after are
    /// still the same to the bit, its memory rebuilt from the last frames alone
    /// (`BiquadCoefficients.settle`), however long the skip.
    @Test func aLongSkipRebuildsTheFiltersMemoryFromItsLastFrames() throws {
        func run(skipping: Bool) throws -> [Float] {
            let (engine, sound) = try Self.engine()
            var i = InstrumentDefinition(firstPlayer: 0, loops: -1, layers: [InstrumentLayer(sounds: [sound])], midiNotes: [60])
            i.filter = VoiceFilter(kind: .lowpass2, cutoff: 2_000, resonance: 6)
            engine.setInstruments([i])
            Self.midi(engine, [0x90, 60, 100], at: 0)
            _ = renderBlocks(engine, periods: 1, blockSize: 512)
            if skipping { return renderBlocks(engine, periods: 2, blockSize: 512, start: 512 * 200).left }
            return Array(renderBlocks(engine, periods: 201, blockSize: 512, start: 512).left[(512 * 199)...])
        }
        #expect(Int(BiquadCoefficients.make(.lowpass2, cutoff: 2_000, resonance: 6, sampleRate: 48_000).settle) < 512 * 199)
        let through = try run(skipping: false)
        #expect(try run(skipping: true) == through)
    }

    /// A controller moving the cutoff darkens a sounding voice on its frame.
    @Test func aControllerMovesTheCutoffOfASoundingVoiceOnItsFrame() throws {
        let (engine, sound) = try Self.engine()
        var i = InstrumentDefinition(firstPlayer: 0, layers: [InstrumentLayer(sounds: [sound])], midiNotes: [60])
        i.filter = VoiceFilter(kind: .lowpass2, cutoff: 12_000)
        i.modulations = [ControllerModulation(controller: 74, target: .cutoff, depth: -7200)]
        engine.setInstruments([i])
        Self.midi(engine, [0x90, 60, 127], at: 0)
        Self.midi(engine, [0xB0, 74, 127], at: 4_000)
        let out = renderBlocks(engine, periods: 8, blockSize: 1_000).left
        // The high frequencies: the sum of squared differences of successive samples.
        func roughness(_ r: Range<Int>) -> Float { r.dropFirst().reduce(0) { $0 + (out[$1] - out[$1 - 1]) * (out[$1] - out[$1 - 1]) } }
        #expect(roughness(3_000..<4_000) > 20 * roughness(5_000..<6_000))
        // Unchanged up to the frame: the same as a voice never moved.
        let (still, stillSound) = try Self.engine()
        i.layers = [InstrumentLayer(sounds: [stillSound])]
        still.setInstruments([i])
        Self.midi(still, [0x90, 60, 127], at: 0)
        #expect(Array(renderBlocks(still, periods: 4, blockSize: 1_000).left) == Array(out[..<4_000]))
    }

    /// Frames the device skipped: the filter's memory is where rendering them would leave it,
    /// so the periods after the gap are the same to the bit.
    @Test func skippedFramesLeaveTheFilterWhereRenderingThemWould() throws {
        func run(skipping: Bool) throws -> [Float] {
            let (engine, sound) = try Self.engine(stereo: true)
            Self.program(engine, sound: sound, kind: .lowpass2)
            _ = renderBlocks(engine, periods: 2, blockSize: 1_024)
            if skipping {
                return renderBlocks(engine, periods: 6, blockSize: 1_024, start: 6_144).left
            }
            return Array(renderBlocks(engine, periods: 10, blockSize: 1_024, start: 2_048).left[4_096...])
        }
        let through = try run(skipping: false)
        #expect(try run(skipping: true) == through)
        #expect(through.contains { $0 != 0 })
    }

    /// A voice without a filter is mixed as before: the filter's flag never set.
    @Test func anInstrumentWithoutAFilterLeavesItsVoicesUnfiltered() throws {
        let (engine, sound) = try Self.engine()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, layers: [InstrumentLayer(sounds: [sound])], midiNotes: [60])])
        Self.midi(engine, [0x90, 60, 127], at: 0)
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(engine.voices[0].isActive && !engine.voices[0].isFiltered)
    }
}
