import Foundation
@testable import Patches
import Testing

@Suite struct DrumKitJSONTests {
    @Test func aWrittenKitReadsBackTheSame() throws {
        let kit = try decodeKit(kitJSON())
        var absolute = kit
        // Written paths are taken as they are: make them absolute so the base directory does not matter.
        for i in absolute.instruments.indices {
            for l in absolute.instruments[i].layers.indices {
                absolute.instruments[i].layers[l].samples = absolute.instruments[i].layers[l].samples.map {
                    SampleFile(path: $0.resolvedPath, resolvedPath: $0.resolvedPath)
                }
            }
        }
        let text = absolute.patchJSON()
        let again = try decodeKit(text)
        #expect(again == absolute, "\(text)")
    }

    /// Layer gains and the kit's pan law decode, are written back and read the same; a bad law
    /// names its path and the choices.
    @Test func layerGainsAndThePanLaw() throws {
        var json = kitJSON().replacingOccurrences(of: #""samples": ["soft.wav"] }"#, with: #""samples": ["soft.wav"], "gainDb": -4.5 }"#)
        json = json.replacingOccurrences(of: #""version": 2,"#, with: #""version": 2, "panLaw": "balance","#)
        let kit = try decodeKit(json)
        #expect(kit.panLaw == .balance)
        #expect(kit.instruments[1].layers[0].gainDb == -4.5)
        #expect(kit.instruments[1].layers[1].gainDb == 0)
        var absolute = kit
        for i in absolute.instruments.indices {
            for l in absolute.instruments[i].layers.indices {
                absolute.instruments[i].layers[l].samples = absolute.instruments[i].layers[l].samples.map {
                    SampleFile(path: $0.resolvedPath, resolvedPath: $0.resolvedPath)
                }
            }
        }
        #expect(try decodeKit(absolute.patchJSON()) == absolute)
        let bad = kitJSON().replacingOccurrences(of: #""version": 2,"#, with: #""version": 2, "panLaw": "linear","#)
        #expect(kitError(bad) == #"kit.json: panLaw: expected "constant-power", "balance" or "constant-power-stereo", got "linear""#)
        let loud = kitJSON().replacingOccurrences(of: #""samples": ["soft.wav"] }"#, with: #""samples": ["soft.wav"], "gainDb": 30 }"#)
        #expect(kitError(loud)?.contains("instruments[1].layers[0].gainDb") == true)
    }

    /// A patch's head length for streamed tails decodes, is written back and read the same; out
    /// of range it names its path and the range.
    @Test func theHeadLength() throws {
        let kit = try decodeKit(kitJSON().replacingOccurrences(of: #""version": 2,"#, with: #""version": 2, "headFrames": 4096,"#))
        #expect(kit.headFrames == 4096)
        #expect(try decodeKit(kitJSON()).headFrames == nil)
        #expect(kit.patchJSON().contains(#""headFrames": 4096,"#))
        #expect(try decodeKit(kit.patchJSON()).headFrames == 4096)
        for bad in ["32", "2000000", "1.5", "\"big\""] {
            let error = kitError(kitJSON().replacingOccurrences(of: #""version": 2,"#, with: #""version": 2, "headFrames": \#(bad),"#))
            #expect(error?.hasPrefix("kit.json: headFrames: ") == true, "\(bad): \(error ?? "no error")")
        }
    }
}
