import Foundation
import SafeFiles

/// One opcode as written: `name=value`, with the file and line it came from (an `#include`d
/// file names itself).
package struct SFZOpcode: Equatable, Sendable {
    package var name: String
    package var value: String
    package var file: String
    package var line: Int
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
    private var defines: [String: String] = [:]
    /// The lengths of the defined names (with their `$`), longest first: the only ones a `$`
    /// in a value is looked up at.
    private var defineLengths: [Int] = []
    /// Bytes `$NAME`s added to values so far (`maximumExpansion`).
    private var expandedBytes = 0
    private var includes = 0
    private var totalBytes = 0
    private var opcodeCount = 0
    /// The directory includes resolve against (the top file's).
    private let directory: String
    /// Reads an included file (the tests and the fuzzer pass their own).
    private let readInclude: (String) throws -> [UInt8]

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

    static func readFile(_ path: String) throws -> [UInt8] {
        do {
            return try FileGate.read(path, limit: maximumFileSize)
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
        // SFZ files are mostly ASCII; Latin-1 paths in old kits are read as such.
        let text = String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        var inBlockComment = false
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on every kind of line end (Windows files).
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = Substring(rawLine)
            // Comments.
            var cleaned = ""
            var i = line.startIndex
            while i < line.endIndex {
                if inBlockComment {
                    if line[i...].hasPrefix("*/") { inBlockComment = false; i = line.index(i, offsetBy: 2) } else { i = line.index(after: i) }
                    continue
                }
                if line[i...].hasPrefix("//") { break }
                if line[i...].hasPrefix("/*") { inBlockComment = true; i = line.index(i, offsetBy: 2); continue }
                cleaned.append(line[i])
                i = line.index(after: i)
            }
            try parseLine(cleaned, file: file, line: lineNumber, depth: depth)
        }
    }

    private static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "$")
    }

    private mutating func parseLine(_ text: String, file: String, line: Int, depth: Int) throws {
        var s = Substring(text).drop { $0 == " " || $0 == "\t" }
        if s.hasPrefix("#define") {
            let parts = s.dropFirst(7).split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count == 2, parts[0].hasPrefix("$") else {
                throw SFZError("\(file): line \(line): expected #define $NAME value")
            }
            guard defines.count < Self.maximumDefines || defines[String(parts[0])] != nil else {
                throw SFZError("\(file): line \(line): more than \(Self.maximumDefines) #define names")
            }
            // A define's value is expanded when it is defined ($B defined as $A is $A's value).
            let defineName = String(parts[0])
            defines[defineName] = try substitute(String(parts[1]).trimmingCharacters(in: .whitespaces), file: file, line: line)
            let length = defineName.unicodeScalars.count
            if !defineLengths.contains(length) {
                defineLengths.append(length)
                defineLengths.sort(by: >)
            }
            return
        }
        if s.hasPrefix("#include") {
            let rest = s.dropFirst(8).trimmingCharacters(in: .whitespaces)
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
        while true {
            s = s.drop { $0 == " " || $0 == "\t" }
            if s.isEmpty { return }
            if s.first == "<" {
                guard let close = s.firstIndex(of: ">") else { throw SFZError("\(file): line \(line): a header without its closing >") }
                let name = String(s[s.index(after: s.startIndex)..<close])
                guard !name.isEmpty, name.allSatisfy(Self.isNameCharacter) else {
                    throw SFZError("\(file): line \(line): \"<\(name)>\" is not a header")
                }
                guard sections.count < Self.maximumHeaders else {
                    throw SFZError("\(file): line \(line): more than \(Self.maximumHeaders) headers")
                }
                sections.append(SFZSection(header: name, opcodes: [], file: file, line: line))
                s = s[s.index(after: close)...]
                continue
            }
            // name=value; the value runs to the next " name=" or "<" or the end of the line.
            guard let equals = s.firstIndex(of: "=") else {
                throw SFZError("\(file): line \(line): expected an opcode (name=value) or a header, got \"\(s.prefix(40))\"")
            }
            let name = try substitute(String(s[..<equals]), file: file, line: line)
            guard !name.isEmpty, name.allSatisfy(Self.isNameCharacter) else {
                throw SFZError("\(file): line \(line): \"\(s[..<equals].prefix(40))\" is not an opcode name")
            }
            var end = s.index(after: equals)
            var valueEnd = end
            scan: while end < s.endIndex {
                let c = s[end]
                if c == "<" { break scan }
                if c == " " || c == "\t" {
                    // Does another opcode start after this blank?
                    var j = end
                    while j < s.endIndex, s[j] == " " || s[j] == "\t" { j = s.index(after: j) }
                    var k = j
                    while k < s.endIndex, Self.isNameCharacter(s[k]) { k = s.index(after: k) }
                    if j == s.endIndex || (k > j && k < s.endIndex && s[k] == "=") || s[j] == "<" { break scan }
                    end = j
                    continue
                }
                end = s.index(after: end)
                valueEnd = end
            }
            let value = try substitute(String(s[s.index(after: equals)..<valueEnd]), file: file, line: line)
            opcodeCount += 1
            guard opcodeCount <= Self.maximumOpcodes else {
                throw SFZError("\(file): line \(line): more than \(Self.maximumOpcodes) opcodes")
            }
            let opcode = SFZOpcode(name: name, value: value, file: file, line: line)
            if sections.isEmpty {
                throw SFZError("\(file): line \(line): \(name)= before any header (<region>, <group>, …)")
            }
            sections[sections.count - 1].opcodes.append(opcode)
            s = s[end...]
        }
    }

    /// `text` with each `$NAME` replaced by its define, in one pass: at each `$`, the longest
    /// defined name that the following letters, digits and underscores start with (only the
    /// lengths some name has are looked up). Linear in the text; a result over `maximumValueSize`
    /// bytes, or more than `maximumExpansion` bytes added over the whole read, is an error.
    private mutating func substitute(_ text: String, file: String, line: Int) throws -> String {
        guard !defines.isEmpty, text.utf8.contains(UInt8(ascii: "$")) else { return text }
        let chars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var size = 0
        var i = 0
        while i < chars.count {
            if chars[i] == "$" {
                var j = i + 1
                while j < chars.count, j - i <= 64, chars[j].properties.isAlphabetic || ("0"..."9").contains(chars[j]) || chars[j] == "_" { j += 1 }
                var k = i + 1
                for length in defineLengths where length >= 2 && i + length <= j {
                    if let value = defines[String(String.UnicodeScalarView(chars[i..<(i + length)]))] {
                        out.append(contentsOf: value.unicodeScalars)
                        size += value.utf8.count
                        k = i + length
                        break
                    }
                }
                if k > i + 1 {
                    i = k
                    guard size <= Self.maximumValueSize else {
                        throw SFZError("\(file): line \(line): a value over \(Self.maximumValueSize >> 10) kB after #define names are replaced")
                    }
                    continue
                }
            }
            out.append(chars[i])
            size += 1
            i += 1
        }
        let added = size - text.utf8.count
        if added > 0 {
            expandedBytes += added
            guard expandedBytes <= Self.maximumExpansion else {
                throw SFZError("\(file): line \(line): #define names add more than \(Self.maximumExpansion >> 20) MB to the values in all")
            }
        }
        return String(out)
    }
}

/// An SFZ problem, one line naming the file and line.
package struct SFZError: Error, Equatable, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
