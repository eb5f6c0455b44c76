import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// `sampler import-hydrogen` on a small drumkit.xml written here (Hydrogen's own kits are GPL
/// and are not shipped), in both of Hydrogen's layouts.
@Suite struct ImportHydrogenTests {
    func writeKit() throws -> URL {
        let dir = try temporaryDirectory()
        let samples = dir.appendingPathComponent("samples")
        try FileManager.default.createDirectory(at: samples, withIntermediateDirectories: true)
        for (name, value) in [("kick", 0.1), ("soft", 0.2), ("hard", 0.3), ("hat", 0.4), ("open", 0.5)] as [(String, Float)] {
            try WAVFileWriter.write(path: samples.appendingPathComponent("\(name).wav").path,
                                    channels: [[Float](repeating: value, count: 100)], sampleRate: 48000)
        }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <drumkit_info>
          <name>Test &amp; Kit</name>
          <instrumentList>
            <instrument><id>0</id><name>Kick</name><volume>1</volume><gain>0.5</gain>
              <pan_L>1</pan_L><pan_R>1</pan_R><muteGroup>-1</muteGroup><midiOutNote>36</midiOutNote>
              <layer><filename>samples/kick.wav</filename><min>0</min><max>1</max><gain>1</gain><pitch>0</pitch></layer>
            </instrument>
            <instrument><id>1</id><name>Snare Rock</name><volume>1</volume><gain>1</gain>
              <pan_L>1</pan_L><pan_R>0.5</pan_R><muteGroup>-1</muteGroup><midiOutNote>38</midiOutNote>
              <instrumentComponent><component_id>0</component_id><gain>1</gain>
                <layer><filename>samples/soft.wav</filename><min>0</min><max>0.5</max><gain>1</gain><pitch>-2</pitch></layer>
                <layer><filename>samples/hard.wav</filename><min>0.5</min><max>1</max><gain>1</gain><pitch>-2</pitch></layer>
              </instrumentComponent>
            </instrument>
            <instrument><id>2</id><name>Closed Hat</name><volume>1</volume><gain>1</gain><pan>0.5</pan>
              <muteGroup>0</muteGroup><midiOutNote>42</midiOutNote>
              <layer><filename>samples/hat.wav</filename><min>0</min><max>1</max></layer>
            </instrument>
            <instrument><id>3</id><name>Open Hat</name><volume>1</volume><gain>1</gain><pan>0.5</pan>
              <muteGroup>0</muteGroup><midiOutNote>46</midiOutNote><filename>samples/open.wav</filename>
            </instrument>
            <instrument><id>4</id><name>Empty</name><volume>1</volume></instrument>
          </instrumentList>
        </drumkit_info>
        """.write(to: dir.appendingPathComponent("drumkit.xml"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test func convertsInstrumentsLayersGainPanMuteGroupsAndNotes() throws {
        let dir = try writeKit()
        let out = dir.appendingPathComponent("kit.json").path
        let r = try runSampler(["import-hydrogen", dir.appendingPathComponent("drumkit.xml").path, "--out", out], timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("wrote \(out): 4 instruments"))
        #expect(r.stdout.contains("note: instrument 5 (Empty): no samples, left out"))
        let json = try String(contentsOfFile: out, encoding: .utf8)
        let samples = dir.appendingPathComponent("samples").standardizedFileURL.path
        #expect(json.contains(#"{ "id": "kick", "gainDb": -6.02, "midiNote": 36, "voices": 16, "layers": ["#))
        #expect(json.contains(#"{ "id": "snare-rock", "pan": -0.5, "tune": -2, "midiNote": 38, "voices": 16, "layers": ["#))
        #expect(json.contains(#"{ "velocity": [1, 63], "samples": ["\#(samples)/soft.wav"] },"#))
        #expect(json.contains(#"{ "velocity": [64, 127], "samples": ["\#(samples)/hard.wav"] }"#))
        #expect(json.contains(#"{ "id": "closed-hat", "pan": 0.5, "midiNote": 42, "chokeGroup": 1, "voices": 16, "layers": ["#))
        #expect(json.contains(#"{ "id": "open-hat", "pan": 0.5, "midiNote": 46, "chokeGroup": 1, "voices": 16, "layers": ["#))
        // The patch plays: it validates, and renders its audition pattern.
        let v = try runSampler(["validate", out], timeout: 30)
        #expect(v.status == 0 && v.stdout.contains("OK: version 2, 120 bpm, 4 instruments"), "\(v.stderr)")
        let wav = dir.appendingPathComponent("o.wav").path
        let rendered = try runSampler(["render", "--patch", out, "--duration", "1", "--out", wav], timeout: 30)
        #expect(rendered.status == 0, "\(rendered.stderr)")
    }

    /// A small song: two patterns of different lengths, a column playing both (merged, as long as
    /// the longer), repeated columns, a tempo marker (timeline on), a muted instrument. Its
    /// notes land on the frames Hydrogen's tick arithmetic gives (48 ticks per quarter note).
    @Test func aSongsPatternsColumnsAndTempoMarkersLandOnTheirFrames() throws {
        let dir = try writeKit()
        let samples = dir.appendingPathComponent("samples").standardizedFileURL.path
        func instrument(_ id: Int, _ name: String, _ file: String, muted: Bool = false) -> String {
            """
            <instrument><id>\(id)</id><name>\(name)</name><drumkit>nowhere</drumkit><volume>1</volume><gain>1</gain><pan>-1</pan>
              <isMuted>\(muted)</isMuted><isStopNote>false</isStopNote><muteGroup>-1</muteGroup>
              <instrumentComponent><component_id>0</component_id><gain>1</gain>
                <layer><filename>\(samples)/\(file)</filename><min>0</min><max>1</max><gain>1</gain><pitch>0</pitch></layer>
              </instrumentComponent></instrument>
            """
        }
        func note(_ tick: Int, _ instrument: Int) -> String {
            "<note><position>\(tick)</position><velocity>1</velocity><instrument>\(instrument)</instrument></note>"
        }
        let song = """
        <?xml version="1.0" encoding="UTF-8"?>
        <song><bpm>120</bpm><volume>1</volume><isTimelineActivated>true</isTimelineActivated>
          <instrumentList>\(instrument(0, "Kick", "kick.wav"))\(instrument(1, "Snare", "hard.wav"))\(instrument(2, "Hat", "hat.wav"))\(instrument(3, "Muted", "open.wav", muted: true))</instrumentList>
          <patternList>
            <pattern><name>A</name><size>192</size><noteList>\(note(0, 0))\(note(96, 1))\(note(100, 3))</noteList></pattern>
            <pattern><name>B</name><size>96</size><noteList>\(note(48, 2))</noteList></pattern>
          </patternList>
          <patternSequence><group><patternID>A</patternID></group><group><patternID>A</patternID></group>
            <group><patternID>A</patternID><patternID>B</patternID></group><group><patternID>B</patternID></group></patternSequence>
          <BPMTimeLine><newBPM><BAR>2</BAR><BPM>60</BPM></newBPM></BPMTimeLine>
        </song>
        """
        let path = dir.appendingPathComponent("test.h2song").path
        try song.write(toFile: path, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("song.json").path
        let r = try runSampler(["import-hydrogen", path, "--out", out], timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("4 instruments, 3 patterns, a song of 4 columns"), "\(r.stdout)")
        #expect(r.stdout.contains("instrument muted is muted in the song"), "\(r.stdout)")
        let wav = dir.appendingPathComponent("song.wav").path
        let rendered = try runSampler(["render", "--patch", out, "--song", "--no-loop", "--duration", "10", "--out", wav], timeout: 30)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let left = try SoundFileLoader().load(path: wav).samples(channel: 0)
        let onsets = left.indices.filter { left[$0] != 0 && ($0 == 0 || left[$0 - 1] == 0) }
        // 120 bpm: 500 frames a tick; from column 2 on, 60 bpm: 1,000.
        #expect(onsets == [0, 48000, 96000, 144000, 192000, 240000, 288000, 432000], "\(onsets)")
        // Which sample (kick 0.1, snare 0.3, hat 0.4), at velocity 127, pan hard left (balance law: unity).
        #expect([0, 48000, 240000, 432000].map { left[$0] } == [0.1, 0.3, 0.4, 0.4])
    }

    /// Sample files the kit names that are not on disk: one warning per file (naming the
    /// instruments), nothing written and a non-zero exit, unless --allow-missing, which writes
    /// the kit without them. Layer gains are carried over, with Hydrogen's pan law.
    @Test func missingSamplesAreNamedAndLayerGainsCarried() throws {
        let dir = try writeKit()
        let xml = dir.appendingPathComponent("drumkit.xml")
        var text = try String(contentsOf: xml, encoding: .utf8)
        text = text.replacingOccurrences(of: "<filename>samples/hard.wav</filename><min>0.5</min><max>1</max><gain>1</gain>",
                                         with: "<filename>samples/hard.wav</filename><min>0.5</min><max>1</max><gain>0.5</gain>")
        text = text.replacingOccurrences(of: "<filename>samples/soft.wav</filename>", with: "<filename>samples/gone.wav</filename>")
        text = text.replacingOccurrences(of: "<filename>samples/open.wav</filename>", with: "<filename>samples/gone.wav</filename>")
        text = text.replacingOccurrences(of: "<filename>samples/hat.wav</filename>", with: "<filename>samples/lost.flac</filename>")
        try text.write(to: xml, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("kit.json").path
        let refused = try runSampler(["import-hydrogen", xml.path, "--out", out], timeout: 30)
        #expect(refused.status != 0)
        let warnings = refused.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("missing sample file \(dir.appendingPathComponent("samples/gone.wav").standardizedFileURL.path) (instrument 2 (Snare Rock), instrument 4 (Open Hat))"), "\(refused.stderr)")
        #expect(refused.stderr.contains("lost.flac (instrument 3 (Closed Hat))"))
        #expect(refused.stderr.contains("2 sample files are missing"))
        #expect(!FileManager.default.fileExists(atPath: out))

        let allowed = try runSampler(["import-hydrogen", xml.path, "--out", out, "--allow-missing"], timeout: 30)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(allowed.stdout.contains("wrote \(out): 2 instruments"), "\(allowed.stdout)")
        let json = try String(contentsOfFile: out, encoding: .utf8)
        #expect(json.contains(#""panLaw": "balance""#))
        #expect(json.contains(#"hard.wav"], "gainDb": -6.02 }"#), "\(json)")
        #expect(!json.contains("gone.wav") && !json.contains("lost.flac"))
        let v = try runSampler(["validate", out], timeout: 30)
        #expect(v.status == 0, "\(v.stderr)")
    }

    /// nan, infinities and huge numbers in a hand-edited drumkit do not crash the import: they
    /// count as absent (no mute group, no note, the full velocity range).
    @Test func nonFiniteAndHugeNumbersAreIgnored() throws {
        let dir = try writeKit()
        let xml = dir.appendingPathComponent("drumkit.xml")
        var text = try String(contentsOf: xml, encoding: .utf8)
        text = text.replacingOccurrences(of: "<muteGroup>0</muteGroup><midiOutNote>42</midiOutNote>",
                                         with: "<muteGroup>nan</muteGroup><midiOutNote>inf</midiOutNote>")
        text = text.replacingOccurrences(of: "<filename>samples/hat.wav</filename><min>0</min><max>1</max>",
                                         with: "<filename>samples/hat.wav</filename><min>nan</min><max>1e300</max>")
        try text.write(to: xml, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("kit.json").path
        let r = try runSampler(["import-hydrogen", xml.path, "--out", out], timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try String(contentsOfFile: out, encoding: .utf8)
        #expect(json.contains(#"{ "id": "closed-hat", "pan": 0.5, "voices": 16, "layers": ["#), "\(json)")
        let v = try runSampler(["validate", out], timeout: 30)
        #expect(v.status == 0, "\(v.stderr)")
    }

    @Test func aMissingDrumkitIsNamed() throws {
        let dir = try temporaryDirectory()
        let xml = dir.appendingPathComponent("nothing.xml").path
        let r = try runSampler(["import-hydrogen", xml, "--out", dir.appendingPathComponent("k.json").path], timeout: 30)
        #expect(r.status == 1)
        #expect(r.stderr == "sampler: error: \(xml): cannot read the file (no such file)\n", "\(r.stderr)")
    }

    @Test func notADrumkitIsAnError() throws {
        let dir = try temporaryDirectory()
        let xml = dir.appendingPathComponent("song.xml")
        try "<song><name>x</name></song>".write(to: xml, atomically: true, encoding: .utf8)
        let r = try runSampler(["import-hydrogen", xml.path, "--out", dir.appendingPathComponent("k.json").path], timeout: 30)
        #expect(r.status == 1)
        #expect(r.stderr == "sampler: error: \(xml.path): expected a Hydrogen drumkit (<drumkit_info>), got <song>\n")
    }

    /// Found by `make fuzz`: Foundation's XMLParser crashed on element names that are not UTF-8.
    /// Every input under Fuzz/regressions/ for the Hydrogen importer ends in a one-line error.
    @Test func fuzzRegressionsEndInAOneLineError() throws {
        let dir = packageRoot.appendingPathComponent("Fuzz/regressions")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("hydrogen-") }
        #expect(!files.isEmpty)
        let out = try temporaryDirectory().appendingPathComponent("k.json").path
        for name in files {
            let path = dir.appendingPathComponent(name).path
            let r = try runSampler(["import-hydrogen", path, "--out", out], timeout: 30)
            #expect(r.status == 1, "\(name)")
            #expect(r.stderr.hasPrefix("sampler: error: \(path): ") && r.stderr.filter { $0 == "\n" }.count == 1, "\(name): \(r.stderr)")
        }
    }
}
