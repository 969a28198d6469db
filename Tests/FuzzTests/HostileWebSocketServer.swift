import Foundation
import NIOCore
import NIOTestServer
import NIOWebSocket
import RealtimeTesting
import SubscriberCore
import WebSocketNIO

/// A hostile WebSocket server on 127.0.0.1 (an ephemeral port) for the fuzz suite: a ``NIOWebSocketTestServer``
/// configured to misbehave.
///
/// Per accepted connection it plays the protocol far enough to get the client's subscription live (AppSync:
/// `connection_ack`, `subscribe_success`; graphql-transport-ws: `connection_ack`, `pong`), then streams frames from a
/// seeded generator — valid seq-numbered events mixed with hostile ones — written as raw bytes (the NIO frame encoder
/// is taken out of the pipeline), so it can send what no well-behaved server would. Only the newest connection
/// streams. Once `frameBudget` generated frames are out it sends valid events only (the final burst).
///
/// It records every connection's open and close instants (TCP), its scenario and the last frames it wrote.
final class HostileWebSocketServer: Sendable {
    struct Options: Sendable {
        var dialect: FuzzDialect
        var seed: UInt64
        /// Generated frames (valid and hostile) before the final burst.
        var frameBudget: Int
        var mix = FrameMix()
        /// Frames written per batch, and the pause between batches (the next batch also waits for the last write).
        var batchSize = 16
        var batchInterval = TimeAmount.microseconds(1000)
        /// `connectionTimeoutMs` in a normal AppSync acknowledgement.
        var keepAliveMilliseconds = 1500
        /// The client's largest frame and message.
        var clientMaxSize = NIOWebSocketConnector.defaultMaxSize
        /// A connection that ignores the client's close still answers its protocol pings (a zombie link): WSClient
        /// fails a link on a frame with RSV bits or a reserved opcode by sending close 1002 but keeps reading, and the
        /// connector must still end the link within its close timeout. `VORTEX_FUZZ_ZOMBIE=0` turns it off.
        var answersAfterIgnoringClose = true
    }

    /// One TCP connection, as the server saw it.
    struct ConnectionRecord: Sendable {
        var index: Int
        var scenario: String
        var openedAt: ContinuousClock.Instant
        var closedAt: ContinuousClock.Instant?
        var upgraded = false
        var subscribed = false
        /// The first frame generated to end the link, and when it was written.
        var ending: (kind: String, at: ContinuousClock.Instant)?
        /// The last frames written (kinds), newest last.
        var recentKinds: [String] = []
        var framesWritten = 0
    }

    struct Snapshot: Sendable {
        var connections: [ConnectionRecord]
        var framesSent: Int
        var validSent: Int
        var nextSeq: Int
        var finalFromSeq: Int?
        var kindCounts: [String: Int]
    }

    fileprivate struct State {
        var connections: [ConnectionRecord] = []
        /// Each accepted connection's generator, until its upgrade takes it.
        var generators: [Int: (scenario: ConnectionScenario, generator: HostileFrameGenerator)] = [:]
        var framesSent = 0
        var validSent = 0
        var nextSeq = 0
        var finalFromSeq: Int?
        var kindCounts: [String: Int] = [:]
        var stopped = false
    }

    let options: Options
    private let server: NIOWebSocketTestServer
    fileprivate let state: Locked<State>

    private init(options: Options, server: NIOWebSocketTestServer, state: Locked<State>) {
        self.options = options
        self.server = server
        self.state = state
    }

    /// The port the server listens on.
    var port: Int { server.port }

    /// The `ws://` URL of the server (AppSync's real-time path; the GraphQL transport does not care).
    var url: URL { server.url }

    static func start(_ options: Options) async throws -> HostileWebSocketServer {
        let state = Locked(State())
        let clock = ContinuousClock()
        var behaviour = NIOWebSocketTestServer.Behaviour { channel, index in
            guard let (scenario, generator) = state.withLock({ $0.generators.removeValue(forKey: index) }) else { return }
            // Frames go out as raw bytes, written in front of NIO's frame encoder (which cannot write broken frames and
            // cannot be removed).
            try channel.pipeline.syncOperations.addHandler(RawOutlet(), position: .first)
            let outlet = try channel.pipeline.syncOperations.context(handlerType: RawOutlet.self)
            try channel.pipeline.syncOperations.addHandler(
                HostileConnectionHandler(
                    state: state, options: options, index: index, scenario: scenario, generator: generator, outlet: outlet))
        }
        behaviour.accepted = { channel, index in
            let now = clock.now
            state.withLock { state in
                // Connections accepted at once may get here out of order: each fills its own slot.
                while state.connections.count <= index {
                    state.connections.append(ConnectionRecord(index: state.connections.count, scenario: "", openedAt: now))
                }
                state.connections[index].openedAt = now
            }
            // Everything about a connection follows from the seed and its index.
            var generator = HostileFrameGenerator(
                dialect: options.dialect, mix: options.mix, keepAliveMilliseconds: options.keepAliveMilliseconds,
                clientMaxSize: options.clientMaxSize, rng: SplitMix64.derived(seed: options.seed, index: UInt64(index)))
            let scenario = generator.scenario()
            state.withLock { state in
                state.connections[index].scenario = scenario.description
                state.generators[index] = (scenario, generator)
            }
            try channel.pipeline.syncOperations.addHandler(LifecycleRecorder(state: state, index: index))
        }
        behaviour.selectSubprotocol = { offered in
            offered.first { $0 == "aws-appsync-event-ws" || $0 == "graphql-transport-ws" }
        }
        behaviour.automaticErrorHandling = false
        // A small send buffer keeps the server from running far ahead of the client: what sits in the buffers when a
        // link ends is never read, so it would be sent but not fuzzed.
        behaviour.sendBufferSize = 16 * 1024
        let server = try await NIOWebSocketTestServer.start(behaviour)
        return HostileWebSocketServer(options: options, server: server, state: state)
    }

    /// What the server has done so far.
    var snapshot: Snapshot {
        state.withLock {
            Snapshot(
                connections: $0.connections, framesSent: $0.framesSent, validSent: $0.validSent, nextSeq: $0.nextSeq,
                finalFromSeq: $0.finalFromSeq, kindCounts: $0.kindCounts)
        }
    }

    /// Stops streaming, drops every connection and stops listening.
    func shutdown() async {
        state.withLock { $0.stopped = true }
        await server.shutdown()
    }
}

/// The head-most handler: bytes written from its context go straight to the socket.
private final class RawOutlet: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
}

/// Records when the TCP connection goes.
private final class LifecycleRecorder: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    private let state: Locked<HostileWebSocketServer.State>
    private let index: Int

    init(state: Locked<HostileWebSocketServer.State>, index: Int) {
        self.state = state
        self.index = index
    }

    func channelInactive(context: ChannelHandlerContext) {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.connections[index].closedAt == nil { state.connections[index].closedAt = now }
        }
        context.fireChannelInactive()
    }
}

/// One upgraded connection: plays the protocol, then streams generated frames.
private final class HostileConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    private let state: Locked<HostileWebSocketServer.State>
    private let options: HostileWebSocketServer.Options
    private let index: Int
    private let scenario: ConnectionScenario
    private var generator: HostileFrameGenerator
    private var subscriptionID: String?
    private var pumping = false
    /// Writes nothing more and ignores the client (the link went silent, or a close is left unanswered).
    private var silent = false
    /// Streams nothing more.
    private var stopped = false
    /// The server sent a close: the client's close is the answer, then the TCP connection goes.
    private var sentClose = false
    /// The client sent its close frame.
    private var clientClosed = false
    private var message: [UInt8]?
    /// Where raw bytes are written.
    private let outlet: ChannelHandlerContext

    init(
        state: Locked<HostileWebSocketServer.State>, options: HostileWebSocketServer.Options, index: Int,
        scenario: ConnectionScenario, generator: HostileFrameGenerator, outlet: ChannelHandlerContext
    ) {
        self.outlet = outlet
        self.state = state
        self.options = options
        self.index = index
        self.scenario = scenario
        self.generator = generator
    }

    func handlerAdded(context: ChannelHandlerContext) {
        state.withLock { $0.connections[index].upgraded = true }
        // Right behind the 101, before the client's first message.
        if let early = scenario.early { write(context, early.bytes, kinds: [early.kind]) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !silent else { return }
        // After ignoring the client's close the server says nothing more (unless it plays the zombie).
        if clientClosed && scenario.ignoresClientClose && !options.answersAfterIgnoringClose { return }
        switch frame.opcode {
        case .text, .binary:
            message = Array(frame.unmaskedData.readableBytesView)
            if frame.fin { completeMessage(context) }
        case .continuation:
            message? += Array(frame.unmaskedData.readableBytesView)
            if frame.fin { completeMessage(context) }
        case .ping:
            write(context, Wire.frame(Wire.pong, Array(frame.unmaskedData.readableBytesView)), kinds: [])
        case .connectionClose:
            stopped = true
            clientClosed = true
            if sentClose {
                context.close(promise: nil)
            } else if !scenario.ignoresClientClose {
                let echo = Wire.frame(Wire.close, Array(frame.unmaskedData.readableBytesView))
                send(echo).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            }
        default:
            break
        }
    }

    private func completeMessage(_ context: ChannelHandlerContext) {
        guard let bytes = message else { return }
        message = nil
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any], let type = object["type"] as? String
        else {
            return
        }
        let id = object["id"] as? String
        switch (options.dialect, type) {
        case (_, "connection_init"):
            handshake(context)
        case (.appSync, "subscribe"):
            guard let id else { return }
            write(context, Wire.text(#"{"type":"subscribe_success","id":"\#(id)"}"#), kinds: [])
            startStreaming(context, id: id)
        case (.graphQL, "subscribe"):
            guard let id else { return }
            startStreaming(context, id: id)
        case (.graphQL, "ping"):
            write(context, Wire.text(#"{"type":"pong"}"#), kinds: [])
        default:
            break
        }
    }

    private func handshake(_ context: ChannelHandlerContext) {
        switch scenario.handshake {
        case .normal:
            write(context, Wire.text(generator.normalAck()), kinds: [])
        case .oddAck(let text):
            write(context, Wire.text(text), kinds: [])
        case .fail(let kind, let bytes, let after):
            state.withLock { $0.connections[index].ending = (kind, ContinuousClock.now) }
            apply(after, context, written: write(context, bytes, kinds: [kind]))
        case .neverAck:
            break
        }
    }

    private func startStreaming(_ context: ChannelHandlerContext, id: String) {
        subscriptionID = id
        state.withLock { $0.connections[index].subscribed = true }
        guard !pumping else { return }
        pumping = true
        pump(context)
    }

    /// Writes one batch, then schedules the next once it is written and the pause has passed.
    private func pump(_ context: ChannelHandlerContext) {
        guard !stopped, !silent, context.channel.isActive, let id = subscriptionID else {
            pumping = false
            return
        }
        var generator = self.generator
        let batch = state.withLock { state -> (bytes: [UInt8], after: AfterFrame)? in
            // Only the newest connection streams: an old one may still be open while the client gives up on it.
            guard !state.stopped, state.connections.count == index + 1 else { return nil }
            var bytes: [UInt8] = []
            var kinds: [String] = []
            var after = AfterFrame.keepStreaming
            for _ in 0..<options.batchSize {
                let frame: GeneratedFrame
                if state.framesSent >= options.frameBudget {
                    if state.finalFromSeq == nil { state.finalFromSeq = state.nextSeq }
                    frame = generator.valid(id: id, seq: state.nextSeq)
                    state.nextSeq += 1
                } else {
                    frame = generator.next(id: id, scenario: scenario) {
                        defer { state.nextSeq += 1 }
                        return state.nextSeq
                    }
                    state.framesSent += 1
                }
                if frame.seq != nil { state.validSent += 1 }
                state.kindCounts[frame.kind, default: 0] += 1
                kinds.append(frame.kind)
                bytes += frame.bytes
                if frame.ending && state.connections[index].ending == nil {
                    state.connections[index].ending = (frame.kind, ContinuousClock.now)
                }
                if frame.after != .keepStreaming {
                    after = frame.after
                    break
                }
            }
            record(&state, kinds: kinds)
            return (bytes, after)
        }
        self.generator = generator
        guard let batch else {
            pumping = false
            return
        }
        let future = send(batch.bytes)
        if batch.after != .keepStreaming {
            pumping = false
            apply(batch.after, context, written: future)
            return
        }
        future.assumeIsolated().whenComplete { _ in
            context.eventLoop.assumeIsolated().scheduleTask(in: self.options.batchInterval) {
                self.pump(context)
            }
        }
    }

    private func apply(_ after: AfterFrame, _ context: ChannelHandlerContext, written: EventLoopFuture<Void>? = nil) {
        switch after {
        case .keepStreaming:
            break
        case .closeTCP:
            stopped = true
            if let written {
                written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
        case .goSilent:
            stopped = true
            silent = true
        case .awaitCloseAnswer:
            stopped = true
            sentClose = true
        }
    }

    @discardableResult
    private func write(_ context: ChannelHandlerContext, _ bytes: [UInt8], kinds: [String]) -> EventLoopFuture<Void>? {
        guard !silent, !bytes.isEmpty else { return nil }
        if !kinds.isEmpty { state.withLock { record(&$0, kinds: kinds) } }
        return send(bytes)
    }

    private func send(_ bytes: [UInt8]) -> EventLoopFuture<Void> {
        outlet.writeAndFlush(NIOAny(outlet.channel.allocator.buffer(bytes: bytes)))
    }

    private func record(_ state: inout HostileWebSocketServer.State, kinds: [String]) {
        state.connections[index].framesWritten += kinds.count
        state.connections[index].recentKinds += kinds
        let excess = state.connections[index].recentKinds.count - 24
        if excess > 0 { state.connections[index].recentKinds.removeFirst(excess) }
    }
}
