import Foundation
import Patches
import SamplerCore
import Testing
@testable import SFZ

@Suite struct SFZImporterTests {
    /// A temporary directory holding `files` (empty), and an SFZ file `kit.sfz` with `text`.
    func kit(_ text: String, files: [String]) throws -> (path: String, directory: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sfz-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for f in files {
            let path = directory + "/" + f
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: Data())
        }
        let path = directory + "/kit.sfz"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (path, directory)
    }

    @Test func aDrumKitBecomesInstrumentsLayersRoundRobinAndChokes() throws {
        let (path, dir) = try kit("""
        <control> default_path=Samples/
        <global> loop_mode=one_shot amp_veltrack=100
        <group> key=36 seq_length=2
        <region> sample=kick_soft.wav hivel=63
        <region> sample=kick_hard1.wav lovel=64 seq_position=1 volume=-3
        <region> sample=kick_hard2.wav lovel=64 seq_position=2 volume=-3
        <group> group=1 off_by=1 pan=30 lorand=0 hirand=0.5
        <region> sample=hat_closed_a.wav key=42
        <region> sample=hat_closed_b.wav key=42 lorand=0.5 hirand=1
        <group> group=2 off_by=1
        <region> sample=hat_open.wav key=46 polyphony=2 amp_velcurve_1=0.5
        <group>
        <region> sample=tom.wav lokey=45 hikey=47 pitch_keycenter=45 tune=10
        """, files: ["Samples/kick_soft.wav", "Samples/kick_hard1.wav", "Samples/kick_hard2.wav",
                     "Samples/hat_closed_a.wav", "Samples/hat_closed_b.wav", "Samples/hat_open.wav", "Samples/tom.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        let kit = result.kit
        // Key 46 has the open hat and the tom range's tom: two instruments sharing the note.
        #expect(kit.instruments.map(\.midiNote) == [36, 42, 45, 46, 46, 47])
        #expect(kit.instruments.map(\.id) == ["kick-36", "closed-hat-42", "low-tom-45", "open-hat-46", "open-hat-46-2", "mid-tom-47"])
        #expect(kit.instruments.map(\.sharesNote) == [false, false, false, true, true, false])
        let kick = kit.instruments[0]
        #expect(kick.id == "kick-36")
        #expect(kick.layers.map(\.velocities) == [1...63, 64...127])
        #expect(kick.layers[1].samples.map(\.resolvedPath) == [dir + "/Samples/kick_hard1.wav", dir + "/Samples/kick_hard2.wav"])
        #expect(kick.layers[1].selection == .roundRobin)
        #expect(kick.layers[1].gainDb == -3)
        #expect(kick.layers[0].velocityCurve == VelocityCurve(shape: .squared))
        let hat = kit.instruments[1]
        #expect(hat.layers[0].samples.count == 2)
        #expect(hat.layers[0].selection == .random(seed: 43))
        #expect(abs(hat.pan - 0.3) < 1e-12)
        #expect(hat.voices == 1)
        // The closed hat (group 1) chokes the open one (off_by 1), one way, as in SFZ; the toms are free.
        #expect(hat.group == 1 && kit.instruments[3].offBy == 1)
        #expect(kit.instruments[2].offBy == nil && kit.instruments[4].offBy == nil)
        #expect(kit.instruments[3].voices == 2)
        #expect(kit.instruments[3].layers[0].velocityCurve == VelocityCurve(shape: .points([.init(velocity: 1, level: 0.5)])))
        // The tom range: one instrument per key, tuned by the distance from the key centre.
        #expect(abs(kit.instruments[2].tune - 0.1) < 1e-12)
        #expect(abs(kit.instruments[4].tune - 1.1) < 1e-12)
        #expect(abs(kit.instruments[5].tune - 2.1) < 1e-12)
        #expect(kit.panLaw == .constantPowerStereo)
        // What is written reads back the same.
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments == kit.instruments)
        #expect(kick.layers[0].samples[0].path == dir + "/Samples/kick_soft.wav")
    }

    @Test func opcodesNotCarriedAreReportedOnceWithTheirLine() throws {
        let (path, _) = try kit("""
        <region> sample=a.wav key=36 ampeg_release=0.5 loop_mode=one_shot
        <region> sample=b.wav key=38 ampeg_release=0.2 eq1_gain=3 loop_mode=one_shot
        <region> sample=b.wav key=40 eq1_gain=4 loop_mode=one_shot
        """, files: ["a.wav", "b.wav"])
        let notes = try SFZImporter.importSFZ(path: path).notes
        #expect(notes == ["\(path): line 2: eq1_gain is not carried"])
    }

    @Test func pathsWithBackslashesAndAnotherCaseAreFoundWithANote() throws {
        let (path, dir) = try kit("<region> sample=samples\\KICK.WAV key=36 loop_mode=one_shot", files: ["Samples/kick.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        #expect(result.kit.instruments[0].layers[0].samples[0].resolvedPath == dir + "/Samples/kick.wav")
        #expect(result.notes.contains { $0.contains("found as") && $0.contains("line 1") })
    }

    @Test func aMissingSampleNamesItsLine() throws {
        let (path, _) = try kit("<region> key=36\n<region>\nsample=gone.wav key=38", files: [])
        #expect(throws: SFZError("\(path): no region left to play: \(path): line 3: sample \"gone.wav\": no such file (the region at line 2)")) {
            try SFZImporter.importSFZ(path: path)
        }
    }

    @Test func controllerOpcodesBecomeConditionsTriggersAndModulations() throws {
        let (path, _) = try kit("""
        <control> set_cc20=127 set_hdcc201=0.5 label_cc20=Room level
        <curve> curve_index=9 v000=0 v127=0.5
        <global> loop_mode=one_shot
        <region> sample=a.wav key=36 lochan=2 hichan=3 locc4=10 hicc4=20 sw_last=24 sw_label=Brushes volume_oncc20=-6 volume_curvecc20=9
          tune_oncc21=100 bend_up=300 bend_down=-100 pan_oncc22=50
        <region> sample=a.wav key=37 on_locc64=0 on_hicc64=10
        <region> sample=a.wav key=38 on_locc130=127 on_hicc130=127
        <region> sample=a.wav key=39 set_cc5=1
        """, files: ["a.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        let kit = result.kit
        #expect(kit.controllers.defaults == [20: 1, 201: 0.5])
        #expect(result.labels == ["controller 20: Room level (starts at 127)", "key switch 24: Brushes"])
        #expect(kit.instruments.map(\.midiNote) == [36, nil, 39])
        let a = kit.instruments[0]
        #expect(a.channels == 2...3 && a.keySwitch == 24)
        #expect(a.conditions == [ControllerRange(controller: 4, values: 10...20)])
        #expect(a.bendUp == 300 && a.bendDown == -100)
        #expect(a.modulations.contains(ControllerModulation(controller: 20, target: .volume, depth: -6,
                                                             curve: (0..<128).map { Float($0) * 0.5 / 127 })))
        #expect(a.modulations.contains(ControllerModulation(controller: 21, target: .pitch, depth: 100)))
        #expect(a.modulations.contains(ControllerModulation(controller: 22, target: .pan, depth: 0.5)))
        #expect(kit.instruments[1].controllerTrigger == ControllerRange(controller: 64, values: 0...10))
        #expect(result.notes.contains { $0.contains("on_locc130") && $0.contains("left out") })
        #expect(result.notes.contains { $0.contains("set_cc5 sets a controller only in <control>") })
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments.map(\.conditions) == kit.instruments.map(\.conditions))
        #expect(back.instruments.map(\.controllerTrigger) == kit.instruments.map(\.controllerTrigger))
        #expect(back.instruments.map(\.keySwitch) == kit.instruments.map(\.keySwitch))
    }

    /// Thousands of regions whose samples are found under another letter case list their
    /// directory once, not once a region (issue 52: 99,000 such regions gave no answer in 60 s).
    @Test func manyRegionsFoundUnderAnotherCaseListTheDirectoryOnce() throws {
        let names = (0..<4000).map { "s\($0).wav" }
        let text = "<global> loop_mode=one_shot\n" + names.enumerated().map { "<region> sample=Samples/\($0.element.uppercased()) key=\($0.offset % 128) seq_length=40 seq_position=\($0.offset / 128 % 40 + 1)" }.joined(separator: "\n")
        let (path, _) = try kit(text, files: names.map { "samples/\($0)" })
        let started = Date()
        let result = try SFZImporter.importSFZ(path: path)
        // About 1 s here; listing the directory once a region took over ten.
        #expect(Date().timeIntervalSince(started) < 4)
        #expect(result.kit.samplePaths.count == 4000)
        // The first few are named; the rest are one line.
        #expect(result.notes.filter { $0.contains("found as") }.count == SFZImporter.respellingsNamed)
        #expect(result.notes.contains { $0.hasSuffix("\(4000 - SFZImporter.respellingsNamed) more region(s) name their sample under another spelling (letter case or \\)") })
    }

    /// A sample's place, which a load's errors print after the kit's file: its line, and the
    /// included file it is written in (never the kit's file again).
    @Test func aSamplesPlaceNamesItsLineAndItsIncludedFile() throws {
        let (path, directory) = try kit("<region> sample=a.wav key=36\n#include \"toms.sfz\"", files: ["a.wav", "b.wav"])
        try Data("<region> sample=b.wav key=38\n".utf8).write(to: URL(fileURLWithPath: directory + "/toms.sfz"))
        let places = try SFZImporter.importSFZ(path: path).kit.instruments.map { $0.layers[0].samples[0].place }
        #expect(places == ["line 1", directory + "/toms.sfz: line 1"])
    }

    /// Not-carried opcodes written on one line of a header are named in the same order in every
    /// run (by name on a line; a dictionary's order follows the process's hash seed).
    @Test func opcodesOnOneHeaderLineAreNamedInOneOrder() throws {
        let names = ["zeta_x", "alpha_x", "mu_x", "beta_x", "omega_x", "kappa_x"]
        let (path, _) = try kit("<control> " + names.map { "\($0)=1" }.joined(separator: " ") + "\n<group> "
                                + names.map { "g\($0)=1" }.joined(separator: " ") + "\n<region> sample=a.wav key=36", files: ["a.wav"])
        let notes = try SFZImporter.importSFZ(path: path).notes
        #expect(notes == names.sorted().map { "\(path): line 1: \($0) is not carried" } + names.map { "g\($0)" }.sorted().map { "\(path): line 2: \($0) is not carried" })
    }

    /// Opcodes not carried are named where they are last given, in the file's order, also when
    /// a file is included twice in one region.
    @Test func anOpcodeOfAFileIncludedTwiceIsNamedWhereItIsFirstReached() throws {
        let (path, directory) = try kit("<region> sample=a.wav key=36\n#include \"b.sfz\"\nbar=1\n#include \"b.sfz\"", files: ["a.wav"])
        try Data("foo=1\n".utf8).write(to: URL(fileURLWithPath: directory + "/b.sfz"))
        let notes = try SFZImporter.importSFZ(path: path).notes
        #expect(notes == ["\(directory)/b.sfz: line 1: foo is not carried", "\(path): line 3: bar is not carried"])
    }

    /// In a searched directory, two files whose names differ only in letter case are each
    /// found by their own name; another spelling finds one of them.
    @Test func filesDifferingOnlyInCaseAreEachFoundByTheirName() throws {
        let (path, _) = try kit("<region> sample=samples/KICK.WAV key=36\n<region> sample=samples/kick.wav key=38\n<region> sample=samples/Kick.wav key=40",
                                files: ["samples/kick.wav", "samples/Kick.wav"])
        let names = try SFZImporter.importSFZ(path: path).kit.instruments.map { URL(fileURLWithPath: $0.layers[0].samples[0].resolvedPath).lastPathComponent }
        #expect(names.count == 3)
        #expect(names[1] == "kick.wav" && names[2] == "Kick.wav")
        #expect(["kick.wav", "Kick.wav"].contains(names[0]))
    }

    /// A searched directory's listing answers only with regular files (a symbolic link as what
    /// it points to): a directory of the sample's name is no sample.
    @Test func aSearchedDirectoryYieldsOnlyItsFiles() throws {
        let (path, directory) = try kit("<region> sample=samples/A.wav key=36\n<region> sample=samples/B.WAV key=38\n<region> sample=samples/c.wav key=40", files: ["samples/a.wav", "samples/x.wav"])
        try FileManager.default.createDirectory(atPath: directory + "/samples/b.wav", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory + "/samples/C.WAV", withDestinationPath: directory + "/samples/x.wav")
        let result = try SFZImporter.importSFZ(path: path)
        #expect(result.kit.instruments.map(\.midiNote) == [36, 40])
        #expect(result.kit.samplePaths.map { URL(fileURLWithPath: $0.resolvedPath).lastPathComponent }.sorted() == ["C.WAV", "a.wav"])
    }

    /// Headers' opcodes are shared by the regions under them, not copied into each (issue 52:
    /// 20,000 regions under 639 global opcodes took more than a minute and gigabytes): here
    /// 10,000 under 509, their controller opcodes resolved once.
    @Test func regionsShareTheirHeadersOpcodes() throws {
        let global = "<global> loop_mode=one_shot " + (0..<500).map { "label_cc\($0)=x\($0)" }.joined(separator: " ")
            + " " + (0..<8).map { "amplitude_oncc\($0 + 1)=50" }.joined(separator: " ") + " sw_last=24"
        let regions = (0..<10_000).map { "<region> sample=a.wav key=\($0 % 100 + 28) seq_length=100 seq_position=\($0 / 100 % 100 + 1)" }
        let (path, _) = try kit(([global] + regions).joined(separator: "\n"), files: ["a.wav"])
        let started = Date()
        let result = try SFZImporter.importSFZ(path: path)
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(result.kit.instruments.count == 100)
        #expect(result.kit.instruments.allSatisfy { $0.keySwitch == 24 && $0.modulations.count == 8 })
        // A region that adds controller opcodes of its own resolves them over its headers'.
        let mixed = try kit(global + "\n<region> sample=a.wav key=40\n<region> sample=a.wav key=41 amplitude_oncc1=100 sw_last=25", files: ["a.wav"])
        let two = try SFZImporter.importSFZ(path: mixed.0).kit.instruments
        #expect(two[0].modulations.first { $0.controller == 1 }?.depth == 0.5 && two[0].keySwitch == 24)
        #expect(two[1].modulations.first { $0.controller == 1 }?.depth == 1 && two[1].keySwitch == 25 && two[1].modulations.count == 8)
    }

    /// Regions that each add controller opcodes over many inherited ones are bounded work: an
    /// error past the bound, at once.
    @Test func inheritedControllerOpcodesAreBounded() throws {
        let global = "<global> " + (0..<400).map { "amplitude_oncc\($0 + 100)=1" }.joined(separator: " ")
        let regions = (0..<1_000).map { "<region> sample=a.wav key=\($0 % 128) amplitude_oncc1=\($0 % 100)" }
        let (path, _) = try kit(([global] + regions).joined(separator: "\n"), files: ["a.wav"])
        #expect(throws: SFZError("\(path): its regions inherit more than \(SFZImporter.maximumInheritedWork) controller opcodes and velocity points in all (each region counts its headers' again where it adds its own)")) {
            try SFZImporter.importSFZ(path: path)
        }
    }

    /// 4,096 regions chained by their chokes (each choked by the next) import as a kit that fits
    /// the patch format, in bounded work (issue 52: 50 s, then "the patch is 49 MB").
    @Test func aLongChainOfChokesImportsInBoundedWork() throws {
        let regions = (0..<4096).map { "<region> sample=a.wav key=\($0 % 128) lovel=\($0 / 128 + 1) hivel=\($0 / 128 + 1) group=\($0 + 1) off_by=\($0 + 2)" }
        let (path, _) = try kit(regions.joined(separator: "\n"), files: ["a.wav"])
        let started = Date()
        let result = try SFZImporter.importSFZ(path: path)
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(result.kit.instruments.count > 128)
        #expect(result.kit.patterns.first?.tracks.count == SFZImporter.auditionLimit)
    }

    /// A sample named in one Unicode form and stored in another (a library from macOS, whose
    /// names are decomposed) is found, and named as the disk spells it.
    @Test func aSampleStoredUnderAnotherUnicodeFormIsFoundAsTheDiskSpellsIt() throws {
        let decomposed = "caf" + "e\u{301}" + ".wav", composed = "caf\u{E9}.wav"
        #expect(Array(decomposed.utf8) != Array(composed.utf8))
        let (path, directory) = try kit("<region> sample=SAMPLES/\(composed) key=36", files: [])
        try FileManager.default.createDirectory(atPath: directory + "/samples", withIntermediateDirectories: true)
        // Made with the bytes of the decomposed name.
        let file = Array((directory + "/samples/" + decomposed).utf8CString)
        let fd = open(file, O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0)
        close(fd)
        let result = try SFZImporter.importSFZ(path: path)
        let found = try #require(result.kit.samplePaths.first?.resolvedPath)
        #expect(Array(found.utf8) == Array((directory + "/samples/" + decomposed).utf8))
    }

    @Test func firstAndLegatoTriggersBecomeConditions() throws {
        let (path, _) = try kit("<region> sample=a.wav key=36 trigger=first\n<region> sample=a.wav key=36 trigger=legato\n<region> sample=a.wav key=38", files: ["a.wav"])
        let kit = try SFZImporter.importSFZ(path: path).kit
        #expect(kit.instruments.map(\.legato) == [false, true, nil])
        #expect(kit.stateNotes == Set(0..<128))
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments.map(\.legato) == [false, true, nil])
    }

    @Test func randomLevelAndPitchAreImported() throws {
        let (path, _) = try kit("<region> sample=a.wav key=36 amp_random=3 pitch_random=25", files: ["a.wav"])
        let kit = try SFZImporter.importSFZ(path: path).kit
        #expect(kit.instruments[0].randomGainDb == 3 && kit.instruments[0].randomCents == 25)
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments[0].randomGainDb == 3 && back.instruments[0].randomCents == 25)
    }

    @Test func filtersAreImportedAsSfizzMakesThem() throws {
        let (path, _) = try kit("""
        <global> fil_veltrack=1200
        <group> cutoff=800 resonance=6 fil_keytrack=50 fil_keycenter=c4 cutoff_oncc74=3600 resonance_cc71=3
        <region> sample=a.wav key=36 fil_type=hpf_1p
        <region> sample=a.wav key=38 fil_type=lpf_6p
        <region> sample=a.wav key=40
        <region> sample=a.wav key=41 fil_random=300
        """, files: ["a.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        let kit = result.kit
        #expect(kit.instruments[0].filter == VoiceFilter(kind: .highpass1, cutoff: 800, resonance: 6, keytrack: 50, keycenter: 60,
                                                         veltrack: 1200))
        #expect(kit.instruments[0].modulations.map(\.target) == [.cutoff, .resonance])
        // A type not carried: unfiltered, named.
        #expect(kit.instruments[1].filter == nil)
        #expect(result.notes.contains { $0.contains("fil_type=lpf_6p is not carried") })
        // Any filter opcode gives a region sfizz's default filter, a 2-pole low-pass.
        #expect(kit.instruments[2].filter?.kind == .lowpass2 && kit.instruments[3].filter?.random == 300)
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments.map(\.filter) == kit.instruments.map(\.filter))
    }

    /// A sample path of 30,000 missing directories is a missing sample, found so at once (the
    /// case-insensitive search stops at the first directory that is not there).
    @Test func aDeepMissingSamplePathIsLeftOutAtOnce() throws {
        let deep = String(repeating: "a/", count: 30_000) + "x.wav"
        let (path, _) = try kit("<region> sample=a.wav key=36\n<region> sample=\(deep) key=38", files: ["a.wav"])
        let started = Date()
        let result = try SFZImporter.importSFZ(path: path)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(result.kit.instruments.map(\.midiNote) == [36])
    }

    @Test func aMissingSampleLeavesItsRegionOutAndTheRestPlays() throws {
        let (path, _) = try kit("<region> sample=a.wav key=36\n<region>\nsample=gone.wav key=38", files: ["a.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        #expect(result.kit.instruments.map(\.midiNote) == [36])
        #expect(result.notes.contains("\(path): line 3: sample \"gone.wav\": no such file: the region at line 2 is left out"))
    }

    @Test func badNumbersAreErrorsNamingTheLine() throws {
        let (path, _) = try kit("<region> sample=a.wav key=36\n volume=loud", files: ["a.wav"])
        #expect(throws: SFZError("\(path): line 2: volume: expected a number, got \"loud\"")) {
            try SFZImporter.importSFZ(path: path)
        }
    }

    @Test func velocityCurvesFollowSfizz() {
        let squared = VelocityCurve(shape: .squared).levels
        #expect(squared[127] == 1 && abs(squared[64] - 0.2539) < 1e-4)
        #expect(VelocityCurve(shape: .squared, track: 0).levels.allSatisfy { $0 == 1 })
        let half = VelocityCurve(shape: .points([.init(velocity: 1, level: 0.5)])).levels
        #expect(half[0] == 0 && half[1] == 0.5 && half[127] == 1 && abs(half[64] - (0.5 + 0.5 * 63 / 126)) < 1e-12)
    }

    @Test func regionsThatSoundTogetherBecomeInstrumentsSharingTheNote() throws {
        let (path, _) = try kit("""
        <global> loop_mode=one_shot key=38
        <group> pan=-100
        <region> sample=snare_top.wav seq_length=2 seq_position=1
        <region> sample=snare_top2.wav seq_length=2 seq_position=2
        <group> pan=100
        <region> sample=overhead.wav
        """, files: ["snare_top.wav", "snare_top2.wav", "overhead.wav"])
        let kit = try SFZImporter.importSFZ(path: path).kit
        #expect(kit.instruments.map(\.id) == ["snare-38", "snare-38-2"])
        #expect(kit.instruments.map(\.midiNote) == [38, 38])
        #expect(kit.instruments.allSatisfy { $0.sharesNote })
        #expect(kit.instruments[0].layers[0].samples.count == 2 && kit.instruments[1].pan == 1)
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments == kit.instruments)
    }

    @Test func offsetAndEndTrimTheSampleAndEndZeroIsASilentChoke() throws {
        let (path, _) = try kit("""
        <region> sample=a.wav key=36 offset=10 end=99 loop_mode=one_shot
        <region> sample=a.wav key=38 end=0 loop_mode=one_shot
        """, files: ["a.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        let sample = result.kit.instruments[0].layers[0].samples[0]
        #expect(result.kit.instruments.map(\.isSilent) == [false, true])
        #expect(sample.offset == 10 && sample.end == 99)
        let back = try PatchLoader.decode(Data(result.kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments[0].layers[0].samples[0] == sample)
        #expect(throws: PatchError.self) {
            try PatchLoader.decode(Data(#"{"version": 2, "instruments": [{"id": "k", "layers": [{"samples": [{"path": "a.wav", "offset": 10, "end": 5}]}]}]}"#.utf8),
                                   file: "k.json", baseDirectory: "/")
        }
    }

    @Test func aKeyRangeWithoutACentreIsTunedFromC4AndKeysBeyond48SemitonesAreLeftOut() throws {
        let (path, _) = try kit("<region> sample=t.wav lokey=0 hikey=127 loop_mode=one_shot", files: ["t.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        // sfizz's pitch_keycenter defaults to 60: keys 12…108 fit in ±48 semitones.
        #expect(result.kit.instruments.map(\.midiNote) == (12...108).map { $0 })
        #expect(result.kit.instruments.first { $0.midiNote == 48 }?.tune == -12)
        #expect(result.notes.contains { $0.contains("would be tuned -60 semitones") })
    }

    @Test func envelopesAndLoopModesAsSfizzPlaysThem() throws {
        let (path, _) = try kit("""
        <region> sample=a.wav key=36
        <region> sample=a.wav key=37 loop_mode=one_shot
        <region> sample=a.wav key=38 loop_mode=one_shot ampeg_decay=0.2 ampeg_sustain=0
        <region> sample=a.wav key=39 loop_mode=loop_continuous ampeg_attack=0.01 ampeg_hold=0.02 ampeg_sustain=50 ampeg_release=0.3
        <region> sample=a.wav key=40 ampeg_release=0
        """, files: ["a.wav"])
        let kit = try SFZImporter.importSFZ(path: path).kit
        // no_loop (the default): released by note-offs, never faster than sfizz's 6 ms.
        #expect(kit.instruments[0].envelope == Envelope(release: 0.006))
        #expect(kit.instruments[1].envelope == nil)
        #expect(kit.instruments[2].envelope == Envelope(decay: 0.2, sustain: 0, release: 0.006, noteOff: false))
        #expect(kit.instruments[3].envelope == Envelope(attack: 0.01, hold: 0.02, sustain: 0.5, release: 0.3))
        #expect(kit.instruments[3].loops == -1 && kit.instruments[0].loops == 0)
        #expect(kit.instruments[4].envelope?.release == 0.006)
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments == kit.instruments)
    }

    @Test func releaseTriggersAreInstrumentsPlayedByTheNoteOff() throws {
        let (path, _) = try kit("""
        <region> sample=a.wav key=42 loop_mode=one_shot
        <region> sample=b.wav key=42 trigger=release
        <region> sample=b.wav key=43 trigger=release_key
        """, files: ["a.wav", "b.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        let kit = result.kit
        #expect(kit.instruments.map(\.id) == ["closed-hat-42", "closed-hat-42-release"])
        #expect(kit.instruments.map(\.triggersOnNoteOff) == [false, true])
        #expect(kit.instruments.allSatisfy { $0.sharesNote })
        #expect(kit.instruments[1].envelope?.noteOff == false)
        #expect(result.notes.contains { $0.contains("trigger=release_key is not carried") })
        let back = try PatchLoader.decode(Data(kit.patchJSON().utf8), file: "k.json", baseDirectory: "/")
        #expect(back.instruments == kit.instruments)
    }

    @Test func outputOpcodesBecomeNamedOutputs() throws {
        let (path, _) = try kit("""
        <region> sample=kick.wav key=36 output=2
        <region> sample=snare.wav key=38 output=0
        <region> sample=hat.wav key=42 output=1
        <region> sample=tom.wav key=45 output=99
        """, files: ["kick.wav", "snare.wav", "hat.wav", "tom.wav"])
        let result = try SFZImporter.importSFZ(path: path)
        #expect(result.kit.instruments.map(\.output) == ["out2", nil, "out1", nil])
        #expect(result.kit.outputNames == ["out2", "out1"])
        #expect(!result.notes.contains { $0.contains("output=2") || $0.contains("output is not carried") }, "\(result.notes)")
        #expect(result.notes.contains { $0.contains("output=99: there are outputs 0 … 63; it plays on the main mix") }, "\(result.notes)")
    }

    /// The generated audition pattern has a track and a step per instrument it plays: with more
    /// than `auditionLimit` instruments it plays the first of them (said in a note), so that a
    /// large kit's patch does not grow with the square of its size.
    @Test func theAuditionPatternOfALargeKitPlaysItsFirstInstruments() throws {
        let files = (0..<300).map { "s\($0).wav" }
        // Regions on one key that sound together (a drum's microphones) are instruments of their own.
        let text = files.enumerated().map { "<region> sample=\($1) key=\($0 % 128)" }.joined(separator: "\n")
        let (path, _) = try kit(text, files: files)
        let result = try SFZImporter.importSFZ(path: path)
        #expect(result.kit.instruments.count > SFZImporter.auditionLimit)
        let audition = try #require(result.kit.patterns.first)
        #expect(audition.tracks.count == SFZImporter.auditionLimit)
        #expect(audition.tracks.map(\.instrument) == Array(0..<SFZImporter.auditionLimit))
        #expect(result.notes.contains { $0.contains("the audition pattern plays the first 128 of its \(result.kit.instruments.count) instruments") },
                "\(result.notes)")
    }
}

/// `pitch_keycenter=sample` on sfizz's own `sample_keycenter_embedded.sfz`: WAV and FLAC files
/// embedded in it whose `smpl` chunks name roots 38 and 62 (a FLAC file keeps it in an
/// APPLICATION block "riff", which libsndfile does not read: `SoundFileLoops.flacInstrument`).
@Suite struct SFZRootKeyTests {
    @Test func eachSampleFilesRootKeyTunesItsKeys() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sfizz/TestFiles/sample_keycenter_embedded.sfz").path
        let kit = try SFZImporter.importSFZ(path: path).kit
        var tunes: [String: Double] = [:]
        for instrument in kit.instruments where instrument.midiNote == 38 {
            let sample = instrument.layers[0].samples[0]
            tunes[(sample.path as NSString).lastPathComponent + (instrument.id.hasSuffix("-5") ? "@10" : ""), default: .nan] = instrument.tune
        }
        #expect(tunes["root_key_38.wav"] == 0 && tunes["root_key_62.wav"] == -24)
        #expect(tunes["root_key_38.flac"] == 0 && tunes["root_key_62.flac"] == -24)
    }
}
