/// An error with a one-line message for the user: thrown by the modules and by the command line,
/// which prints it as one line ("sampler: error: …", exit 1).
public struct SamplerError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
