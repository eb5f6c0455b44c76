/// A command's failure, printed as one line ("sampler: error: …", exit 1).
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
