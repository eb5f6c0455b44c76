import Foundation
import SafeFiles

// Finding an SFZ file's samples on disk.

extension SFZImporter {
    static func fileExists(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// `path` (absolute, lexically standardized) itself if it exists, else the file whose path
    /// matches it ignoring letter case (component by component), else nil. `listings` keeps
    /// each directory's entries, lowercased, once read: a kit of many regions lists each
    /// directory once.
    static func findFile(_ standardized: String, exists: (String) -> Bool, listings: inout [String: [String: String]]) -> String? {
        // A path longer than the system's (PATH_MAX) names no file: nothing is looked up.
        guard standardized.utf8.count < 4096 else { return nil }
        if exists(standardized) { return standardized }
        // The directory as found on disk, then the file in its listing.
        guard let slash = standardized.lastIndex(of: "/") else { return nil }
        let directory = String(standardized[..<slash]), name = standardized[standardized.index(after: slash)...]
        guard !name.isEmpty, let found = findDirectory(directory.isEmpty ? "/" : directory, listings: &listings) else { return nil }
        let candidate = found + (found.hasSuffix("/") ? "" : "/") + name
        if candidate != standardized, exists(candidate) { return candidate }
        guard let match = listing(found, &listings)[name.lowercased()] else { return nil }
        let path = found + (found.hasSuffix("/") ? "" : "/") + match
        return exists(path) ? path : nil
    }

    /// The directory `path` (absolute, under 4,096 bytes) names, as spelled on disk: letter case
    /// matched component by component from the root where it is not found as written; nil when
    /// none matches. Each directory is resolved once (`listings` keeps it under "=" + the path
    /// as written).
    private static func findDirectory(_ path: String, listings: inout [String: [String: String]]) -> String? {
        if let known = listings["=" + path] { return known[""] }
        var found = "/"
        var written = ""
        var result: String? = "/"
        for component in path.split(separator: "/") {
            written += "/" + component
            if let known = listings["=" + written] {
                guard let k = known[""] else { result = nil; break }
                found = k
                continue
            }
            let candidate = found + (found.hasSuffix("/") ? "" : "/") + component
            var isDirectory: ObjCBool = false
            var next: String?
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), isDirectory.boolValue {
                next = candidate
            } else if let match = listing(found, &listings)[component.lowercased()] {
                next = found + (found.hasSuffix("/") ? "" : "/") + match
            }
            listings["=" + written] = next.map { ["": $0] } ?? [:]
            guard let next else { result = nil; break }
            found = next
        }
        if result != nil { result = found }
        listings["=" + path] = result.map { ["": $0] } ?? [:]
        return result
    }

    /// The entries of directory `path`, by lowercased name (read once).
    private static func listing(_ path: String, _ listings: inout [String: [String: String]]) -> [String: String] {
        if let known = listings[path] { return known }
        var entries: [String: String] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where entries[entry.lowercased()] == nil {
            entries[entry.lowercased()] = entry
        }
        listings[path] = entries
        return entries
    }
}

extension String {
    /// Without the blanks (spaces and tabs) at either end.
    var trimmedBlanks: String {
        let u = utf8
        guard let first = u.first, let last = u.last else { return self }
        if first != 0x20, first != 0x09, last != 0x20, last != 0x09 { return self }
        return trimmingCharacters(in: .whitespaces)
    }
}
