import Foundation
import Testing
@testable import SFZ

@Suite struct SFZReaderTests {
    func read(_ text: String, includes: [String: String] = [:]) throws -> SFZReader {
        try SFZReader.read(bytes: Array(text.utf8), file: "kit.sfz", directory: "/kit") { path in
            guard let t = includes[path] else { throw SFZError("no such file") }
            return Array(t.utf8)
        }
    }

    @Test func headersOpcodesCommentsAndValuesWithSpaces() throws {
        let r = try read("""
        // a comment
        <control> default_path=Samples\\Kick/
        <group> lovel=1 hivel=64 /* block
        comment */ volume=-3
        <region> sample=kick one.wav key=36 pan=-20 // trailing
        <region>sample=snare.wav key=c4
        """)
        #expect(r.sections.map(\.header) == ["control", "group", "region", "region"])
        #expect(r.sections[2].opcodes.map(\.name) == ["sample", "key", "pan"])
        #expect(r.sections[2].opcodes[0].value == "kick one.wav")
        #expect(r.sections[2].opcodes[0].line == 5)
        #expect(r.sections[1].opcodes.map(\.name) == ["lovel", "hivel", "volume"])
        #expect(r.sections[3].opcodes[1].value == "c4")
    }

    /// Embedded base64 data runs to the next header over any number of lines, "//" in it being
    /// data (as sfizz reads it), its blanks dropped.
    @Test func base64DataRunsToTheNextHeader() throws {
        let r = try read("""
        <sample> name=a.wav
            base64data=UklG//Rt
            BnAQ$X+/
        AAAA // not a comment
        <region> sample=a.wav key=36 // a comment
        """)
        #expect(r.sections.map(\.header) == ["sample", "region"])
        #expect(r.sections[0].opcodes.map(\.name) == ["name", "base64data"])
        #expect(r.sections[0].opcodes[1].value == "UklG//RtBnAQ$X+/AAAA//notacomment")
        #expect(r.sections[1].opcodes.map(\.name) == ["sample", "key"])
    }

    /// Base64 data ends at a directive as at a header (as sfizz ends it); a commented-out line
    /// naming base64data is a comment.
    @Test func base64DataEndsAtADirectiveAndCommentsStillHideIt() throws {
        let r = try read("""
        // <sample> name=x.wav base64data=AAAA
        <sample> name=a.wav base64data=UklG
        QUFB
        #define $KEY 36
        <region> sample=a.wav key=$KEY
        """)
        #expect(r.sections.map(\.header) == ["sample", "region"])
        #expect(r.sections[0].opcodes[1].value == "UklGQUFB")
        #expect(r.sections[1].opcodes[1].value == "36")
    }

    @Test func definesAndIncludes() throws {
        let r = try read("""
        #define $KICK 36
        #include "parts/kick.sfz"
        """, includes: ["/kit/parts/kick.sfz": "<region> sample=k.wav key=$KICK"])
        #expect(r.sections.count == 1)
        #expect(r.sections[0].opcodes[1].value == "36")
        #expect(r.sections[0].file == "/kit/parts/kick.sfz")
    }

    @Test func errorsNameFileAndLine() {
        #expect(throws: SFZError("kit.sfz: line 2: volume= before any header (<region>, <group>, …)")) {
            try read("\nvolume=3")
        }
        #expect(throws: SFZError("kit.sfz: line 1: a header without its closing >")) { try read("<region sample=a.wav") }
        #expect(throws: SFZError("kit.sfz: line 1: #include \"missing.sfz\": no such file")) { try read("#include \"missing.sfz\"") }
        // An include of itself stops at the depth limit.
        #expect(throws: SFZError.self) {
            try read("#include \"self.sfz\"", includes: ["/kit/self.sfz": "#include \"self.sfz\""])
        }
    }

    @Test func noteNames() {
        #expect(SFZImporter.noteNumber("c4") == 60)
        #expect(SFZImporter.noteNumber("C#4") == 61)
        #expect(SFZImporter.noteNumber("db4") == 61)
        #expect(SFZImporter.noteNumber("c-1") == 0)
        #expect(SFZImporter.noteNumber("g9") == 127)
        #expect(SFZImporter.noteNumber("36") == 36)
        #expect(SFZImporter.noteNumber("128") == nil)
        #expect(SFZImporter.noteNumber("h2") == nil)
    }

    @Test func windowsLineEndsAreLineEnds() throws {
        let r = try read("// Kit\r\n<region> sample=kick.wav\r\nlokey=36\r\n#define $X 5\r\n<region> sample=s.wav key=$X\r\n")
        #expect(r.sections.count == 2)
        #expect(r.sections[0].opcodes.map(\.value) == ["kick.wav", "36"])
        #expect(r.sections[0].opcodes[1].line == 3)
        #expect(r.sections[1].opcodes[1].value == "5")
    }

    @Test func definesExpandOnceInOrderAndCannotGrowWithoutBound() throws {
        // A define of a define takes its value when defined; the longest name wins.
        let r = try read("#define $A 36\n#define $B $A\n#define $AB 40\n<region> key=$B lokey=$AB hikey=$A1")
        #expect(r.sections[0].opcodes.map(\.value) == ["36", "40", "361"])
        let big = String(repeating: "x", count: 60_000)
        #expect(throws: SFZError("kit.sfz: line 2: a value over 64 kB after #define names are replaced")) {
            try read("#define $A \(big)\n<region> sample=$A$A")
        }
    }

    /// One 60 kB define used 1,200 times would hold 72 MB of values: refused at 64 MB added, with
    /// one line naming the place, instead of growing with every use.
    @Test func definesCannotAddMoreThanTheLimitInAll() throws {
        let big = String(repeating: "x", count: 60_000)
        let uses = String(repeating: " sample=$V", count: 1_200)
        #expect(throws: SFZError("kit.sfz: line 2: #define names add more than 64 MB to the values in all")) {
            try read("#define $V \(big)\n<region>\(uses)")
        }
        // Within the limit, every use is replaced.
        let r = try read("#define $V \(big)\n<region>\(String(repeating: " sample=$V", count: 10))")
        #expect(r.sections[0].opcodes.count == 10 && r.sections[0].opcodes.allSatisfy { $0.value == big })
    }

    /// Millions of empty headers (issue 52: 21 million from four 16 MB includes took 26 s and
    /// 1.6 GB) stop at the limit, quickly.
    @Test func headersAreCounted() throws {
        let started = Date()
        #expect(throws: SFZError("kit.sfz: line 1: more than \(SFZReader.maximumHeaders) headers")) {
            try read(String(repeating: "<group>", count: SFZReader.maximumHeaders + 10))
        }
        // About 3 s in a debug build beside other tests; 26 s before the count.
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(try read(String(repeating: "<group>", count: 1000)).sections.count == 1000)
    }

    /// At each `$`, the longest defined name it starts with, whatever other names are defined
    /// (only the lengths some name has are looked up).
    @Test func theLongestDefinedNameWinsAmongManyLengths() throws {
        let r = try read("""
        #define $K 1
        #define $KIT 2
        #define $KITCHEN 3
        #define $LONG_NAME_THAT_NO_VALUE_USES 9
        <region> a=$KITCHENS b=$KITC c=$KI d=$K_ e=$KITCHEN$KIT$K f=$X$K
        """)
        #expect(r.sections[0].opcodes.map(\.value) == ["3S", "2C", "1I", "1_", "321", "$X1"])
    }
}
