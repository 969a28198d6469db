/// Runs the chosen client inside a measurement window, with a watchdog for stalled streams.
struct BenchRun {
    let options: RealtimeBench

    func execute() async throws -> BenchResult {
        let progress = Progress()
        let window = MeasurementWindow.start()
        let label = options.client == .bare || options.client == .notifier ? "\(options.client.rawValue)-\(options.wire.rawValue)" : options.client.rawValue
        let watchdog = progress.watch(idleTimeout: options.idleTimeout, label: label, window: window)
        defer { watchdog.cancel() }
        switch options.client {
        case .bare: return try await BareClient(options: options).run(window: window, progress: progress)
        case .appsync, .graphql: return try await TransportClient(options: options).run(window: window, progress: progress)
        case .notifier: return try await NotifierClient(options: options).run(window: window, progress: progress)
        }
    }
}
