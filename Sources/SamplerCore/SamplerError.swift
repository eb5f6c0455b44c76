/// An error with a one-line message for the user.
public struct SamplerError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
