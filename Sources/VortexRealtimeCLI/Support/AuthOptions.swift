import ArgumentParser
import Foundation
import SubscriberCore

/// `--api-key K | --token T | --iam`: exactly one.
struct AuthOptions: ParsableArguments {
    @Option(name: .customLong("api-key"), help: "An AppSync API key.")
    var apiKey: String?

    @Option(help: "A JWT (Cognito user pool, OIDC) or Lambda-authorizer token, sent as Authorization.")
    var token: String?

    @Flag(help: "IAM: sign with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optional AWS_SESSION_TOKEN, and AWS_REGION.")
    var iam = false

    func validate() throws {
        let chosen = [apiKey != nil, token != nil, iam].filter { $0 }.count
        guard chosen == 1 else { throw ValidationError("choose exactly one of --api-key, --token, --iam") }
        if apiKey?.isEmpty == true { throw ValidationError("--api-key: empty") }
        if token?.isEmpty == true { throw ValidationError("--token: empty") }
    }

    /// The credentials, reading the environment for IAM.
    func credentials(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AuthCredentials {
        try Self.credentials(apiKey: apiKey, token: token, environment: environment)
    }

    /// The credentials of `--api-key`, else `--token`, else `--iam` from the environment (commands that take the
    /// three options themselves share this).
    static func credentials(
        apiKey: String?, token: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> AuthCredentials {
        if let apiKey { return .apiKey(apiKey) }
        if let token { return .bearerToken(token) }
        func required(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else {
                throw CLIFailure.badArgument("--iam", "environment variable \(name) is not set")
            }
            return value
        }
        return .iam(
            AWSCredentials(
                accessKeyID: try required("AWS_ACCESS_KEY_ID"), secretAccessKey: try required("AWS_SECRET_ACCESS_KEY"),
                sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 },
                region: try required("AWS_REGION")))
    }
}
