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
}
