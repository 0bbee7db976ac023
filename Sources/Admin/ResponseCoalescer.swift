/// Shares one computation of an expensive read-only response (status, metrics) among the
/// requests that arrive while it runs: 50 clients polling `/v1/status` cost one set of store
/// reads at a time, not 50, so operators and scrapers cannot load the store much.
///
/// Freshness: a request only joins a computation that started after the last mutating request
/// finished (tracked by a generation number), so a status read after `POST /v1/sessions`
/// always shows the new session. Nothing is cached once a computation ends.
actor ResponseCoalescer {
    private var inFlight: [String: (generation: Int, task: Task<AdminResponse, Never>)] = [:]
    private var generation = 0

    /// A mutating request finished: later reads must not join older computations.
    func invalidate() { generation += 1 }

    func response(for key: String, _ compute: @escaping @Sendable () async -> AdminResponse) async -> AdminResponse {
        if let running = inFlight[key], running.generation == generation {
            return await running.task.value
        }
        let task = Task { await compute() }
        let started = generation
        inFlight[key] = (started, task)
        let response = await task.value
        if inFlight[key]?.generation == started { inFlight[key] = nil }
        return response
    }
}
