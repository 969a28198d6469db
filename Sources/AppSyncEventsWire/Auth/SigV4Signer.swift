import Crypto
import Foundation

/// Signs HTTP requests with AWS Signature Version 4 (header-based), as AppSync Events IAM auth needs: the client signs
/// with it, the local backend recomputes the signature it received.
///
/// The signer follows the SigV4 specification and is cross-checked against botocore's `SigV4Auth`
/// (see `Tests/PythonPeers/sigv4_reference.py`). Canonicalisation choices, in brief:
///
/// - **Canonical URI**: the URL's path *as it goes on the wire* (already percent-encoded) has its
///   dot segments and empty segments removed, and is then URI-encoded once more, leaving only the
///   RFC 3986 unreserved set and `/` as-is. A `%` in the path therefore becomes `%25`. This is the
///   "encode twice" rule AWS applies to every service except S3, and it is exactly what botocore does
///   with `quote(normalize_url_path(path), safe='/~')`. An empty path signs as `/`.
/// - **Canonical query string**: each `name=value` pair is percent-decoded and re-encoded with the
///   unreserved set (a missing `=` gives an empty value), then sorted by encoded name, then value.
///   For a query that is already canonically encoded (everything AppSync uses) this equals
///   botocore's output; for a sloppily encoded one (`a=b/c`) it follows the specification, which is
///   what the service recomputes, while botocore would sign the raw text.
/// - **Canonical headers**: names lowercased, values trimmed with inner whitespace runs collapsed to
///   one space; names that differ only by case are joined with `,` (in byte order of the original
///   names, so the result is deterministic).
/// - **Payload**: hex SHA-256 of the body bytes exactly as given.
/// - **Which headers are signed**: every header passed in. botocore instead never signs a fixed
///   list of hop-by-hop headers (`user-agent`, `expect`, `connection`, `transfer-encoding`, ...);
///   so pass only headers the HTTP stack will send unchanged, or the service will see a mismatch.
///
/// A `SigV4Signer` is an immutable value, so it is safe to share across tasks. Its description,
/// debug description and mirror redact the secret key and session token, so printing or dumping
/// a signer never leaks them.
package struct SigV4Signer: Sendable {
    /// The AWS access key ID (not a secret; it appears in the `Authorization` header).
    let accessKeyID: String
    /// The AWS secret access key; only ever used as HMAC key material.
    let secretAccessKey: String
    /// The STS session token for temporary credentials, sent as `x-amz-security-token`.
    let sessionToken: String?
    /// The AWS region in the credential scope, e.g. `us-east-1`.
    let region: String
    /// The AWS service name in the credential scope; AppSync uses `appsync`.
    let service: String

    /// Creates a signer for one set of credentials, region and service.
    ///
    /// - Parameters:
    ///   - accessKeyID: The AWS access key ID.
    ///   - secretAccessKey: The AWS secret access key.
    ///   - sessionToken: The session token of temporary credentials, or `nil` for long-term keys.
    ///   - region: The region of the endpoint, e.g. `us-east-1`.
    ///   - service: The signing name of the service; `appsync` for AppSync Events.
    package init(
        accessKeyID: String,
        secretAccessKey: String,
        sessionToken: String?,
        region: String,
        service: String = "appsync"
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
    }

    /// Returns the headers to send: every header passed in (names as given), plus `host` (if not passed; from url, including a non-default port),
    /// `x-amz-date`, `x-amz-security-token` (when a session token exists) and `Authorization`.
    /// The signed headers are all the headers passed + host + x-amz-date (+ x-amz-security-token), lowercased, sorted.
    /// Payload hash = hex SHA256 of `body` bytes exactly as given (the caller sends these exact bytes).
    ///
    /// Headers the signer owns are replaced rather than duplicated: any passed `Authorization` or
    /// `X-Amz-Date` (in any letter case) is dropped, and so is a passed `X-Amz-Security-Token` when
    /// this signer has a session token.
    ///
    /// - Parameters:
    ///   - method: The HTTP method; it is upper-cased for signing.
    ///   - url: The full request URL (scheme, host, optional port, path and query).
    ///   - headers: The headers that will be sent, all of which are signed.
    ///   - body: The exact body bytes that will be sent.
    ///   - date: The signing time; only whole seconds in UTC are used.
    /// - Returns: The headers to send with the request.
    package func sign(method: String, url: URL, headers: [String: String], body: Data, date: Date) -> [String: String] {
        signingDetails(method: method, url: url, headers: headers, body: body, date: date).headers
    }

    // MARK: - Internals (exposed to tests through @testable import)

    /// Every intermediate product of one signing, so tests can compare each step with a reference.
    struct SigningDetails: Sendable, Equatable {
        /// The canonical request (step 1 of SigV4).
        var canonicalRequest: String
        /// The string to sign (step 2 of SigV4).
        var stringToSign: String
        /// The lowercase hex signature (step 3 of SigV4).
        var signature: String
        /// The `;`-joined lowercase names of the signed headers.
        var signedHeaders: String
        /// The value of the `Authorization` header.
        var authorization: String
        /// The headers to send, as returned by ``SigV4Signer/sign(method:url:headers:body:date:)``.
        var headers: [String: String]
    }

    /// Signs a request and returns every intermediate product alongside the headers to send.
    func signingDetails(method: String, url: URL, headers: [String: String], body: Data, date: Date) -> SigningDetails {
        let amzDate = Self.amzDate(date)
        let dateStamp = String(amzDate.prefix(8))

        // Start from the caller's headers, minus the ones this signer owns.
        var owned: Set<String> = ["authorization", "x-amz-date"]
        if sessionToken != nil { owned.insert("x-amz-security-token") }
        var outgoing = headers.filter { !owned.contains($0.key.lowercased()) }

        // Host is signed but usually set by the HTTP client; add it so both sides agree on its value.
        if !outgoing.keys.contains(where: { $0.lowercased() == "host" }) {
            outgoing["host"] = Self.hostHeader(for: url)
        }
        outgoing["x-amz-date"] = amzDate
        if let sessionToken { outgoing["x-amz-security-token"] = sessionToken }

        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(outgoing)
        let payloadHash = Self.hexSHA256(body)
        let canonicalRequest = [
            method.uppercased(),
            Self.canonicalURI(for: url),
            Self.canonicalQueryString(for: url),
            canonicalHeaders,
            signedHeaders,
            payloadHash,
        ].joined(separator: "\n")

        let scope = "\(dateStamp)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256",
            amzDate,
            scope,
            Self.hexSHA256(Data(canonicalRequest.utf8)),
        ].joined(separator: "\n")

        let key = Self.signingKey(secretAccessKey: secretAccessKey, dateStamp: dateStamp, region: region, service: service)
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        outgoing["Authorization"] = authorization

        return SigningDetails(
            canonicalRequest: canonicalRequest,
            stringToSign: stringToSign,
            signature: signature,
            signedHeaders: signedHeaders,
            authorization: authorization,
            headers: outgoing
        )
    }

    /// Derives the SigV4 signing key: HMAC chain `AWS4`+secret → date → region → service → `aws4_request`.
    static func signingKey(secretAccessKey: String, dateStamp: String, region: String, service: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data("AWS4\(secretAccessKey)".utf8))
        for part in [dateStamp, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// Formats `date` as `yyyyMMdd'T'HHmmss'Z'` in UTC, truncating fractional seconds.
    ///
    /// Done by hand (civil-from-days) rather than with a `DateFormatter`: no locale, calendar or
    /// time-zone state, so it is trivially thread-safe and identical on every platform.
    static func amzDate(_ date: Date) -> String {
        let totalSeconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = floorDiv(totalSeconds, 86_400)
        let secondsOfDay = totalSeconds - days * 86_400

        // Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        return pad(year, 4) + pad(month, 2) + pad(day, 2) + "T"
            + pad(secondsOfDay / 3_600, 2) + pad(secondsOfDay % 3_600 / 60, 2) + pad(secondsOfDay % 60, 2) + "Z"
    }

    /// The `host` header value for `url`: lowercase host, IPv6 in brackets, and the port only when it
    /// is not the scheme's default (as an HTTP client writes it, and as botocore derives it).
    package static func hostHeader(for url: URL) -> String {
        var host = (url.host(percentEncoded: true) ?? "").lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        if let port = url.port {
            let defaultPort: Int? =
                switch url.scheme?.lowercased() {
                case "https", "wss": 443
                case "http", "ws": 80
                default: nil
                }
            if port != defaultPort { host += ":\(port)" }
        }
        return host
    }

    /// The canonical URI: the wire (percent-encoded) path, dot segments and empty segments removed,
    /// URI-encoded once more with `/` kept. See the type's documentation for why.
    static func canonicalURI(for url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard !path.isEmpty else { return "/" }
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(segment)
            }
        }
        var normalized = path.hasPrefix("/") ? "/" : ""
        normalized += segments.joined(separator: "/")
        if path.hasSuffix("/"), !segments.isEmpty { normalized += "/" }
        if normalized.isEmpty { normalized = "/" }
        return uriEncode(Array(normalized.utf8), keepSlash: true)
    }

    /// The canonical query string: pairs decoded, re-encoded with the unreserved set, and sorted
    /// by encoded name then encoded value (byte order).
    static func canonicalQueryString(for url: URL) -> String {
        guard let query = url.query(percentEncoded: true), !query.isEmpty else { return "" }
        let pairs: [(name: String, value: String)] = query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = uriEncode(percentDecode(parts[0]), keepSlash: false)
            let value = parts.count > 1 ? uriEncode(percentDecode(parts[1]), keepSlash: false) : ""
            return (name, value)
        }
        return pairs.sorted { lhs, rhs in
            if lhs.name != rhs.name { return lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8) }
            return lhs.value.utf8.lexicographicallyPrecedes(rhs.value.utf8)
        }
        .map { "\($0.name)=\($0.value)" }
        .joined(separator: "&")
    }

    /// The canonical headers block (each `name:value` line followed by `\n`) and the signed-headers list.
    static func canonicalHeaders(_ headers: [String: String]) -> (canonical: String, signed: String) {
        // Byte order of original names makes same-name-different-case merging deterministic.
        let ordered = headers.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var grouped: [String: [String]] = [:]
        for (name, value) in ordered {
            grouped[name.lowercased().trimmingCharacters(in: .whitespaces), default: []].append(trimAll(value))
        }
        let names = grouped.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let canonical = names.map { "\($0):\(grouped[$0]!.joined(separator: ","))\n" }.joined()
        return (canonical, names.joined(separator: ";"))
    }

    /// Trims a header value and collapses each run of inner whitespace to a single space (SigV4's `Trimall`).
    /// Splits on Unicode scalars, not Characters: "\r\n" is one Character and would not match either separator.
    static func trimAll(_ value: String) -> String {
        value.unicodeScalars
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
            .map { String(String.UnicodeScalarView($0)) }
            .joined(separator: " ")
    }

    /// Percent-encodes every byte outside the RFC 3986 unreserved set (and `/` when `keepSlash`), uppercase hex.
    static func uriEncode(_ bytes: [UInt8], keepSlash: Bool) -> String {
        var out = ""
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                out.append("%")
                out.unicodeScalars.append(hexDigits[Int(byte >> 4)])
                out.unicodeScalars.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// Decodes `%XX` escapes to bytes; a `%` not followed by two hex digits stays literal. `+` is not a space (RFC 3986).
    static func percentDecode(_ text: Substring) -> [UInt8] {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// Lowercase hex SHA-256 of `data`.
    static func hexSHA256(_ data: Data) -> String {
        hex(SHA256.hash(data: data))
    }

    private static let hexDigits: [Unicode.Scalar] = Array("0123456789ABCDEF".unicodeScalars)
    private static let lowerHexDigits: [Unicode.Scalar] = Array("0123456789abcdef".unicodeScalars)

    /// Lowercase hex of `bytes`, as SigV4 wants for hashes and the signature.
    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out = ""
        for byte in bytes {
            out.unicodeScalars.append(lowerHexDigits[Int(byte >> 4)])
            out.unicodeScalars.append(lowerHexDigits[Int(byte & 0x0F)])
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func floorDiv(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let quotient = lhs / rhs
        return (lhs % rhs != 0 && (lhs < 0) != (rhs < 0)) ? quotient - 1 : quotient
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

// The secret and the session token must never reach logs, even through `print(signer)` or `dump(signer)`.
extension SigV4Signer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A description that names the key ID, region and service but redacts the secret and session token.
    package var description: String {
        "SigV4Signer(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>, "
            + "sessionToken: \(sessionToken == nil ? "nil" : "<redacted>"), region: \(region), service: \(service))"
    }

    /// Same as ``description``: the secret and session token are redacted.
    package var debugDescription: String { description }

    /// A mirror with the secret and session token redacted, so `dump` cannot leak them.
    package var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessKeyID": accessKeyID,
                "secretAccessKey": "<redacted>",
                "sessionToken": sessionToken == nil ? "nil" : "<redacted>",
                "region": region,
                "service": service,
            ],
            displayStyle: .struct
        )
    }
}
