import Testing
@testable import Patches

/// The v1 player keys `"stream"` and `"preload"`.
@Suite struct PatchStreamingKeyTests {
    private func players(_ json: String) -> String {
        patchJSON(players: json, pattern: nil)
    }

    @Test func streamAndPreloadChooseHowAPlayerLoads() throws {
        let patch = try decode(players(#"""
            [ { "id": "kick", "sound": "kick", "stream": true },
              { "id": "snare", "sound": "snare", "preload": true },
              { "id": "both", "sound": "snare", "stream": false, "preload": false },
              { "id": "plain", "sound": "kick" } ]
            """#))
        #expect(patch.instruments.map(\.layers[0].samples[0].loading) == [.stream, .preload, .automatic, .automatic])
    }

    @Test func streamAndPreloadTogetherIsAnErrorNamingThePlayer() {
        let json = players(#"[ { "id": "kick", "sound": "kick", "stream": true, "preload": true } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[0]: give either "stream" or "preload", not both"#)
    }

    @Test func aStreamValueThatIsNotABooleanIsNamed() {
        let json = players(#"[ { "id": "kick", "sound": "kick", "stream": "yes" } ]"#)
        #expect(errorDescription(json) == #"drums.json: players[0].stream: expected true or false, got "yes""#)
    }
}
