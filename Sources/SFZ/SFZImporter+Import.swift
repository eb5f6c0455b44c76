import Foundation
import Patches

// Where an import begins: an SFZ file read from disk, or its bytes read by a caller that holds
// it, its includes and its samples to a root.

extension SFZImporter {
    /// Reads and converts the SFZ file at `path`. The kit it returns is one the patch format
    /// accepts (it is checked as `import-sfz` writes it).
    package static func importSFZ(path: String) throws -> Result {
        var reader = try SFZReader.read(path: path)
        var sections = reader.takeSections()
        return try finish(&sections, files: reader.files, path: path, sampleRoot: nil)
    }

    /// As `importSFZ(path:)`, for a load a message asks for: `bytes` are the file at `path`
    /// (read by the caller), and with `root` its includes are read only under that directory
    /// and every sample must be a file there: a sample whose directory (as written) is not a
    /// directory under the root, or whose file is not under it, refuses the kit
    /// (`SampleOutsideRoot`), one answer whether anything outside exists or not. Nothing
    /// outside the root is searched or read; links are not followed to decide what exists.
    package static func importSFZ(bytes: [UInt8], path: String, root: String?) throws -> Result {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let read = { (file: String) throws -> [UInt8] in try SFZReader.readFile(file, root: root) }
        var reader = try SFZReader.read(bytes: bytes, file: path, directory: directory, readInclude: read)
        var sections = reader.takeSections()
        return try finish(&sections, files: reader.files, path: path, sampleRoot: root)
    }

    /// A sample of a kit loaded under a root is not a file under it.
    package struct SampleOutsideRoot: Error, CustomStringConvertible {
        package let root: String
        package var description: String { "a sample it names is not under \(root)" }
    }

    private static func finish(_ sections: inout [SFZSection], files: [String], path: String, sampleRoot: String?) throws -> Result {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var result = try convert(&sections, files: files, file: path, directory: directory, fileExists: sampleRoot == nil ? Self.fileExists : Self.entryExists,
                                 sampleRoot: sampleRoot)
        result.patchJSON = result.kit.patchJSON()
        do { _ = try PatchLoader.decode(Data(result.patchJSON.utf8), file: path, baseDirectory: "/") } catch {
            throw SFZError("\(path): the kit does not fit the patch format: \(error)")
        }
        return result
    }
}
