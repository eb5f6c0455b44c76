import CSoxr
import Foundation
import SoundFiles
import Testing

struct ResamplerTests {
    @Test func equalRatesReturnTheInput() throws {
        let input = [Signal.noise(frames: 100, seed: 11), Signal.noise(frames: 100, seed: 12)]
        #expect(try Resampler.resample(input, from: 44_100, to: 44_100) == input)
    }

    @Test(arguments: [
        (44_100, 48_000.0, 44_100.0), (1, 44_100, 48_000), (7, 48_000, 44_100), (1_001, 22_050, 96_000),
        (12_345, 96_000, 44_100), (3, 48_000, 8_000), (480, 48_000, 47_999),
    ] as [(Int, Double, Double)])
    func outputLengthIsTheRoundedRatio(frames: Int, from source: Double, to target: Double) throws {
        let output = try Resampler.resample([Signal.noise(frames: frames, seed: 13)], from: source, to: target)
        #expect(output[0].count == Int((Double(frames) * target / source).rounded()))
    }

    @Test func channelsAreConvertedIndependently() throws {
        let silent = [Float](repeating: 0, count: 1_000)
        let tone = Signal.sine(frequency: 100, rate: 8_000, frames: 1_000)
        let output = try Resampler.resample([silent, tone], from: 8_000, to: 16_000)
        #expect(output[0].allSatisfy { $0 == 0 })
        #expect(abs(Signal.zeroCrossings(output[1]) - 25) <= 1)
    }

    /// A 997 Hz + 15 kHz tone at 44.1 kHz converted to 48 kHz is the same tone at 48 kHz within
    /// −110 dB (away from the edges, where the tone starts and stops abruptly): below a 16-bit
    /// sample's quantization (−98 dB), so no listener hears the converter. Measured −115 dB.
    @Test func conversionKeepsATonePastSixteenBits() throws {
        func tone(_ rate: Double, _ frames: Int) -> [Float] {
            (0..<frames).map { i -> Float in
                let t = Double(i) / rate
                let a: Double = 0.5 * sin(2 * Double.pi * 997 * t)
                let b: Double = 0.25 * sin(2 * Double.pi * 15_000 * t)
                return Float(a + b)
            }
        }
        let output = try Resampler.resample([tone(44_100, 44_100)], from: 44_100, to: 48_000)[0]
        let ideal = tone(48_000, 48_000)
        let worst = (2_000..<46_000).map { abs(Double(output[$0]) - Double(ideal[$0])) }.max()!
        #expect(20 * log10(worst) < -110, "largest error \(20 * log10(worst)) dB")
    }

    /// A conversion gives the bits of libsoxr's own one-shot conversion, whatever was converted
    /// before it.
    @Test func aConversionIsLibsoxrsOneShotConversion() throws {
        func oneShot(_ input: [Float], _ source: Double, _ target: Double) -> [Float] {
            let frames = Int((Double(input.count) * target / source).rounded())
            var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            var output = [Float](repeating: 0, count: frames + 64)
            var made = 0
            let error = input.withUnsafeBufferPointer { i in
                output.withUnsafeMutableBufferPointer { o in
                    soxr_oneshot(source, target, 1, i.baseAddress, i.count, nil, o.baseAddress, o.count, &made, &io, &quality, nil)
                }
            }
            #expect(error == nil)
            return Array(output.prefix(frames))
        }
        let a = Signal.noise(frames: 30_001, seed: 31), b = Signal.sine(frequency: 1_000, rate: 44_100, frames: 7_000)
        for (source, target) in [(44_100.0, 48_000.0), (48_000, 44_100), (96_000, 48_000)] {
            let first = try Resampler.resample([a], from: source, to: target)[0]
            _ = try Resampler.resample([b, b], from: source, to: target)
            let again = try Resampler.resample([a], from: source, to: target)[0]
            #expect(first == oneShot(a, source, target))
            #expect(again == first)
        }
    }

    /// A head converted from the input's first chunks is the whole conversion's beginning, bit
    /// for bit, however the input is cut: what a streamed sound's head at another rate relies on.
    @Test(arguments: [
        (44_100.0, 48_000.0, 1_000), (44_100, 48_000, 4_096), (48_000, 44_100, 333), (96_000, 48_000, 4_096),
        (22_050, 48_000, 777), (32_000, 48_000, 10_000), (88_200, 44_100, 1),
    ] as [(Double, Double, Int)])
    func aHeadIsTheWholeConversionsBeginning(from source: Double, to target: Double, chunk: Int) throws {
        let input = [Signal.noise(frames: 60_000, seed: 21), Signal.sine(frequency: 440, rate: source, frames: 60_000)]
        let whole = try Resampler.resample(input, from: source, to: target)
        var at = 0
        let head = try #require(try Resampler.resampleHead(channelCount: 2, frames: 8_193, from: source, to: target) {
            defer { at += chunk }
            return at >= 60_000 ? [] : input.map { Array($0[at..<min(60_000, at + chunk)]) }
        })
        #expect(head.map(\.count) == [8_193, 8_193])
        for c in 0..<2 { #expect(head[c] == Array(whole[c].prefix(8_193))) }
        #expect(at < 60_000 - max(chunk, 12_000), "read only as far as the head needs")
        // An input shorter than the head gives none.
        var once = false
        #expect(try Resampler.resampleHead(channelCount: 1, frames: 8_193, from: source, to: target) {
            defer { once = true }
            return once ? [] : [Array(input[0].prefix(2_000))]
        } == nil)
    }

    /// A converter given back (after part of a sound, or a whole one flushed) and taken again
    /// makes the same bits as a new one. Rates no other test uses, so that the pool's converter
    /// is this test's.
    @Test func aRecycledConverterConvertsAsANewOne() throws {
        let a = [Signal.noise(frames: 9_000, seed: 21), Signal.noise(frames: 9_000, seed: 22)]
        let b = [Signal.noise(frames: 7_000, seed: 23), Signal.noise(frames: 7_000, seed: 24)]
        let fresh = try Resampler.Stream(channelCount: 2, from: 37_123, to: 48_000).convert(b)
        let used = try Resampler.Stream.reusable(channelCount: 2, from: 37_123, to: 48_000)
        _ = try used.convert(a)
        Resampler.Stream.recycle(used)
        let again = try Resampler.Stream.reusable(channelCount: 2, from: 37_123, to: 48_000)
        #expect(again === used)
        #expect(try again.convert(b) == fresh)
        _ = try again.convert(nil)
        Resampler.Stream.recycle(again)
        let third = try Resampler.Stream.reusable(channelCount: 2, from: 37_123, to: 48_000)
        #expect(third === used)
        #expect(try third.convert(b) == fresh)
    }

    @Test func conversionIsDeterministic() throws {
        let input = [Signal.noise(frames: 5_000, seed: 14)]
        let a = try Resampler.resample(input, from: 44_100, to: 48_000)
        let b = try Resampler.resample(input, from: 44_100, to: 48_000)
        #expect(a == b)
    }

    @Test func aRatioBeyondTheConvertersIsAnError() {
        #expect(throws: SoundFileError(file: "", reason: .resampleFailed(
            "ratio 0.001 (100000.0 Hz → 100.0 Hz) is outside 1/256…256"))) {
            try Resampler.resample([[0, 1]], from: 100_000, to: 100)
        }
    }

    @Test func aNonPositiveRateIsAnError() {
        #expect(throws: SoundFileError.self) { try Resampler.resample([[0, 1]], from: 0, to: 48_000) }
    }
}
