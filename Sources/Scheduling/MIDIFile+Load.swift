import SafeFiles

extension MIDIFile {
    /// Reads and parses the file at `path` (a regular file, at most `maxBytes`). Errors name the
    /// file as `path` is written. Control thread only.
    package static func load(path: String) throws(MIDIFileError) -> MIDIFile {
        let bytes: [UInt8]
        do {
            bytes = try FileGate.read(path, limit: maxBytes)
        } catch .tooLarge(let size) {
            throw MIDIFileError(message: "\(path): the file is \(size >> 20) MB; a MIDI file is at most \(maxBytes >> 20) MB")
        } catch {
            throw MIDIFileError(message: "\(path): cannot read the file (\(error.reason))")
        }
        return try MIDIFile(bytes: bytes, file: path)
    }
}
