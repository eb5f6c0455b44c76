import Foundation

/// The CPU the table was measured on, from /proc/cpuinfo: its name, family and model (which name
/// the core generation where the model name does not), and the vector extensions the kernels and
/// the C reference can use.
struct CPUDescription {
    var modelName = "?"
    var vendor = "?"
    var family = -1
    var model = -1
    var flags: Set<String> = []

    static func read() -> CPUDescription {
        var d = CPUDescription()
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return d }
        // The first processor's block.
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "model name" where d.modelName == "?": d.modelName = parts[1]
            case "vendor_id" where d.vendor == "?": d.vendor = parts[1]
            case "cpu family" where d.family < 0: d.family = Int(parts[1]) ?? -1
            case "model" where d.model < 0: d.model = Int(parts[1]) ?? -1
            case "flags" where d.flags.isEmpty: d.flags = Set(parts[1].split(separator: " ").map(String.init))
            default: break
            }
        }
        return d
    }

    /// AMD's core generation from family and model (AMD's model names in VMs often say only
    /// "AMD EPYC"); nil where not known.
    var generation: String? {
        guard vendor == "AuthenticAMD" else { return nil }
        switch (family, model) {
        case (23, 0..<0x30): return "Zen/Zen+"
        case (23, _): return "Zen 2"
        case (25, 0x10...0x1F), (25, 0x60...0x7F), (25, 0xA0...0xAF): return "Zen 4"
        case (25, _): return "Zen 3"
        case (26, _): return "Zen 5"
        default: return nil
        }
    }

    /// The flags that change which instructions the kernels and the C reference get.
    var flagsThatMatter: [String] {
        ["avx2", "fma", "avx512f", "avx512dq", "avx512vl", "avx512bw"].filter { flags.contains($0) }
    }

    /// One line: name, generation, family/model, flags.
    var summary: String {
        let gen = generation.map { " (\($0))" } ?? ""
        return "\(modelName)\(gen), family \(family) model \(model), \(flagsThatMatter.isEmpty ? "no AVX2" : flagsThatMatter.joined(separator: " "))"
    }
}
