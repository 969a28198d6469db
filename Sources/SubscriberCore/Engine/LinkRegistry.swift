/// The open links of one transport's supervisor, so it can reach them all at once (a probe after a network interface
/// change or when the app returns to the foreground). A link is in it from its acknowledgement to the end of its scope.
package final class LinkRegistry: Sendable {
    private let links = Locked<[Int: LinkControl]>([:])

    /// Creates an empty registry.
    package init() {}

    /// The link is open.
    package func add(_ control: LinkControl) { links.withLock { $0[control.id] = control } }

    /// The link's scope ended.
    package func remove(id: Int) { _ = links.withLock { $0.removeValue(forKey: id) } }

    /// How many links are open.
    package var count: Int { links.withLock { $0.count } }

    /// Probes every open link with `timeout` (see ``LinkControl/probe(timeout:)``); returns how many were probed.
    @discardableResult
    package func probeAll(timeout: Duration) -> Int {
        let controls = links.withLock { Array($0.values) }
        for control in controls { control.probe(timeout: timeout) }
        return controls.count
    }
}
