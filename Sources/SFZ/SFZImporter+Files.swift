import Foundation

// Finding an SFZ file's samples on disk.

extension SFZImporter {
    static func fileExists(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// `path` (absolute) with `.`, `..` and repeated slashes taken out, without asking the file
    /// system (symbolic links stay as written).
    static func lexicalPath(_ path: String) -> String {
        // Only a path with "/." or "//" in it changes (a byte scan: no Foundation search).
        var previousWasSlash = false, changes = false
        for c in path.utf8 {
            if previousWasSlash, c == 0x2E || c == 0x2F { changes = true; break }
            previousWasSlash = c == 0x2F
        }
        guard changes else { return path }
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `path` (absolute, lexically standardized) itself if it exists, else the file whose path
    /// matches it ignoring letter case (component by component), else nil. `listings` keeps
    /// each directory's entries, lowercased, once read: a kit of many regions lists each
    /// directory once.
    static func findFile(_ standardized: String, exists: (String) -> Bool, listings: inout [String: [String: String]]) -> String? {
        if exists(standardized) { return standardized }
        // The directory as found on disk (each directory resolved once: `listings` keeps it
        // under the key "=" + the path as written), then the file in its listing.
        guard let slash = standardized.lastIndex(of: "/") else { return nil }
        let directory = String(standardized[..<slash]), name = standardized[standardized.index(after: slash)...]
        guard !name.isEmpty, let found = findDirectory(directory.isEmpty ? "/" : directory, listings: &listings) else { return nil }
        let candidate = found + (found.hasSuffix("/") ? "" : "/") + name
        if candidate != standardized, exists(candidate) { return candidate }
        guard let match = listing(found, &listings)[name.lowercased()] else { return nil }
        let path = found + (found.hasSuffix("/") ? "" : "/") + match
        return exists(path) ? path : nil
    }

    /// The directory `path` names, as spelled on disk (letter case matched component by
    /// component where it is not found as written), or nil.
    private static func findDirectory(_ path: String, listings: inout [String: [String: String]]) -> String? {
        if let known = listings["=" + path] { return known[""] }
        var result: String?
        var isDirectory: ObjCBool = false
        if path == "/" || FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue {
            result = path
        } else if let slash = path.lastIndex(of: "/") {
            let parent = slash == path.startIndex ? "/" : String(path[..<slash])
            let name = path[path.index(after: slash)...]
            if let found = findDirectory(parent, listings: &listings), let match = listing(found, &listings)[name.lowercased()] {
                result = found + (found.hasSuffix("/") ? "" : "/") + match
            }
        }
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
