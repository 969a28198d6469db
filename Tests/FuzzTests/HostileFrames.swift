import Foundation
import RealtimeTesting

/// The protocol a hostile server speaks.
enum FuzzDialect: String, Sendable {
    case appSync = "appsync"
    case graphQL = "graphql"
}

/// Raw WebSocket frames, server to client, encoded by hand so they can break every rule.
enum Wire {
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let continuation: UInt8 = 0x0
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA

    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = false) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | ((rsv & 0x7) << 4) | (opcode & 0x0F)]
        out.reserveCapacity(payload.count + 14)
        let maskBit: UInt8 = masked ? 0x80 : 0
        let count = payload.count
        if count < 126 {
            out.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            out += [maskBit | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF)) }
        }
        if masked {
            let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
            out += payload.enumerated().map { $1 ^ key[$0 % 4] }
            out.insert(contentsOf: key, at: out.count - payload.count)
        } else {
            out += payload
        }
        return out
    }

    static func text(_ string: String) -> [UInt8] { frame(text, Array(string.utf8)) }

    static func closeFrame(code: UInt16?, reason: [UInt8] = []) -> [UInt8] {
        guard let code else { return frame(close, []) }
        return frame(close, [UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
    }
}

/// What the server does once a generated frame is on the wire.
enum AfterFrame: Sendable, Equatable {
    /// Go on streaming.
    case keepStreaming
    /// Close the TCP connection at once.
    case closeTCP
    /// Stop writing and ignore the client (keep the TCP connection open): a silent link.
    case goSilent
    /// Stop writing but still answer the client's close (the frame was a close: the normal handshake).
    case awaitCloseAnswer
}

/// One generated server write.
struct GeneratedFrame: Sendable {
    /// A short name for statistics and failure reports.
    var kind: String
    /// The raw bytes: one or more WebSocket frames (or junk).
    var bytes: [UInt8]
    /// The seq number, for a valid event.
    var seq: Int?
    var after: AfterFrame = .keepStreaming
    /// Whether it was generated to end the link.
    var ending = false
}

/// How often each class of frame is generated.
struct FrameMix: Sendable {
    /// Hostile frames a client should ignore (or that at worst end the link).
    var benign = 0.05
    /// Frames meant to end the link fast (protocol breaks, closes, `connection_error`).
    var ending = 0.0015
    /// Frames that end the link only through a timeout (silence, an unanswered close).
    var slow = 0.00005
    /// Valid events split into fragments (with a ping in between, sometimes).
    var fragmentedValid = 0.02
}

/// How a connection behaves around the handshake and the close.
struct ConnectionScenario: Sendable, CustomStringConvertible {
    enum Handshake: Sendable, Equatable {
        /// The usual acknowledgement.
        case normal
        /// An acknowledgement with odd values (`connectionTimeoutMs` negative, huge, a string, …).
        case oddAck(String)
        /// A failing handshake: the frames sent instead of the acknowledgement, and what follows.
        case fail(kind: String, bytes: [UInt8], after: AfterFrame)
        /// No answer to `connection_init` at all (the client's ack timeout ends it).
        case neverAck
    }

    var handshake: Handshake = .normal
    /// Frames written right behind the 101, before the client's first message.
    var early: (kind: String, bytes: [UInt8])?
    /// Never answer the client's close frame; keep the TCP connection open.
    var ignoresClientClose = false
    /// Whether a silent link is detected quickly (the keep-alive window is the short one), so `goSilent` may be used.
    var silenceAllowed = true

    var description: String {
        var parts: [String] = []
        switch handshake {
        case .normal: break
        case .oddAck(let ack): parts.append("oddAck(\(ack.prefix(80)))")
        case .fail(let kind, _, _): parts.append("handshakeFail(\(kind))")
        case .neverAck: parts.append("neverAck")
        }
        if let early { parts.append("early(\(early.kind))") }
        if ignoresClientClose { parts.append("ignoresClientClose") }
        return parts.isEmpty ? "normal" : parts.joined(separator: ",")
    }
}

/// Generates a connection's scenario and its frames from a seeded generator.
struct HostileFrameGenerator: Sendable {
    let dialect: FuzzDialect
    let mix: FrameMix
    /// The `connectionTimeoutMs` of a normal AppSync acknowledgement.
    let keepAliveMilliseconds: Int
    /// The client's largest accepted frame and message.
    let clientMaxSize: Int
    var rng: SplitMix64
    private var unknownCounter = 0

    init(dialect: FuzzDialect, mix: FrameMix, keepAliveMilliseconds: Int, clientMaxSize: Int, rng: SplitMix64) {
        self.dialect = dialect
        self.mix = mix
        self.keepAliveMilliseconds = keepAliveMilliseconds
        self.clientMaxSize = clientMaxSize
        self.rng = rng
    }

    static let deepOpen = String(repeating: "[", count: 10_000)
    static let deepClose = String(repeating: "]", count: 10_000)
    static let deepObject = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
    static let hugeDigits = String(repeating: "9", count: 400)

    // MARK: Valid

    /// The valid event carrying `seq` for subscription `id`.
    static func validEvent(_ dialect: FuzzDialect, id: String, seq: Int) -> String {
        switch dialect {
        case .appSync: #"{"type":"data","id":"\#(id)","event":"{\"seq\":\#(seq)}"}"#
        case .graphQL: #"{"id":"\#(id)","type":"next","payload":{"data":{"f":{"seq":\#(seq)}}}}"#
        }
    }

    /// The acknowledgement of a normal connection.
    func normalAck() -> String {
        switch dialect {
        case .appSync: #"{"type":"connection_ack","connectionTimeoutMs":\#(keepAliveMilliseconds)}"#
        case .graphQL: #"{"type":"connection_ack"}"#
        }
    }

    // MARK: Scenarios

    mutating func scenario() -> ConnectionScenario {
        var scenario = ConnectionScenario()
        let roll = rng.below(1000)
        switch roll {
        case 0..<60: scenario.early = earlyFrames()
        case 60..<110: scenario.ignoresClientClose = true
        case 110..<160:
            let ack = oddAck()
            scenario.handshake = .oddAck(ack.text)
            scenario.silenceAllowed = ack.silenceAllowed
        case 160..<185: scenario.handshake = handshakeFailure()
        case 185..<188: scenario.handshake = .neverAck
        default: break
        }
        if roll >= 188 && rng.chance(0.02) { scenario.ignoresClientClose = true }
        return scenario
    }

    private mutating func earlyFrames() -> (kind: String, bytes: [UInt8]) {
        switch dialect {
        case .appSync:
            let choices: [(String, [UInt8])] = [
                ("early-ka", Wire.text(#"{"type":"ka"}"#)),
                ("early-ack", Wire.text(normalAck())),
                ("early-junk", Wire.text("{not json")),
                ("early-ping", Wire.frame(Wire.ping, Array("hi".utf8))),
                ("early-binary", Wire.frame(Wire.binary, [0, 1, 2, 0xFF])),
                ("early-data", Wire.text(Self.validEvent(.appSync, id: "nobody", seq: 0).replacingOccurrences(of: "seq", with: "qes"))),
            ]
            let pick = choices[rng.below(choices.count)]
            return (pick.0, pick.1)
        case .graphQL:
            let choices: [(String, [UInt8])] = [
                ("early-ping", Wire.text(#"{"type":"ping"}"#)),
                ("early-pong", Wire.text(#"{"type":"pong","payload":{}}"#)),
                ("early-ack", Wire.text(normalAck())),
                ("early-wsping", Wire.frame(Wire.ping, Array("hi".utf8))),
            ]
            let pick = choices[rng.below(choices.count)]
            return (pick.0, pick.1)
        }
    }

    private mutating func oddAck() -> (text: String, silenceAllowed: Bool) {
        switch dialect {
        case .appSync:
            let values: [(String, Bool)] = [
                ("-1", true), ("0", true), ("-9223372036854775808", true), (Self.hugeDigits, true), ("1e400", true),
                (#""3000""#, true), ("3.5", true), ("null", true), ("{}", true), ("[1500]", true), ("true", true),
                ("99999999999999999999", true), ("86400001", true), ("86400000", false), ("600000", false),
                (#""\ud800""#, true),
            ]
            let (value, allowed) = values[rng.below(values.count)]
            let forms = [
                #"{"type":"connection_ack","connectionTimeoutMs":\#(value)}"#,
                #"{"type":"connection_ack","payload":{"connectionTimeoutMs":\#(value)}}"#,
                #"{"connectionTimeoutMs":\#(value),"type":"connection_ack","connectionTimeoutMs":\#(keepAliveMilliseconds)}"#,
            ]
            let form = rng.below(forms.count)
            // The duplicate-key form may take either value; only a known-short window allows silence tests.
            return (forms[form], allowed)
        case .graphQL:
            let payloads = [
                "null", "42", #""x""#, "[1,2]", #"{"deep":\#(Self.deepOpen)\#(Self.deepClose)}"#, #"{"n":\#(Self.hugeDigits)}"#,
                #"{"s":"\ud800"}"#,
            ]
            return (#"{"type":"connection_ack","payload":\#(payloads[rng.below(payloads.count)])}"#, true)
        }
    }

    private mutating func handshakeFailure() -> ConnectionScenario.Handshake {
        switch dialect {
        case .appSync:
            let choices: [ConnectionScenario.Handshake] = [
                .fail(
                    kind: "hs-connection_error",
                    bytes: Wire.text(#"{"type":"connection_error","errors":[{"errorType":"InternalFailure","message":"fuzz"}]}"#),
                    after: .keepStreaming),
                .fail(kind: "hs-connection_error-bare", bytes: Wire.text(#"{"type":"connection_error"}"#), after: .keepStreaming),
                .fail(kind: "hs-close", bytes: Wire.closeFrame(code: 1011, reason: Array("busy".utf8)), after: .awaitCloseAnswer),
                .fail(kind: "hs-tcp-close", bytes: [], after: .closeTCP),
                .fail(kind: "hs-invalid-utf8", bytes: Wire.frame(Wire.text, [0x7B, 0xFF, 0xFE, 0x7D]), after: .keepStreaming),
            ]
            return choices[rng.below(choices.count)]
        case .graphQL:
            let choices: [ConnectionScenario.Handshake] = [
                .fail(
                    kind: "hs-next-before-ack",
                    bytes: Wire.text(Self.validEvent(.graphQL, id: "x", seq: 0).replacingOccurrences(of: "seq", with: "qes")),
                    after: .keepStreaming),
                .fail(kind: "hs-malformed", bytes: Wire.text("{{{"), after: .keepStreaming),
                .fail(kind: "hs-close", bytes: Wire.closeFrame(code: 1011, reason: Array("busy".utf8)), after: .awaitCloseAnswer),
                .fail(kind: "hs-tcp-close", bytes: [], after: .closeTCP),
                .fail(kind: "hs-invalid-utf8", bytes: Wire.frame(Wire.text, [0x7B, 0xFF, 0xFE, 0x7D]), after: .keepStreaming),
            ]
            return choices[rng.below(choices.count)]
        }
    }

    // MARK: Stream frames

    /// The next frame for subscription `id`; `seq` hands out the next global sequence number for a valid event.
    mutating func next(id: String, scenario: ConnectionScenario, seq: () -> Int) -> GeneratedFrame {
        let roll = Double(rng.next() >> 11) / Double(1 << 53)
        if roll < mix.slow { return slowFrame(scenario) }
        if roll < mix.slow + mix.ending { return endingFrame() }
        if roll < mix.slow + mix.ending + mix.benign { return benignFrame(id: id) }
        return valid(id: id, seq: seq(), fragmented: rng.chance(mix.fragmentedValid))
    }

    /// A valid event, whole or split into fragments.
    mutating func valid(id: String, seq: Int, fragmented: Bool = false) -> GeneratedFrame {
        let text = Array(Self.validEvent(dialect, id: id, seq: seq).utf8)
        guard fragmented else { return GeneratedFrame(kind: "valid", bytes: Wire.frame(Wire.text, text), seq: seq) }
        let cut1 = 1 + rng.below(text.count / 2)
        let cut2 = cut1 + 1 + rng.below(text.count - cut1 - 1)
        var bytes = Wire.frame(Wire.text, Array(text[..<cut1]), fin: false)
        if rng.chance(0.5) { bytes += Wire.frame(Wire.ping, Array("mid".utf8)) }  // control frames may interleave
        bytes += Wire.frame(Wire.continuation, Array(text[cut1..<cut2]), fin: false)
        bytes += Wire.frame(Wire.continuation, Array(text[cut2...]))
        return GeneratedFrame(kind: "valid-fragmented", bytes: bytes, seq: seq)
    }

    private mutating func unknownID() -> String {
        unknownCounter += 1
        return "fuzz-unknown-\(unknownCounter)"
    }

    private mutating func slowFrame(_ scenario: ConnectionScenario) -> GeneratedFrame {
        if scenario.silenceAllowed && rng.chance(0.5) {
            return GeneratedFrame(kind: "go-silent", bytes: [], after: .goSilent, ending: true)
        }
        // A close the server never follows up: no answer to the client's close, the TCP connection stays open.
        return GeneratedFrame(
            kind: "close-then-silent", bytes: Wire.closeFrame(code: 1001, reason: Array("bye".utf8)), after: .goSilent, ending: true)
    }

    private mutating func endingFrame() -> GeneratedFrame {
        var kinds: [(String, Int)] = [
            ("invalid-utf8", 10), ("invalid-utf8-fragmented", 4), ("oversized-frame", 1), ("oversized-message", 1),
            ("huge-length-header", 3), ("reserved-opcode", 3), ("rsv-bits", 3), ("orphan-continuation", 3),
            ("interrupted-fragment", 3), ("fragmented-control", 2), ("oversized-control", 2), ("server-close", 8),
            ("bad-close", 4), ("tcp-close", 6),
        ]
        switch dialect {
        case .appSync: kinds += [("connection_error", 6)]
        case .graphQL:
            kinds += [
                ("malformed-json", 6), ("unknown-type", 6), ("missing-type", 3), ("deep-nesting-top", 2), ("wrong-type-id", 3),
                ("wrong-type-payload", 3), ("binary-junk", 2),
            ]
        }
        let kind = rng.weighted(kinds)
        var frame = GeneratedFrame(kind: kind, bytes: [], ending: true)
        switch kind {
        case "invalid-utf8":
            let junk: [[UInt8]] = [[0xFF, 0xFE], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82]]
            frame.bytes = Wire.frame(Wire.text, Array(#"{"type":"ka","x":""#.utf8) + junk[rng.below(junk.count)] + Array(#""}"#.utf8))
        case "invalid-utf8-fragmented":
            // A character split across fragments, completed with a wrong byte.
            frame.bytes =
                Wire.frame(Wire.text, Array(#"{"x":"é"#.utf8) + [0xE2], fin: false)
                + Wire.frame(Wire.continuation, [0x28] + Array(#""}"#.utf8))
        case "oversized-frame":
            frame.bytes = Wire.frame(Wire.text, [UInt8](repeating: 0x61, count: clientMaxSize + 1))
        case "oversized-message":
            let half = clientMaxSize / 2 + 16
            frame.bytes =
                Wire.frame(Wire.text, [UInt8](repeating: 0x61, count: half), fin: false)
                + Wire.frame(Wire.continuation, [UInt8](repeating: 0x62, count: half))
        case "huge-length-header":
            // Claims 2^40 bytes (or 2^63), sends a few.
            let top: UInt8 = rng.chance(0.5) ? 0x00 : 0x7F
            frame.bytes = [0x81, 127, top, 0, 0, 0x01, 0, 0, 0, 0] + Array("abc".utf8)
        case "reserved-opcode":
            frame.bytes = Wire.frame(rng.chance(0.5) ? 0x3 : 0xB, Array(#"{"type":"ka"}"#.utf8))
        case "rsv-bits":
            frame.bytes = Wire.frame(Wire.text, Array(#"{"type":"ka"}"#.utf8), rsv: UInt8(1 + rng.below(7)))
        case "orphan-continuation":
            frame.bytes = Wire.frame(Wire.continuation, Array(#"{"type":"ka"}"#.utf8))
        case "interrupted-fragment":
            frame.bytes = Wire.frame(Wire.text, Array(#"{"type":"#.utf8), fin: false) + Wire.text(#"{"type":"ka"}"#)
        case "fragmented-control":
            frame.bytes = Wire.frame(Wire.ping, Array("frag".utf8), fin: false)
        case "oversized-control":
            frame.bytes = Wire.frame(Wire.ping, [UInt8](repeating: 0x70, count: 126 + rng.below(200)))
        case "server-close":
            let codes: [UInt16] = [1000, 1001, 1011, 1012, 1013, 3000, 4000, 4999]
            frame.bytes = Wire.closeFrame(code: codes[rng.below(codes.count)], reason: Array("fuzz".utf8))
            frame.after = rng.chance(0.5) ? .awaitCloseAnswer : .closeTCP
        case "bad-close":
            let variants: [[UInt8]] = [
                Wire.frame(Wire.close, [0x03]),  // a one-byte payload
                Wire.closeFrame(code: 1005), Wire.closeFrame(code: 999), Wire.closeFrame(code: 1015),
                Wire.closeFrame(code: 1000, reason: [0xFF, 0xFE]),  // reason not UTF-8
                Wire.closeFrame(code: nil),
            ]
            frame.bytes = variants[rng.below(variants.count)]
            frame.after = .awaitCloseAnswer
        case "tcp-close":
            frame.after = .closeTCP
        case "connection_error":
            let types = ["InternalFailure", "BadRequestException", "LimitExceededException", "", "Throttled"]
            let bodies = [
                #"{"type":"connection_error","errors":[{"errorType":"\#(types[rng.below(types.count)])","message":"fuzz"}]}"#,
                #"{"type":"connection_error","errors":42}"#, #"{"type":"connection_error"}"#,
                #"{"type":"connection_error","errors":[{"errorType":42}]}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case "malformed-json":
            let bodies = [#"{"type":"next""#, "{", "not json", #"{"type":"ping",}"#, "}{", #"{"type" "ping"}"#, "\u{0}"]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case "unknown-type":
            let types = ["zzz", "NEXT", "", "data", "ka", "connection_init", "subscribe"]
            frame.bytes = Wire.text(#"{"type":"\#(types[rng.below(types.count)])","id":"x"}"#)
        case "missing-type":
            let bodies = [#"{"id":"x"}"#, "{}", "[]", "42", #""str""#, "null", #"{"type":null}"#, #"{"type":7}"#]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case "deep-nesting-top":
            frame.bytes = Wire.text(rng.chance(0.5) ? Self.deepOpen : Self.deepOpen + Self.deepClose)
        case "wrong-type-id":
            frame.bytes = Wire.text(#"{"id":42,"type":"next","payload":{"data":{"f":{}}}}"#)
        case "wrong-type-payload":
            let payloads = ["42", #""x""#, "[]", "null"]
            frame.bytes = Wire.text(#"{"id":"\#(unknownID())","type":"next","payload":\#(payloads[rng.below(payloads.count)])}"#)
        case "binary-junk":
            frame.bytes = Wire.frame(Wire.binary, (0..<(1 + rng.below(64))).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        default:
            fatalError("unhandled ending kind \(kind)")
        }
        return frame
    }

    private mutating func benignFrame(id: String) -> GeneratedFrame {
        var kinds: [(String, Int)] = [
            ("ws-ping", 5), ("ws-pong", 3), ("masked-ok", 1), ("duplicate-ack", 3), ("unknown-id", 10),
            ("deep-nesting-inside", 2), ("huge-number", 5), ("lone-surrogate", 5), ("wrong-types", 8),
        ]
        switch dialect {
        case .appSync:
            kinds += [
                ("ka", 10), ("malformed-json", 6), ("unknown-type", 6), ("missing-type", 3), ("deep-nesting-top", 1),
                ("binary-junk", 3), ("binary-json", 2), ("broadcast_error", 2), ("empty-text", 2), ("undecodable-event", 3),
            ]
        case .graphQL:
            kinds += [("ping", 8), ("pong", 5), ("binary-json", 2)]
        }
        let kind = rng.weighted(kinds)
        var frame = GeneratedFrame(kind: kind, bytes: [])
        switch (kind, dialect) {
        case ("ws-ping", _):
            frame.bytes = Wire.frame(Wire.ping, Array("p\(rng.below(1000))".utf8))
        case ("ws-pong", _):
            frame.bytes = Wire.frame(Wire.pong, Array("unsolicited".utf8))
        case ("masked-ok", .appSync):
            frame.bytes = Wire.frame(Wire.text, Array(#"{"type":"ka"}"#.utf8), masked: true)
        case ("masked-ok", .graphQL):
            frame.bytes = Wire.frame(Wire.text, Array(#"{"type":"pong"}"#.utf8), masked: true)
        case ("duplicate-ack", .appSync):
            let values = ["-5", #""x""#, "0", Self.hugeDigits, "1000"]
            frame.bytes = Wire.text(#"{"type":"connection_ack","connectionTimeoutMs":\#(values[rng.below(values.count)])}"#)
        case ("duplicate-ack", .graphQL):
            frame.bytes = Wire.text(#"{"type":"connection_ack","payload":{"again":true}}"#)
        case ("unknown-id", .appSync):
            let types = [
                "error", "subscribe_error", "subscribe_success", "unsubscribe_success", "publish_success", "publish_error", "data",
                "complete",
            ]
            let type = types[rng.below(types.count)]
            frame.bytes = Wire.text(#"{"type":"\#(type)","id":"\#(unknownID())","errors":[{"errorType":"X"}],"event":"{}"}"#)
        case ("unknown-id", .graphQL):
            let bodies = [
                #"{"id":"\#(unknownID())","type":"error","payload":[{"message":"fuzz"}]}"#,
                #"{"id":"\#(unknownID())","type":"complete"}"#,
                #"{"id":"\#(unknownID())","type":"next","payload":{"data":{"f":{"seq":1}}}}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("deep-nesting-inside", .appSync):
            let bodies = [
                #"{"type":"ka","x":\#(Self.deepOpen)\#(Self.deepClose)}"#,
                #"{"type":"data","id":"\#(id)","event":\#(Self.deepOpen)\#(Self.deepClose)}"#,
                #"{"type":"data","id":"\#(id)","event":\#(Self.deepObject)}"#,
                #"{"type":"error","id":"\#(unknownID())","errors":\#(Self.deepOpen)\#(Self.deepClose)}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("deep-nesting-inside", .graphQL):
            let bodies = [
                #"{"id":"\#(id)","type":"next","payload":{"data":{"f":\#(Self.deepOpen)\#(Self.deepClose)}}}"#,
                #"{"id":"\#(unknownID())","type":"error","payload":\#(Self.deepOpen)\#(Self.deepClose)}"#,
                #"{"type":"pong","payload":\#(Self.deepObject)}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("huge-number", .appSync):
            let bodies = [
                #"{"type":"data","id":"\#(id)","event":"{\"seq\":\#(Self.hugeDigits)}"}"#,
                #"{"type":"data","id":"\#(id)","event":"{\"seq\":1e999999}"}"#,
                #"{"type":"ka","n":\#(Self.hugeDigits)}"#, #"{"type":"ka","n":-1e-99999}"#,
                #"{"type":"data","id":"\#(id)","event":\#(Self.hugeDigits)}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("huge-number", .graphQL):
            let bodies = [
                #"{"id":"\#(id)","type":"next","payload":{"data":{"f":{"seq":\#(Self.hugeDigits)}}}}"#,
                #"{"id":"\#(id)","type":"next","payload":{"data":{"f":{"seq":1e999999}}}}"#,
                #"{"type":"pong","payload":{"n":\#(Self.hugeDigits)}}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("lone-surrogate", .appSync):
            let bodies = [
                #"{"type":"data","id":"\#(id)","event":"{\"s\":\"\\ud800\"}"}"#,
                #"{"type":"data","id":"\#(id)","event":"\ud800"}"#,
                #"{"type":"data","id":"\ud800","event":"{}"}"#,
                #"{"type":"d\udc00ata","id":"\#(id)","event":"{}"}"#,
                #"{"type":"data","id":"\#(id)","event":"{\"s\":\"\udfff\ud800\"}"}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("lone-surrogate", .graphQL):
            let bodies = [
                #"{"id":"\#(id)","type":"next","payload":{"data":{"f":{"s":"\ud800"}}}}"#,
                #"{"id":"\ud800","type":"complete"}"#,
                #"{"type":"pong","payload":{"s":"\udfff"}}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("wrong-types", .appSync):
            let bodies = [
                #"{"type":"data","id":42,"event":"{}"}"#, #"{"type":"data","id":"\#(id)","event":{}}"#,
                #"{"type":"data","id":"\#(id)","event":42}"#, #"{"type":"data","id":"\#(id)","event":null}"#,
                #"{"type":"data","id":"\#(id)","event":[1,2]}"#, #"{"type":42,"id":"\#(id)"}"#,
                #"{"type":"data","id":"\#(id)","event":["{\"x\":1}"]}"#, #"{"type":"data","id":null,"event":"{}"}"#,
                #"{"type":"data","id":"\#(id)"}"#, #"{"type":["data"],"id":"\#(id)","event":"{}"}"#,
                #"{"type":"ka","id":{}}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("wrong-types", .graphQL):
            let bodies = [
                #"{"id":"\#(id)","type":"next","payload":{"data":{"f":"x"}}}"#,
                #"{"id":"\#(id)","type":"next","payload":{"data":null,"errors":{}}}"#,
                #"{"id":"\#(id)","type":"next","payload":{"data":[1,2]}}"#,
                #"{"id":"\#(id)","type":"next","payload":{}}"#,
                #"{"type":"pong","payload":42}"#, #"{"type":"ping","payload":"x"}"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("ka", _):
            frame.bytes = Wire.text(#"{"type":"ka"}"#)
        case ("malformed-json", _):
            let bodies = [
                #"{"type":"data""#, "{", "not json", #"{"type":"ka",}"#, "}{", #"{"type" "ka"}"#, "\u{0}",
                #"{"type":"data","id":"\#(id)","event":"{\"seq\":"#,
            ]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("unknown-type", _):
            let types = ["zzz", "DATA", "", "next", "ping", "connection_init", "subscribe", "start_ack"]
            frame.bytes = Wire.text(#"{"type":"\#(types[rng.below(types.count)])","id":"\#(id)"}"#)
        case ("missing-type", _):
            let bodies = [#"{"id":"\#(id)","event":"{}"}"#, "{}", "[]", "42", #""str""#, "null", #"{"type":null}"#]
            frame.bytes = Wire.text(bodies[rng.below(bodies.count)])
        case ("deep-nesting-top", _):
            frame.bytes = Wire.text(rng.chance(0.5) ? Self.deepOpen : Self.deepOpen + Self.deepClose)
        case ("binary-junk", _):
            frame.bytes = Wire.frame(Wire.binary, (0..<(1 + rng.below(64))).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case ("binary-json", .appSync):
            frame.bytes = Wire.frame(Wire.binary, Array(#"{"type":"ka"}"#.utf8))
        case ("binary-json", .graphQL):
            frame.bytes = Wire.frame(Wire.binary, Array(#"{"type":"pong"}"#.utf8))
        case ("broadcast_error", _):
            frame.bytes = Wire.text(#"{"type":"broadcast_error","id":"\#(id)","errors":[{"errorType":"MaxSubscriptionsReached"}]}"#)
        case ("empty-text", _):
            frame.bytes = Wire.frame(Wire.text, [])
        case ("undecodable-event", _):
            frame.bytes = Wire.text(#"{"type":"data","id":"\#(id)","event":"{\"bad\":\u12"}"#)
        case ("ping", _):
            frame.bytes = Wire.text(rng.chance(0.5) ? #"{"type":"ping"}"# : #"{"type":"ping","payload":{"x":1}}"#)
        case ("pong", _):
            frame.bytes = Wire.text(#"{"type":"pong"}"#)
        default:
            fatalError("unhandled benign kind \(kind) for \(dialect)")
        }
        return frame
    }
}
