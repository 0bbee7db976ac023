public enum BoardError: Error, Equatable, CustomStringConvertible {
    /// No answer to a request within the response timeout.
    case timeout(String)
    /// The link ended while waiting.
    case linkClosed
    case plan(StreamingPlan.PlanError)
    /// An initialisation that did not finish in time, and what it was waiting for then.
    case initialisationStuck(step: String, after: Duration)

    public var description: String {
        switch self {
        case .timeout(let what): "no answer to \(what) in time"
        case .linkClosed: "the link closed"
        case .plan(let error): error.description
        case let .initialisationStuck(step, after):
            "the initialisation did not finish within \(after); it was waiting for \(step). The link is dropped and made again"
        }
    }
}
