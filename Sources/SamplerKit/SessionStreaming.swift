import SamplerCore
import SoundFiles

/// What a session's streamed players share: one disk thread (started with the first streamed
/// player) and the rings, which are kept for reuse because the engine keeps every registered
/// ring for its own life.
///
/// Control thread only, under the session lock.
final class SessionStreaming {
    let streamer = DiskStreamer()
    private struct Spare {
        let ring: StreamRing
        let id: SoundID
        /// No voice reads the ring once this frame has been rendered.
        let freeAfter: Frame
    }
    private var spares: [Spare] = []

    /// A ring of `capacity` frames (a spare one that fits, or a new one registered with
    /// `engine`), with its sound id. Starts the disk thread.
    func ring(capacity: Int, channelCount: Int, sampleRate: Double, engine: Engine) throws -> (ring: StreamRing, id: SoundID) {
        streamer.start()
        let rendered = engine.renderedFrame
        if let i = spares.firstIndex(where: {
            $0.ring.capacity == capacity && $0.ring.channelCount == channelCount && $0.ring.sampleRate == sampleRate
                && rendered > $0.freeAfter
        }) {
            let spare = spares.remove(at: i)
            return (spare.ring, spare.id)
        }
        let ring = StreamRing(capacity: capacity, channelCount: channelCount, sampleRate: sampleRate)
        return (ring, try engine.register(stream: ring))
    }

    /// Takes back `stream`'s rings, reusable once `frame` (the stop sent for their player) has
    /// been rendered.
    func recycle(_ stream: PlayerStream, after frame: Frame) {
        stream.close()
        for (reader, id) in zip(stream.readers, stream.soundIDs) {
            spares.append(Spare(ring: reader.ring, id: id, freeAfter: frame))
        }
    }

    /// Takes back one reader's ring (a PlayerNode's streamed file), reusable once `frame` has
    /// been rendered.
    func recycle(reader: StreamReader, id: SoundID, after frame: Frame) {
        reader.park()
        streamer.remove(reader)
        spares.append(Spare(ring: reader.ring, id: id, freeAfter: frame))
    }

    /// Takes back a ring no reader was made for.
    func recycle(ring: (ring: StreamRing, id: SoundID), after frame: Frame) {
        spares.append(Spare(ring: ring.ring, id: ring.id, freeAfter: frame))
    }

    func stop() { streamer.stop() }
}
