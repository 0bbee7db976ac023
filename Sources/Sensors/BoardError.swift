public enum BoardError: Error, Equatable, CustomStringConvertible {
    /// No answer to a request within the response timeout.
    case timeout(String)
    /// The link ended while waiting.
    case linkClosed
    case plan(StreamingPlan.PlanError)

    public var description: String {
        switch self {
        case .timeout(let what): "no answer to \(what) in time"
        case .linkClosed: "the link closed"
        case .plan(let error): error.description
        }
    }
}
