import AppSyncEventsWire
import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import SubscriberCore

/// One AppSync Events WebSocket: reads its messages in order and answers them (protocols.md §1).
///
/// Subscriptions live in the shared ``ChannelHub``; everything outgoing goes through the connection's
/// ``WebSocketOutbox``. Keep-alives (`ka`) start once the client has sent its first message (normally
/// `connection_init`), so `connection_ack` is always the first answer.
actor AppSyncConnection {
    /// What shapes every connection.
    struct Settings: Sendable {
        var keepAliveInterval: Duration
        var connectionTimeoutMs: Int
        var maxConnectionDuration: Duration?
        var namespaces: Set<String>
        /// The longest inbound message answered normally; longer ones get an `error`.
        var maxMessageBytes: Int
    }

    nonisolated let id: UInt64
    private let outbox: WebSocketOutbox
    private let services: BackendServices
    private let settings: Settings
    private let logger: Logger
    private var active = false

    private init(id: UInt64, outbox: WebSocketOutbox, services: BackendServices, logger: Logger) {
        self.id = id
        self.outbox = outbox
        self.services = services
        self.settings = services.appSyncSettings
        self.logger = logger
    }

    /// Runs an accepted connection until it ends: the reader (this task), the writer, keep-alives and the maximum
    /// duration timer, then forgets its subscriptions.
    static func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, identity: CallerIdentity,
        services: BackendServices
    ) async {
        let outbox = WebSocketOutbox()
        let id = services.connections.register(kind: .appSyncEvents) { code, reason in outbox.close(code: code, reason: reason) }
        let logger = {
            var logger = services.logger
            logger[metadataKey: "appsync.connection"] = "\(id)"
            return logger
        }()
        let connection = AppSyncConnection(id: id, outbox: outbox, services: services, logger: logger)
        await services.hub.attach(id, outbox: outbox)
        logger.info("AppSync connection opened", metadata: ["identity": "\(identity)"])
        let settings = services.appSyncSettings
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await outbox.run(writer: outbound, faults: services.faults, channel: channel, logger: logger) }
            group.addTask { await connection.keepAlive() }
            if let maxDuration = settings.maxConnectionDuration {
                group.addTask {
                    do { try await Task.sleep(for: maxDuration) } catch { return }
                    logger.info("maximum connection duration reached; closing with 1000")
                    outbox.close(code: 1000, reason: "Connection max duration reached")
                }
            }
            do {
                try await InboundMessageReader.read(inbound, maxBytes: settings.maxMessageBytes) { await connection.handle($0) }
            } catch {
                logger.debug("inbound ended with an error", metadata: ["error": "\(error)"])
            }
            outbox.finish()
            group.cancelAll()
        }
        await services.hub.detach(id)
        services.connections.unregister(id)
        logger.info("AppSync connection closed")
    }

    /// Answers a connection whose connect-time authorization failed: `connection_error` with
    /// `UnauthorizedException`, then a close with 1000 (the service closes with 1000 even on failure).
    ///
    /// The error answers the client's first message (normally `connection_init`), or follows one second of silence:
    /// a frame sent right behind the 101 response can arrive in the same TCP segment, and some clients lose such frames
    /// (swift-websocket's `WSClient` did, before `NIOWebSocketConnector` moved to SwiftNIO directly). After the close
    /// the socket is read until the client answers (so unread data never turns the close into a reset), for at most
    /// three seconds.
    static func reject(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, failure: AuthFailure, logger: Logger
    ) async {
        enum Child { case reader, trigger, deadline }
        let (trigger, pull) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Child.self) { group in
            group.addTask {
                var iterator = inbound.makeAsyncIterator()
                while (try? await iterator.next()) != nil { pull.yield() }
                pull.finish()
                return .reader
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(1))
                pull.yield()
                return .trigger
            }
            for await _ in trigger { break }
            do {
                try await outbound.write(.text(AppSyncServerMessage.connectionError([failure.entry])))
                try await outbound.close(.normalClosure, reason: "Unauthorized")
            } catch {
                logger.debug("rejected connection went away first", metadata: ["error": "\(error)"])
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(3))
                channel.close(promise: nil)
                return .deadline
            }
            while let child = await group.next() {
                if child != .trigger { break }
            }
            group.cancelAll()
        }
    }

    // MARK: Keep-alive

    private func keepAlive() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: settings.keepAliveInterval) } catch { return }
            if active && services.faults.allowsKeepAlive() { outbox.send(AppSyncServerMessage.keepAlive) }
        }
    }

    // MARK: Messages

    private func handle(_ message: InboundMessageReader.Message) async {
        switch message {
        case .oversized(let size):
            logger.warning("oversized message", metadata: ["bytes": "\(size)"])
            outbox.send(
                AppSyncServerMessage.error(
                    id: nil, .badRequest("Message too large: \(size) bytes; the limit is \(settings.maxMessageBytes) bytes")))
        case .text(let text):
            await handle(text)
        }
    }

    private func handle(_ text: String) async {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let object = parsed as? [String: Any] else {
            outbox.send(AppSyncServerMessage.error(id: nil, .badRequest("Message is not a JSON object")))
            return
        }
        let id = object["id"] as? String
        guard let type = object["type"] as? String else {
            outbox.send(AppSyncServerMessage.error(id: id, .badRequest("Message has no type")))
            return
        }
        active = true
        switch type {
        case "connection_init":
            outbox.send(AppSyncServerMessage.connectionAck(timeoutMs: settings.connectionTimeoutMs))
        case "subscribe":
            if let id = validID(id, of: type) { await subscribe(id: id, object) }
        case "unsubscribe":
            if let id = validID(id, of: type) { await unsubscribe(id: id) }
        case "publish":
            if let id = validID(id, of: type) { await publish(id: id, object) }
        default:
            logger.debug("unsupported message type", metadata: ["type": "\(type)"])
            outbox.send(AppSyncServerMessage.error(id: id, .unsupported(type)))
        }
    }

    private func subscribe(id: String, _ object: [String: Any]) async {
        guard let rawChannel = object["channel"] as? String, let channel = try? ChannelName.validate(rawChannel, for: .subscribe) else {
            outbox.send(AppSyncServerMessage.subscribeError(id: id, .invalidChannel))
            return
        }
        if let error = ChannelAccess.namespaceError(channel, namespaces: settings.namespaces) {
            outbox.send(AppSyncServerMessage.subscribeError(id: id, error))
            return
        }
        let body = JSONString.object([(key: "channel", json: JSONString.quoted(rawChannel))])
        switch await authorize(object["authorization"], body: body, channel: channel) {
        case .failure(let error):
            logger.info("subscription refused", metadata: ["channel": "\(channel)", "reason": "\(error.message ?? "")"])
            outbox.send(AppSyncServerMessage.subscribeError(id: id, error))
            return
        case .success:
            break
        }
        switch await services.hub.subscribe(self.id, id: id, pattern: channel) {
        case .added:
            logger.debug("subscribed", metadata: ["channel": "\(channel)", "id": "\(id)"])
            outbox.send(AppSyncServerMessage.subscribeSuccess(id: id))
        case .duplicateID:
            outbox.send(
                AppSyncServerMessage.subscribeError(id: id, .badRequest("Subscription id \(id) is already in use on this connection")))
        case .limitReached:
            outbox.send(AppSyncServerMessage.subscribeError(id: id, .maxSubscriptions))
        case .unknownConnection:
            break
        }
    }

    /// The operation's id, or `nil` once a missing or malformed one is refused: a missing id with `error` (`publish_error`
    /// for a publish), a malformed one with the operation's own error.
    private func validID(_ id: String?, of type: String) -> String? {
        guard let id, !id.isEmpty else {
            let error = AppSyncErrorEntry.badRequest("\(type) requires an id")
            outbox.send(type == "publish" ? AppSyncServerMessage.publishError(id: nil, error) : AppSyncServerMessage.error(id: nil, error))
            return nil
        }
        guard AppSyncMessageID.isValid(id) else {
            let refusal: String =
                switch type {
                case "subscribe": AppSyncServerMessage.subscribeError(id: id, .invalidID)
                case "unsubscribe": AppSyncServerMessage.unsubscribeError(id: id, .invalidID)
                default: AppSyncServerMessage.publishError(id: id, .invalidID)
                }
            outbox.send(refusal)
            return nil
        }
        return id
    }

    private func unsubscribe(id: String) async {
        if await services.hub.unsubscribe(self.id, id: id) {
            outbox.send(AppSyncServerMessage.unsubscribeSuccess(id: id))
        } else {
            outbox.send(AppSyncServerMessage.unsubscribeError(id: id, .unknownOperation(id)))
        }
    }

    private func publish(id: String, _ object: [String: Any]) async {
        let request: AppSyncPublishRequest
        switch AppSyncPublishRequest.parse(channel: object["channel"], events: object["events"], namespaces: settings.namespaces) {
        case .failure(let error):
            outbox.send(AppSyncServerMessage.publishError(id: id, error))
            return
        case .success(let parsed):
            request = parsed
        }
        if case .failure(let error) = await authorize(object["authorization"], body: request.signingBody, channel: request.channel) {
            logger.info("publish refused", metadata: ["channel": "\(request.channel)", "reason": "\(error.message ?? "")"])
            outbox.send(AppSyncServerMessage.publishError(id: id, error))
            return
        }
        let (result, deliverable) = request.evaluate()
        // The publisher hears publish_success before any data its own subscriptions get from this publish.
        outbox.send(AppSyncServerMessage.publishSuccess(id: id, result))
        let frames = deliverable.isEmpty ? 0 : await services.hub.publish(channel: request.channel, events: deliverable)
        logger.debug("published", metadata: ["channel": "\(request.channel)", "events": "\(deliverable.count)", "frames": "\(frames)"])
    }

    /// Authenticates an operation's `authorization` object over its signed `body` and applies the channel rules.
    private func authorize(_ authorization: Any?, body: String, channel: String) async -> Result<CallerIdentity, AppSyncErrorEntry> {
        guard let auth = AuthObject(json: authorization) else { return .failure(.unauthorized("Missing authorization")) }
        switch await services.authenticator.authenticate(auth, body: body, host: .optional) {
        case .failure(let failure):
            return .failure(failure.entry)
        case .success(let caller):
            guard ChannelAccess.allows(caller, channel: channel) else {
                return .failure(.unauthorized("You are not authorized to use channel \(channel)"))
            }
            return .success(caller)
        }
    }
}
