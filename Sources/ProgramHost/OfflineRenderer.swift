import SamplerCore
import SoundFiles

/// Renders an engine to memory or a file without JACK, period by period, through exactly the
/// code path the live engine uses (`Engine.render` fed by a `CommandFeeder`).
///
/// Control thread only.
package struct OfflineRenderer {
    package let engine: Engine
    package let sampleRate: Double
    /// Frames per rendered block (the "period"); the output does not depend on it. Shorter
    /// than asked where sounds stream their tails and a voice could play past its head in one
    /// block (`Engine.longestBlockWithinHeads`).
    package let blockSize: Int

    /// With the engine's instruments and sounds in place (its program prepared).
    package init(engine: Engine, sampleRate: Double, blockSize: Int = 256) {
        precondition(blockSize > 0)
        self.engine = engine
        self.sampleRate = sampleRate
        self.blockSize = engine.longestBlockWithinHeads(atMost: blockSize)
    }

    /// Renders `frameCount` frames from device frame `start`, feeding `feeder` one block ahead, and
    /// hands each block to `sink`.
    package func render(frameCount: Int, from start: Frame = 0, feeder: inout CommandFeeder?,
                       sink: (UnsafePointer<Float>, UnsafePointer<Float>, Int) throws -> Void) rethrows {
        let left = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
        defer { left.deallocate(); right.deallocate() }
        var done = 0
        while done < frameCount {
            let n = min(blockSize, frameCount - done)
            let blockStart = start + Frame(done)
            feeder?.feed(engine, before: blockStart + Frame(n))
            engine.render(frameCount: n, periodStart: blockStart, left: left, right: right)
            engine.drainEvents { _ in }
            try sink(left, right, n)
            done += n
        }
    }

    /// Renders `frameCount` frames from device frame `start` into `outputCount` stereo outputs
    /// (see `Engine.render(frameCount:periodStart:outputs:outputCount:)`), feeding `feeder` one
    /// block ahead, and hands each block's buffers (left, right of output 0, of output 1, …) to
    /// `sink`.
    package func render(frameCount: Int, from start: Frame = 0, outputCount: Int, feeder: inout CommandFeeder?,
                       sink: (UnsafeBufferPointer<UnsafeMutablePointer<Float>>, Int) throws -> Void) rethrows {
        let buffers = UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2 * max(1, outputCount))
        for i in buffers.indices { buffers[i] = .allocate(capacity: blockSize) }
        defer {
            for b in buffers { b.deallocate() }
            buffers.deallocate()
        }
        var done = 0
        while done < frameCount {
            let n = min(blockSize, frameCount - done)
            let blockStart = start + Frame(done)
            feeder?.feed(engine, before: blockStart + Frame(n))
            engine.render(frameCount: n, periodStart: blockStart, outputs: buffers.baseAddress!, outputCount: max(1, outputCount))
            engine.drainEvents { _ in }
            try sink(UnsafeBufferPointer(buffers), n)
            done += n
        }
    }

    /// Renders into arrays (for tests and small jobs).
    package func renderToMemory(frameCount: Int, feeder: inout CommandFeeder?) -> (left: [Float], right: [Float]) {
        var l: [Float] = [], r: [Float] = []
        l.reserveCapacity(frameCount); r.reserveCapacity(frameCount)
        render(frameCount: frameCount, feeder: &feeder) { a, b, n in
            l.append(contentsOf: UnsafeBufferPointer(start: a, count: n))
            r.append(contentsOf: UnsafeBufferPointer(start: b, count: n))
        }
        return (l, r)
    }

    /// Renders into a WAV file at `path` (32-bit float unless `format` says otherwise).
    package func renderToFile(path: String, frameCount: Int, feeder: inout CommandFeeder?,
                             format: WAVSampleFormat = .float32) throws {
        let writer = try WAVFileWriter(path: path, sampleRate: Int(sampleRate), channelCount: 2, format: format)
        try render(frameCount: frameCount, feeder: &feeder) { l, r, n in
            try writer.write(left: l, right: r, frameCount: n)
        }
        writer.close()
    }
}
