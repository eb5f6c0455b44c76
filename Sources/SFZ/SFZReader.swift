import Foundation
import SafeFiles

/// One opcode as written: `name=value`, with the file and line it came from (an `#include`d
/// file names itself). Kept small: a library's read text holds millions.
package struct SFZOpcode: Equatable, Sendable {
    package var name: String
    package var value: String
    /// The file it is written in: an index into the reader's `files`.
    package var fileIndex: UInt32
    package var line: Int32
}

/// One header (`<region>`, `<group>`, …) and the opcodes written under it.
package struct SFZSection: Equatable, Sendable {
    package var header: String
    package var opcodes: [SFZOpcode]
    package var file: String
    package var line: Int
}

/// Reads SFZ text into headers and opcodes: comments (`//`, `/* */`), `#define $NAME value` and
/// `$NAME` in values, `#include "file"` (relative to the top file's directory, at most 16 deep
/// and 4,096 files), values that run to the next opcode or the end of the line (a `sample=`
/// path may hold spaces). Control thread only.
package struct SFZReader {
    /// The largest SFZ file read (bytes), and the most text read through includes altogether.
    package static let maximumFileSize = 16 << 20
    package static let maximumTotalSize = 64 << 20
    package static let maximumIncludeDepth = 16
    package static let maximumIncludes = 4096
    package static let maximumOpcodes = 2_000_000
    /// Headers over the whole read (a region is one: the import takes at most 100,000 regions).
    package static let maximumHeaders = 400_000
    package static let maximumDefines = 4096
    /// The longest name or value after `$NAME`s are replaced (bytes).
    package static let maximumValueSize = 64 << 10
    /// The most bytes `$NAME`s may add to the values of all the files together (what the values
    /// hold beyond the files' own text).
    package static let maximumExpansion = 64 << 20

    package private(set) var sections: [SFZSection] = []
    /// The files read, in the order they were begun (the top file first; a file included
    /// twice is listed twice): `SFZOpcode.fileIndex` indexes it.
    package private(set) var files: [String] = []
    private var defines: [String: String] = [:]
    /// The lengths of the defined names (with their `$`, in UTF-8 bytes), longest first: the
    /// only ones a `$` in a value is looked up at.
    private var defineLengths: [Int] = []
    /// Bytes `$NAME`s added to values so far (`maximumExpansion`).
    private var expandedBytes = 0
    private var includes = 0
    /// The last opcode was `base64data`, not yet ended by a header: the lines after it are more of it.
    private var continuingData = false
    private var totalBytes = 0
    private var opcodeCount = 0
    /// The directory includes resolve against (the top file's).
    private let directory: String
    /// Reads an included file (the tests and the fuzzer pass their own).
    private let readInclude: (String) throws -> [UInt8]

    /// The sections read, handed over: the reader keeps none (so that a caller freeing their
    /// opcodes as it goes holds the only copy).
    package mutating func takeSections() -> [SFZSection] {
        var taken: [SFZSection] = []
        swap(&taken, &sections)
        return taken
    }

    /// Reads `path` and every file it includes.
    package static func read(path: String) throws -> SFZReader {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var reader = SFZReader(directory: directory) { p in try Self.readFile(p) }
        try reader.parse(Self.readFile(path), file: path, depth: 0)
        return reader
    }

    /// Reads SFZ text held in `bytes`; `file` names it; includes go through `readInclude`.
    package static func read(bytes: [UInt8], file: String, directory: String,
                             readInclude: @escaping (String) throws -> [UInt8]) throws -> SFZReader {
        var reader = SFZReader(directory: directory, readInclude: readInclude)
        try reader.parse(bytes, file: file, depth: 0)
        return reader
    }

    private init(directory: String, readInclude: @escaping (String) throws -> [UInt8]) {
        self.directory = directory
        self.readInclude = readInclude
    }

    /// `path`'s bytes (with `root`: only a file under that directory).
    static func readFile(_ path: String, root: String? = nil) throws -> [UInt8] {
        do {
            return try FileGate.read(path, limit: maximumFileSize, root: root)
        } catch .tooLarge(let size) {
            throw SFZError("\(path): the file is \(size >> 20) MB; an SFZ file is at most \(maximumFileSize >> 20) MB")
        } catch {
            throw SFZError("\(path): cannot read the file (\(error.reason))")
        }
    }

    private mutating func parse(_ bytes: [UInt8], file: String, depth: Int) throws {
        totalBytes += bytes.count
        guard totalBytes <= Self.maximumTotalSize else {
            throw SFZError("\(file): the SFZ files together exceed \(Self.maximumTotalSize >> 20) MB")
        }
        let fileIndex = UInt32(files.count)
        files.append(file)
        // SFZ files are mostly ASCII; Latin-1 paths in old kits are read as such. The text is
        // read as bytes (every character the syntax gives meaning is ASCII), and only names and
        // values become strings.
        let isUTF8 = String(validating: bytes, as: UTF8.self) != nil
        let decode: (ArraySlice<UInt8>) -> String = isUTF8
            ? { String(decoding: $0, as: UTF8.self) }
            : { String(String.UnicodeScalarView($0.map { Unicode.Scalar($0) })) }
        var inBlockComment = false
        var lineNumber = 0
        var cleaned: [UInt8] = []
        let count = bytes.count
        var lineStart = 0
        while true {
            // A line ends at "\n", "\r\n", "\r", vertical tab or form feed (as Swift's newlines).
            var lineEnd = lineStart
            while lineEnd < count, !Self.isLineEnd(bytes[lineEnd]) { lineEnd += 1 }
            lineNumber += 1
            // A line without a comment (the most) is parsed where it lies; so is embedded base64
            // data, where "//" is data (as sfizz reads it).
            if !inBlockComment, continuingData || !Self.holdsCommentStart(bytes[lineStart..<lineEnd])
                || Self.holdsBase64Data(bytes[lineStart..<lineEnd]) {
                try parseLine(bytes[lineStart..<lineEnd], decode: decode, file: file, fileIndex: fileIndex, line: lineNumber, depth: depth)
                if lineEnd >= count { break }
                lineStart = bytes[lineEnd] == 13 && lineEnd + 1 < count && bytes[lineEnd + 1] == 10 ? lineEnd + 2 : lineEnd + 1
                continue
            }
            // Comments.
            cleaned.removeAll(keepingCapacity: true)
            var i = lineStart
            while i < lineEnd {
                let c = bytes[i]
                if inBlockComment {
                    if c == UInt8(ascii: "*"), i + 1 < lineEnd, bytes[i + 1] == UInt8(ascii: "/") { inBlockComment = false; i += 2 } else { i += 1 }
                    continue
                }
                if c == UInt8(ascii: "/"), i + 1 < lineEnd {
                    if bytes[i + 1] == UInt8(ascii: "/") { break }
                    if bytes[i + 1] == UInt8(ascii: "*") { inBlockComment = true; i += 2; continue }
                }
                cleaned.append(c)
                i += 1
            }
            try parseLine(cleaned[...], decode: decode, file: file, fileIndex: fileIndex, line: lineNumber, depth: depth)
            if lineEnd >= count { break }
            lineStart = bytes[lineEnd] == 13 && lineEnd + 1 < count && bytes[lineEnd + 1] == 10 ? lineEnd + 2 : lineEnd + 1
        }
        // Embedded data ends with its file.
        continuingData = false
    }

    private static func isLineEnd(_ c: UInt8) -> Bool { c >= 10 && c <= 13 }

    /// Whether `line` holds "//" or "/*" (where a comment may start: without one, the line is
    /// what the comments leave of it).
    private static func holdsCommentStart(_ line: ArraySlice<UInt8>) -> Bool {
        var i = line.startIndex
        while let slash = line[i...].firstIndex(of: UInt8(ascii: "/")) {
            let next = slash + 1
            guard next < line.endIndex else { return false }
            if line[next] == UInt8(ascii: "/") || line[next] == UInt8(ascii: "*") { return true }
            i = next
        }
        return false
    }

    /// Whether `line` holds a `base64data=` opcode that no comment before it hides.
    private static func holdsBase64Data(_ line: ArraySlice<UInt8>) -> Bool {
        let key = Array("base64data=".utf8)
        guard line.count >= key.count else { return false }
        var i = line.startIndex
        while i + key.count <= line.endIndex {
            if line[i] == UInt8(ascii: "/"), i + 1 < line.endIndex, line[i + 1] == UInt8(ascii: "/") || line[i + 1] == UInt8(ascii: "*") {
                return false
            }
            if line[i] == key[0], line[i..<(i + key.count)].elementsEqual(key) { return true }
            i += 1
        }
        return false
    }

    /// Whether base64 data ends before `c`: a header or a directive (`#include`, `#define`), as sfizz ends it.
    private static func endsData(_ c: UInt8) -> Bool { c == UInt8(ascii: "<") || c == UInt8(ascii: "#") }

    private static func isBlank(_ c: UInt8) -> Bool { c == 32 || c == 9 }

    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "$")
    }

    private static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c == 95 || c == 36
    }

    private mutating func parseLine(_ text: ArraySlice<UInt8>, decode: (ArraySlice<UInt8>) -> String, file: String, fileIndex: UInt32,
                                    line: Int, depth: Int) throws {
        var p = text.startIndex
        let end = text.endIndex
        if continuingData {
            // More of the last base64data, to the next header.
            var e = p
            while e < end, !Self.endsData(text[e]) { e += 1 }
            let more = decode(text[p..<e].filter { !Self.isBlank($0) }[...])
            let last = sections.count - 1, o = sections[last].opcodes.count - 1
            sections[last].opcodes[o].value += more
            if e == end { return }
            continuingData = false
            p = e
        }
        while p < end, Self.isBlank(text[p]) { p += 1 }
        let s = text[p...]
        if s.starts(with: Array("#define".utf8)) {
            let parts = s.dropFirst(7).split(maxSplits: 1, whereSeparator: Self.isBlank)
            guard parts.count == 2, parts[0].first == UInt8(ascii: "$") else {
                throw SFZError("\(file): line \(line): expected #define $NAME value")
            }
            let defineName = decode(parts[0])
            guard defines.count < Self.maximumDefines || defines[defineName] != nil else {
                throw SFZError("\(file): line \(line): more than \(Self.maximumDefines) #define names")
            }
            // A define's value is expanded when it is defined ($B defined as $A is $A's value).
            defines[defineName] = try substitute(decode(parts[1]).trimmingCharacters(in: .whitespaces), file: file, line: line)
            let length = defineName.utf8.count
            if !defineLengths.contains(length) {
                defineLengths.append(length)
                defineLengths.sort(by: >)
            }
            return
        }
        if s.starts(with: Array("#include".utf8)) {
            let rest = decode(s.dropFirst(8)).trimmingCharacters(in: .whitespaces)
            guard rest.count >= 2, rest.first == "\"", rest.last == "\"" else {
                throw SFZError("\(file): line \(line): expected #include \"file\"")
            }
            let name = try substitute(String(rest.dropFirst().dropLast()), file: file, line: line).replacingOccurrences(of: "\\", with: "/")
            guard depth < Self.maximumIncludeDepth else {
                throw SFZError("\(file): line \(line): #include \"\(name)\": includes nest more than \(Self.maximumIncludeDepth) deep (an include that includes itself?)")
            }
            includes += 1
            guard includes <= Self.maximumIncludes else {
                throw SFZError("\(file): line \(line): more than \(Self.maximumIncludes) #include lines")
            }
            let path = name.hasPrefix("/") ? name : directory + "/" + name
            let bytes: [UInt8]
            do { bytes = try readInclude(path) } catch {
                throw SFZError("\(file): line \(line): #include \"\(name)\": \(error)")
            }
            try parse(bytes, file: path, depth: depth + 1)
            return
        }
        func prefix40(_ from: Int, _ to: Int) -> String { decode(text[from..<min(to, from + 40)]) }
        while true {
            while p < end, Self.isBlank(text[p]) { p += 1 }
            if p == end { return }
            if text[p] == UInt8(ascii: "<") {
                guard let close = text[p...].firstIndex(of: UInt8(ascii: ">")) else {
                    throw SFZError("\(file): line \(line): a header without its closing >")
                }
                let nameBytes = text[(p + 1)..<close]
                guard !nameBytes.isEmpty, nameBytes.allSatisfy(Self.isNameByte) else {
                    throw SFZError("\(file): line \(line): \"<\(decode(nameBytes))>\" is not a header")
                }
                guard sections.count < Self.maximumHeaders else {
                    throw SFZError("\(file): line \(line): more than \(Self.maximumHeaders) headers")
                }
                sections.append(SFZSection(header: decode(nameBytes), opcodes: [], file: file, line: line))
                p = close + 1
                continue
            }
            // name=value; the value runs to the next " name=" or "<" or the end of the line.
            guard let equals = text[p...].firstIndex(of: UInt8(ascii: "=")) else {
                throw SFZError("\(file): line \(line): expected an opcode (name=value) or a header, got \"\(prefix40(p, end))\"")
            }
            let nameBytes = text[p..<equals]
            let plain = !nameBytes.contains(UInt8(ascii: "$"))
            let name = plain ? decode(nameBytes) : try substitute(decode(nameBytes), file: file, line: line)
            guard !name.isEmpty, plain ? nameBytes.allSatisfy(Self.isNameByte) : name.allSatisfy(Self.isNameCharacter) else {
                throw SFZError("\(file): line \(line): \"\(prefix40(p, equals))\" is not an opcode name")
            }
            var e = equals + 1
            var valueEnd = e
            if name == "base64data" {
                // A sample embedded in the file (sfizz's `<sample>`): the data runs to the next
                // header, its blanks (line breaks) dropped; no #define names in it.
                while e < end, !Self.endsData(text[e]) { e += 1 }
                let data = text[(equals + 1)..<e].filter { !Self.isBlank($0) }
                opcodeCount += 1
                guard opcodeCount <= Self.maximumOpcodes else {
                    throw SFZError("\(file): line \(line): more than \(Self.maximumOpcodes) opcodes")
                }
                if sections.isEmpty {
                    throw SFZError("\(file): line \(line): \(name)= before any header (<region>, <group>, …)")
                }
                sections[sections.count - 1].opcodes.append(SFZOpcode(name: name, value: decode(data[...]), fileIndex: fileIndex, line: Int32(line)))
                // Lines after it hold more of it, up to the next header.
                continuingData = e == end
                p = e
                continue
            }
            scan: while e < end {
                let c = text[e]
                if c == UInt8(ascii: "<") { break scan }
                if Self.isBlank(c) {
                    // Does another opcode start after this blank?
                    var j = e
                    while j < end, Self.isBlank(text[j]) { j += 1 }
                    var k = j
                    while k < end, Self.isNameByte(text[k]) { k += 1 }
                    if j == end || (k > j && k < end && text[k] == UInt8(ascii: "=")) || text[j] == UInt8(ascii: "<") { break scan }
                    e = j
                    continue
                }
                e += 1
                valueEnd = e
            }
            let value = try substitute(decode(text[(equals + 1)..<valueEnd]), file: file, line: line)
            opcodeCount += 1
            guard opcodeCount <= Self.maximumOpcodes else {
                throw SFZError("\(file): line \(line): more than \(Self.maximumOpcodes) opcodes")
            }
            let opcode = SFZOpcode(name: name, value: value, fileIndex: fileIndex, line: Int32(line))
            if sections.isEmpty {
                throw SFZError("\(file): line \(line): \(name)= before any header (<region>, <group>, …)")
            }
            sections[sections.count - 1].opcodes.append(opcode)
            p = e
        }
    }

    /// `text` with each `$NAME` replaced by its define, in one pass over its UTF-8: at each `$`,
    /// the longest defined name that the following letters, digits and underscores start with
    /// (only the lengths some name has are looked up). Linear in the text; a result over
    /// `maximumValueSize` bytes, or more than `maximumExpansion` bytes added over the whole read,
    /// is an error.
    private mutating func substitute(_ text: String, file: String, line: Int) throws -> String {
        guard !defines.isEmpty, text.utf8.contains(UInt8(ascii: "$")) else { return text }
        var text = text
        text.makeContiguousUTF8()
        return try text.utf8.withContiguousStorageIfAvailable { try substitute(bytes: $0, file: file, line: line) }!
    }

    private mutating func substitute(bytes: UnsafeBufferPointer<UInt8>, file: String, line: Int) throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "$") {
                // A name's letters: ASCII letters, digits and underscores, and any non-ASCII
                // character (a defined name may hold letters of any script).
                var j = i + 1
                while j < bytes.count, j - i <= 256, Self.isNameByte(bytes[j]) && bytes[j] != UInt8(ascii: "$") || bytes[j] >= 0x80 { j += 1 }
                var k = i + 1
                for length in defineLengths where length >= 2 && i + length <= j {
                    if let value = defines[String(decoding: UnsafeBufferPointer(rebasing: bytes[i..<(i + length)]), as: UTF8.self)] {
                        out.append(contentsOf: value.utf8)
                        k = i + length
                        break
                    }
                }
                if k > i + 1 {
                    i = k
                    guard out.count <= Self.maximumValueSize else {
                        throw SFZError("\(file): line \(line): a value over \(Self.maximumValueSize >> 10) kB after #define names are replaced")
                    }
                    continue
                }
            }
            out.append(bytes[i])
            i += 1
        }
        let added = out.count - bytes.count
        if added > 0 {
            expandedBytes += added
            guard expandedBytes <= Self.maximumExpansion else {
                throw SFZError("\(file): line \(line): #define names add more than \(Self.maximumExpansion >> 20) MB to the values in all")
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// An SFZ problem, one line naming the file and line.
package struct SFZError: Error, Equatable, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
