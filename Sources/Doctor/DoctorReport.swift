/// How one check came out.
public enum CheckStatus: String, Sendable, Equatable {
    case ok
    /// Works now, but something is likely to go wrong (low disk space, an ACL that cannot be verified).
    case warn
    /// The gateway will not work as configured.
    case fail
}

/// One line of `gyrogate doctor`: a check and what it found.
public struct CheckResult: Sendable, Equatable {
    /// `config`, `transport`, `capabilities`, `broker`, `publish`, `data directory`, `disk space`, `admin socket`, `clock`.
    public var check: String
    public var outcome: Outcome

    public enum Outcome: Sendable, Equatable {
        case ok(String)
        case problem(DoctorProblem)
    }

    public init(_ check: String, _ outcome: Outcome) {
        self.check = check
        self.outcome = outcome
    }

    public static func ok(_ check: String, _ detail: String) -> CheckResult { CheckResult(check, .ok(detail)) }
    public static func problem(_ check: String, _ problem: DoctorProblem) -> CheckResult { CheckResult(check, .problem(problem)) }

    public var status: CheckStatus {
        switch outcome {
        case .ok: .ok
        case .problem(let problem): problem.severity
        }
    }

    /// The problem found, if any.
    public var problem: DoctorProblem? {
        if case .problem(let problem) = outcome { return problem }
        return nil
    }

    /// `ok   <check>: <detail>`, `warn <check>: <problem> — fix: <fix>` or `FAIL <check>: <problem> — fix: <fix>`.
    public var line: String {
        switch outcome {
        case .ok(let detail):
            return "ok   \(check): \(detail)"
        case .problem(let problem):
            let label = problem.severity == .fail ? "FAIL" : "warn"
            return "\(label) \(check): \(problem.problem) — fix: \(problem.fix)"
        }
    }
}

/// Every check's result, in the order they ran.
public struct DoctorReport: Sendable, Equatable {
    public var results: [CheckResult]

    public init(results: [CheckResult]) { self.results = results }

    /// No check failed (warnings allowed).
    public var passed: Bool { !results.contains { $0.status == .fail } }

    /// The process exit status: 0 when every check passed (warnings allowed), 1 otherwise.
    public var exitCode: Int32 { passed ? 0 : 1 }

    public var lines: [String] { results.map(\.line) }

    /// The results of one check (several lines share a name when a check finds several problems).
    public func results(for check: String) -> [CheckResult] { results.filter { $0.check == check } }
}
