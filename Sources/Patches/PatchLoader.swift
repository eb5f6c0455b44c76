import Foundation

/// Reads patch files. Control thread only.
package enum PatchLoader {
    /// The largest patch file read (bytes): 16 MB.
    package static let maximumFileSize = 16 << 20

    /// The format versions this build reads.
    static let supportedVersions = 1...2

    /// Reads and decodes the patch file at `path`, of any supported version, into the one model.
    /// Relative sound paths resolve against the directory that holds the file; errors name the
    /// file as `path` is written.
    package static func load(path: String) throws(PatchError) -> Patch {
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > maximumFileSize {
            throw PatchError(file: path, message: "the file is \(size >> 20) MB; a patch is at most \(maximumFileSize >> 20) MB")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PatchError(file: path, message: "cannot read the file (\(reason(error)))")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try decode(data, file: path, baseDirectory: directory)
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

    /// Why a read failed, in a few lower-case words.
    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        let underlying = (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        if let underlying, underlying.domain == NSPOSIXErrorDomain {
            switch underlying.code {
            case Int(ENOENT), Int(ENOTDIR): return "no such file"
            case Int(EACCES): return "permission denied"
            case Int(EISDIR): return "it is a directory"
            default: break
            }
        }
        let text = (underlying ?? nsError).localizedDescription
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
