import Capture
import HostTime
import JSON

extension AdminAPI {
    /// The gateway's clock in the status: how times are dated now (`state`), whether the kernel
    /// says the wall clock is synchronised, and the steps and re-datings seen in this run.
    func clockStatus() async -> JSONValue {
        guard let clock = engine.clock else { return ["state": "synchronised", "source": "the wall clock as it is (no clock watcher)"] }
        let snapshot = clock.snapshot
        var status: [String: JSONValue] = [
            "state": .string(snapshot.dating.rawValue),
            "storedAs": .string(await engine.dating.rawValue),
            "kernelSynchronised": .bool(snapshot.kernelSynchronised),
            "correctionSeconds": .number(snapshot.correction),
            "maxErrorSeconds": snapshot.maxError.map { JSONValue.number($0) } ?? .null,
            "boardSource": snapshot.boardSource.map { JSONValue.string($0) } ?? .null,
            "steps": snapshot.steps.jsonValue,
            "redatings": snapshot.redatings.jsonValue,
            "stepDetection": .string(snapshot.stepDetection),
        ]
        if let last = snapshot.lastRedating {
            status["lastRedating"] = ["deltaSeconds": .number(last.delta), "dating": .string(last.dating.rawValue), "reason": .string(last.reason),
                                      "atMs": snapshot.lastRedatingAt.map { JSONValue.number(($0 * 1000).rounded()) } ?? .null]
        }
        if let fix = Self.clockAdvice(snapshot.dating) { status["fix"] = .string(fix) }
        return .object(status)
    }

    /// What an operator can do about a clock that is not synchronised.
    static func clockAdvice(_ dating: Dating) -> String? {
        switch dating {
        case .synchronised: nil
        case .board: "dated by a board's clock (within its crystal's drift since it was last read while synchronised); give the gateway a time source (NTP: systemd-timesyncd or chrony) to date exactly"
        case .unsynchronised: "the wall clock is not synchronised and no known board dates it: give the gateway a time source (NTP: systemd-timesyncd or chrony); sessions recorded now are re-dated when it is synchronised"
        }
    }

    func addClockMetrics(to text: inout PrometheusText) async {
        guard let clock = engine.clock else { return }
        let snapshot = clock.snapshot
        text.add("clock_kernel_synchronised", .gauge, "1 while the kernel says an NTP client keeps the wall clock synchronised (adjtimex).",
                 snapshot.kernelSynchronised ? 1 : 0)
        for dating in Dating.allCases {
            text.add("clock_dating_\(dating.rawValue)", .gauge, "1 while the gateway's times are dated \(dating.rawValue == "board" ? "by a board's clock" : dating.rawValue).",
                     snapshot.dating == dating ? 1 : 0)
        }
        text.add("clock_steps_total", .counter, "Steps of the wall clock seen in this run.", snapshot.steps)
        text.add("clock_redatings_total", .counter, "Re-datings of what this run dated (a step, the first synchronisation, a board).", snapshot.redatings)
        text.add("clock_correction_seconds", .gauge, "True time minus the gateway's continuous timeline.", snapshot.correction)
        text.add("sessions_redated_total", .counter, "Sessions moved by re-datings.", await engine.counters.redatedSessions)
    }
}
