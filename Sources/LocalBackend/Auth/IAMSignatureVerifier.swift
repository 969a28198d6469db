import AppSyncEventsWire
import Foundation

/// Verifies AppSync IAM (SigV4, service `appsync`) authorization objects by signing the same request again with
/// ``SigV4Signer`` and comparing the `Authorization` values.
///
/// The request is `POST http://<host>/event` with the headers named in `SignedHeaders` (taken from the object) and
/// the exact body the operation signs: `{}` at connect, `{"channel":"<ch>"}` at subscribe, the publish body at
/// publish. `x-amz-date` must lie within 5 minutes of the server's clock. Session tokens are accepted as signed,
/// without checking them against any issuer.
struct IAMSignatureVerifier: Sendable {
    /// The longest clock difference accepted between `x-amz-date` and the server.
    static let maxSkew: TimeInterval = 300

    let credentials: [String: String]
    let region: String

    /// The prefix of an IAM `Authorization` value.
    static let scheme = "AWS4-HMAC-SHA256"

    func verify(_ auth: AuthObject, body: String, host: String, now: Date = Date()) -> Result<CallerIdentity, AuthFailure> {
        guard let authorization = auth["authorization"], let parsed = Self.parse(authorization) else {
            return .failure(AuthFailure("Malformed IAM Authorization"))
        }
        guard let secret = credentials[parsed.accessKeyID] else {
            return .failure(AuthFailure("The security token included in the request is invalid"))
        }
        let scope = parsed.scope.split(separator: "/").map(String.init)
        guard scope.count == 4, scope[2] == "appsync", scope[3] == "aws4_request" else {
            return .failure(AuthFailure("Credential should be scoped to the appsync service"))
        }
        guard scope[1] == region else {
            return .failure(AuthFailure("Credential should be scoped to a valid region: \(region)"))
        }
        guard let amzDate = auth["x-amz-date"], let date = Self.parseAmzDate(amzDate) else {
            return .failure(AuthFailure("Missing or malformed x-amz-date"))
        }
        guard abs(date.timeIntervalSince(now)) <= Self.maxSkew else {
            return .failure(AuthFailure("Signature expired: x-amz-date is more than 5 minutes from the server time"))
        }
        let signedNames = parsed.signedHeaders.split(separator: ";").map { String($0).lowercased() }
        guard signedNames.contains("host"), signedNames.contains("x-amz-date") else {
            return .failure(AuthFailure("host and x-amz-date must be signed"))
        }
        guard auth["host"]?.lowercased() == host.lowercased() else {
            return .failure(AuthFailure("The signed host does not match this API"))
        }
        var headers: [String: String] = [:]
        for name in signedNames where name != "x-amz-date" && name != "x-amz-security-token" {
            guard let value = auth[name] else { return .failure(AuthFailure("Signed header \(name) is missing")) }
            headers[name] = value
        }
        var sessionToken: String?
        if signedNames.contains("x-amz-security-token") {
            guard let token = auth["x-amz-security-token"] else {
                return .failure(AuthFailure("Signed header x-amz-security-token is missing"))
            }
            sessionToken = token
        }
        guard let url = URL(string: "http://\(host)/event") else { return .failure(AuthFailure("Unusable host")) }
        let signer = SigV4Signer(
            accessKeyID: parsed.accessKeyID, secretAccessKey: secret, sessionToken: sessionToken, region: region, service: "appsync")
        let expected = signer.sign(method: "POST", url: url, headers: headers, body: Data(body.utf8), date: date)["Authorization"] ?? ""
        guard Self.constantTimeEqual(expected, authorization.trimmingCharacters(in: .whitespaces)) else {
            return .failure(
                AuthFailure(
                    "The request signature we calculated does not match the signature you provided"))
        }
        return .success(.backend(.iam))
    }

    struct ParsedAuthorization: Equatable {
        var accessKeyID: String
        var scope: String
        var signedHeaders: String
        var signature: String
    }

    /// Parses `AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, SignedHeaders=a;b, Signature=hex`.
    static func parse(_ authorization: String) -> ParsedAuthorization? {
        let trimmed = authorization.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix(scheme + " ") else { return nil }
        var values: [String: String] = [:]
        for part in trimmed.dropFirst(scheme.count + 1).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            values[String(pair[0])] = String(pair[1])
        }
        guard let credential = values["Credential"], let signedHeaders = values["SignedHeaders"], let signature = values["Signature"],
            let slash = credential.firstIndex(of: "/")
        else { return nil }
        return ParsedAuthorization(
            accessKeyID: String(credential[..<slash]), scope: String(credential[credential.index(after: slash)...]),
            signedHeaders: signedHeaders, signature: signature)
    }

    /// Parses `yyyyMMdd'T'HHmmss'Z'` (UTC).
    static func parseAmzDate(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // Days from civil (Howard Hinnant), proleptic Gregorian.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// Compares two strings without stopping at the first difference.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
