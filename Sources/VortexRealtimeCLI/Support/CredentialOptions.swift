import ArgumentParser
import Composition
import Foundation
import SubscriberCore

/// `--api-key K`, `--token T`, `--iam`: the credentials every command that connects takes, declared once. Each command
/// says how many it wants (``requireExactlyOne(iam:)``, or none for the embedded backend).
struct CredentialOptions: ParsableArguments {
    @Option(name: .customLong("api-key"), help: "An AppSync API key (GraphQL gets it as ${apiKey} in connection_init).")
    var apiKey: String?

    @Option(
        help:
            "A JWT (Cognito user pool, OIDC) or Lambda-authorizer token for the user, sent as Authorization (GraphQL: in connection_init).")
    var token: String?

    @Flag(help: "IAM: sign with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, optional AWS_SESSION_TOKEN, and AWS_REGION.")
    var iam = false

    /// How many of the three were given.
    var count: Int { [apiKey != nil, token != nil, iam].filter { $0 }.count }

    /// Exactly one, and not empty; `iam` `false` for a command that cannot sign with IAM.
    func requireExactlyOne(iam allowsIAM: Bool = true) throws {
        if !allowsIAM && iam { throw ValidationError("--iam: not supported here; give --token or --api-key") }
        guard count == 1 else {
            throw ValidationError(
                allowsIAM
                    ? "--token: choose exactly one of --api-key, --token, --iam" : "--token: give exactly one of --token and --api-key")
        }
        try requireNotEmpty()
    }

    /// The given ones are not empty.
    func requireNotEmpty() throws {
        if apiKey?.isEmpty == true { throw ValidationError("--api-key: empty") }
        if token?.isEmpty == true { throw ValidationError("--token: empty") }
    }

    /// The credentials of `--api-key`, else `--token`, else `--iam` from the environment.
    func credentials(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AuthCredentials {
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

    /// Sets the configuration's auth mode: `apiKey` with the key, else the session's credentials.
    func apply(to configuration: inout RealtimeConfiguration) {
        configuration.authMode = apiKey == nil ? .session : .apiKey
        configuration.apiKey = apiKey
    }
}
