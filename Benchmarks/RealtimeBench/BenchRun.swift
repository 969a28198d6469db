/// Runs the chosen client inside a measurement window, with a watchdog for dropped events and stalled streams.
struct BenchRun {
    let options: RealtimeBench

    func execute() async throws -> BenchResult {
        let progress = Progress()
        let window = MeasurementWindow.start()
        let label =
            [.bare, .notifier, .store].contains(options.client)
            ? "\(options.client.rawValue)-\(options.wire.rawValue)" : options.client.rawValue
        let options = self.options
        let client = Task {
            switch options.client {
            case .bare: try await BareClient(options: options).run(window: window, progress: progress)
            case .appsync, .graphql: try await TransportClient(options: options).run(window: window, progress: progress)
            case .notifier: try await NotifierClient(options: options).run(window: window, progress: progress)
            case .store: try await StoreClient(options: options).run(window: window, progress: progress)
            }
        }
        let watchdog = progress.watch(target: options.count, idleTimeout: options.idleTimeout, label: label, window: window) {
            client.cancel()  // only once every missing event is accounted for as lost
        }
        defer { watchdog.cancel() }
        return try await client.value
    }
}
