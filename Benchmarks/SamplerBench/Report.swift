import Foundation

/// What the run found: printed as a table while it runs, written as JSON at the end.
final class Report {
    private(set) var json: [String: Any] = [:]
    private(set) var failures: [String] = []
    /// The performance targets and whether each was met, for the summary at the end.
    private(set) var targets: [(name: String, value: String, target: String, met: Bool?)] = []

    func section(_ title: String) {
        print("\n== \(title)")
    }

    func line(_ text: String) { print(text) }

    func set(_ key: String, _ value: Any) { json[key] = value }

    func target(_ name: String, value: String, target: String, met: Bool?) {
        targets.append((name, value, target, met))
    }

    func fail(_ message: String) {
        failures.append(message)
        print("FAIL: \(message)")
    }

    func printTargets() {
        section("Targets (issues 9 and 38)")
        let nameWidth = targets.map(\.name.count).max() ?? 10
        let valueWidth = targets.map(\.value.count).max() ?? 10
        for t in targets {
            let status = t.met.map { $0 ? "met" : "NOT met" } ?? "n/a"
            print("  \(t.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0))  "
                + "\(t.value.padding(toLength: valueWidth, withPad: " ", startingAt: 0))  target \(t.target)  [\(status)]")
        }
        json["targets"] = targets.map { ["name": $0.name, "value": $0.value, "target": $0.target,
                                         "met": $0.met.map { $0 as Any } ?? NSNull()] as [String: Any] }
    }

    func write(to path: String) throws {
        json["failures"] = failures
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: url)
    }
}

/// Right-aligns `value` formatted with `decimals` places in a column of `width`.
func col(_ value: Double, _ decimals: Int, width: Int = 9) -> String {
    let s = String(format: "%.\(decimals)f", value)
    return String(repeating: " ", count: max(0, width - s.count)) + s
}

func col(_ text: String, width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

func round(_ value: Double, _ decimals: Int) -> Double {
    let f = pow(10.0, Double(decimals))
    return (value * f).rounded() / f
}
