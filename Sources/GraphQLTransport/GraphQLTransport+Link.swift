import Foundation
import SubscriberCore

extension GraphQLTransport {
    /// Opens the socket, sends `connection_init` with a payload built from fresh credentials, and waits for the ack.
    func establish(credentials: AuthCredentials) async -> Result<Int, GraphQLLinkEnd> {
        let request = WebSocketRequest(url: configuration.url, subprotocols: [Self.subprotocol])
        let connection: any WebSocketConnection
        do {
            connection = try await connector.connect(request, timeout: configuration.ackTimeout, clock: clock)
        } catch {
            logger.warning("connect failed", metadata: ["error": "\(error)"])
            return .failure(.openFailed(String(describing: error), authRejected: (error as? WebSocketSeamError)?.isAuthenticationRejection ?? false))
        }
        let generation = nextGeneration
        nextGeneration += 1
        link = GraphQLLink(generation: generation, connection: connection)
        startReceiving(generation, connection)
        let ackTimeout = configuration.ackTimeout
        link?.tasks.append(Task { [weak self, clock] in
            do { try await clock.sleep(for: ackTimeout, tolerance: nil) } catch { return }
            await self?.ackTimedOut(generation)
        })
        try? await connection.send(.text(GraphQLOutboundMessage.connectionInit(payload: configuration.connectionPayload(credentials))))
        let outcome: Result<Void, GraphQLLinkEnd> = await withCheckedContinuation { continuation in
            guard let current = link, current.generation == generation else { return continuation.resume(returning: .failure(.requested)) }
            if current.acked { return continuation.resume(returning: .success(())) }
            if let end = current.end { return continuation.resume(returning: .failure(end)) }
            link?.ackWaiter = continuation
        }
        switch outcome {
        case .success: return .success(generation)
        case .failure(let end):
            if link?.generation == generation { link = nil }
            return .failure(end)
        }
    }

    private func startReceiving(_ generation: Int, _ connection: any WebSocketConnection) {
        link?.tasks.append(Task { [weak self] in
            while true {
                let event = await connection.receive()
                guard let self else {
                    await connection.close(code: 1000, reason: "client released")
                    return
                }
                guard await self.handleInbound(event, on: generation) else { return }
            }
        })
    }

    func waitForEnd(of generation: Int) async -> GraphQLLinkEnd {
        await withCheckedContinuation { continuation in
            guard let current = link, current.generation == generation else { return continuation.resume(returning: .requested) }
            if let end = current.end { return continuation.resume(returning: end) }
            link?.endWaiters.append(continuation)
        }
    }

    func close(_ generation: Int, as reason: GraphQLLinkEnd, code: UInt16, reason text: String) async {
        guard let current = link, current.generation == generation, current.end == nil else { return }
        if current.requestedEnd == nil { link?.requestedEnd = reason }
        await current.connection.close(code: code, reason: text)
    }

    func linkEnded(_ generation: Int, _ end: GraphQLLinkEnd) {
        guard var current = link, current.generation == generation, current.end == nil else { return }
        current.end = end
        let waiters = current.endWaiters
        let ackWaiter = current.ackWaiter
        current.endWaiters = []
        current.ackWaiter = nil
        for task in current.tasks { task.cancel() }
        current.tasks = []
        let pongWaiter = current.pongWaiter
        current.pongWaiter = nil
        link = current
        pongWaiter?.resume(returning: false)
        ackWaiter?.resume(returning: .failure(end))
        for waiter in waiters { waiter.resume(returning: end) }
    }

    private func ackTimedOut(_ generation: Int) async {
        guard let current = link, current.generation == generation, !current.acked, current.end == nil else { return }
        logger.warning("no connection_ack in time", metadata: ["timeout": "\(configuration.ackTimeout)"])
        await close(generation, as: .ackTimeout(configuration.ackTimeout), code: GraphQLCloseCode.ackTimeout, reason: "Connection acknowledgement timeout")
    }

    /// Client keep-alive: `ping` once `pingInterval` has passed since the last pong (the reference client's schedule);
    /// no `pong` within `pongTimeout` closes the connection as dead.
    func startPinging(_ generation: Int) {
        guard let interval = configuration.pingInterval else { return }
        let timeout = configuration.pongTimeout
        link?.tasks.append(Task { [weak self, clock] in
            while true {
                do { try await clock.sleep(for: interval, tolerance: nil) } catch { return }
                guard let self, await self.sendPing(generation) else { return }
                let answered = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { await self.waitForPong(generation) }
                    group.addTask {
                        do { try await clock.sleep(for: timeout, tolerance: nil) } catch { return true }
                        return false
                    }
                    let first = await group.next() ?? true
                    group.cancelAll()
                    await self.releasePongWaiter(generation)
                    return first
                }
                if Task.isCancelled { return }
                guard answered else {
                    await self.close(generation, as: .pongTimeout(timeout), code: GraphQLCloseCode.pongTimeout, reason: "pong timeout")
                    return
                }
            }
        })
    }

    /// Sends a ping; `false` when the link is gone.
    private func sendPing(_ generation: Int) async -> Bool {
        guard let current = link, current.generation == generation, current.end == nil else { return false }
        try? await current.connection.send(.text(GraphQLOutboundMessage.ping))
        return true
    }

    /// Returns when the next pong arrives (or the link ends).
    private func waitForPong(_ generation: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            guard let current = link, current.generation == generation, current.end == nil else { return continuation.resume(returning: false) }
            link?.pongWaiter?.resume(returning: false)
            link?.pongWaiter = continuation
        }
    }

    private func releasePongWaiter(_ generation: Int) {
        guard link?.generation == generation, let waiter = link?.pongWaiter else { return }
        link?.pongWaiter = nil
        waiter.resume(returning: false)
    }

    /// A pong arrived.
    func pongReceived() {
        let waiter = link?.pongWaiter
        link?.pongWaiter = nil
        waiter?.resume(returning: true)
    }
}
