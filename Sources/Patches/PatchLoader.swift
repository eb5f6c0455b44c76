import Foundation
import SafeFiles

/// Reads patch files. Control thread only.
package enum PatchLoader {
    /// The largest patch file read (bytes): 16 MB.
    package static let maximumFileSize = 16 << 20

    /// Reads and decodes the patch file at `path`, of any supported version, into the one model.
    /// Relative sound paths resolve against the directory that holds the file; errors name the
    /// file as `path` is written. Only a regular file is read (through `FileGate`: a FIFO or a
    /// device is refused without blocking), at most `maximumFileSize` bytes; with `root`, only
    /// one under that directory.
    ///
    /// With `objectsOnly`, a file whose first bytes are not a JSON object's opening brace (after
    /// white space) is refused before the rest of it is read (for loads a message asks for).
    package static func load(path: String, root: String? = nil, objectsOnly: Bool = false) throws(PatchError) -> Patch {
        let bytes: [UInt8]
        let begins: (([UInt8]) -> Bool)? = objectsOnly ? { Self.beginsAsAnObject($0) } : nil
        do {
            bytes = try FileGate.read(path, limit: maximumFileSize, root: root, begins: begins)
        } catch .notThisKind {
            throw PatchError(file: path, message: "not a patch (a patch is a JSON object)")
        } catch .tooLarge(let size) {
            throw PatchError(file: path, message: "the file is \(size >> 20) MB; a patch is at most \(maximumFileSize >> 20) MB")
        } catch {
            throw PatchError(file: path, message: "cannot read the file (\(error.reason))")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try decode(Data(bytes), file: path, baseDirectory: directory)
    }

    /// Whether `bytes` (a file's first) begin as a JSON object: white space (and a UTF-8 byte
    /// order mark), then `{`.
    static func beginsAsAnObject(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        // (64 KB of white space is not a patch either.)
        return rest.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{")
    }

    /// Decodes a patch of any supported version from `data`. `file` names it in errors; relative
    /// sound paths resolve against `baseDirectory` (itself resolved against the working directory
    /// if relative).
    package static func decode(_ data: Data, file: String, baseDirectory: String) throws(PatchError) -> Patch {
        guard data.count <= maximumFileSize else {
            throw PatchError(file: file, message: "the patch is \(data.count >> 20) MB; a patch is at most \(maximumFileSize >> 20) MB")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse([UInt8](data))
        } catch {
            throw PatchError(
                file: file, message: "invalid JSON at line \(error.line), column \(error.column): \(error.message)")
        }
        let root = try JSONNode(value: value, path: .root, file: file).object()
        // The version decides which keys are allowed, so it is read before anything else.
        let version = try root.required("version").integer()
        let base = URL(fileURLWithPath: baseDirectory, isDirectory: true)
        switch version {
        case 1:
            return try PatchFormatV1.decode(root, file: file, baseDirectory: base)
        case 2:
            return try PatchFormatV2.decode(root, file: file, baseDirectory: base)
        default:
            throw PatchError(
                file: file, path: "version",
                message: "unsupported version \(version) (this build reads versions 1 and 2)")
        }
    }
}
