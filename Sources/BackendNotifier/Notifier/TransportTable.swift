import SubscriberCore

/// The transports the notifier's state machine refers to by id: the active one and, during a switch, the new one.
struct TransportTable {
    private var transports: [Int: any RealtimeTransport]
    private var nextID = 1

    /// A table holding `first` as transport 0.
    init(_ first: any RealtimeTransport) { transports = [0: first] }

    subscript(id: Int) -> (any RealtimeTransport)? { transports[id] }

    /// Adds `transport` under a new id and returns how the machine will refer to it.
    mutating func add(_ transport: any RealtimeTransport) -> NotifierStateMachine.TransportRef {
        defer { nextID += 1 }
        transports[nextID] = transport
        return NotifierStateMachine.TransportRef(id: nextID, name: transport.name, dialect: transport.dialect)
    }

    mutating func remove(_ id: Int) { transports[id] = nil }
}
