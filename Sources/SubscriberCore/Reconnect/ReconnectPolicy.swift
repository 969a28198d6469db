/// How long to wait before each reconnect attempt, and when to give up.
///
/// The default is fast first and polite after: exponential backoff with full jitter from 1 s, capped at the
/// documents' 10 s — the delay before attempt `n` is random in `0...min(10 s, 1 s × 2^(n-1))`, so the first attempt
/// comes within a second (0.5 s on average) and a fleet that lost the same backend spreads its attempts instead of
/// reconnecting in lockstep. The figures are in `docs/architecture.md` ("Reconnect policy"). The transports ask the
/// policy before every attempt, and reset the attempt count after an acknowledged connection that lasted 30 s (one
/// dropped sooner counts as one more attempt, toward `maxAttempts` too).
public struct ReconnectPolicy: Sendable, Equatable, CustomStringConvertible {
    /// The delay schedule.
    public enum Strategy: Sendable, Equatable {
        /// The same delay before every attempt.
        case fixed(Duration)
        /// `base * 2^(attempt-1)`, capped at `max`, with up to `jitter` (0...1) of it randomised away
        /// so that many clients do not reconnect in lockstep; `jitter` 1 is full jitter (anywhere from 0 to the cap).
        case exponential(base: Duration, max: Duration, jitter: Double)
    }

    /// The delay schedule.
    public var strategy: Strategy
    /// The number of attempts after which the transport gives up; `nil` retries for ever.
    public var maxAttempts: Int?

    /// Creates a policy.
    public init(strategy: Strategy, maxAttempts: Int? = nil) {
        self.strategy = strategy
        self.maxAttempts = maxAttempts
    }

    /// A fixed delay before every attempt.
    public static func fixed(_ delay: Duration, maxAttempts: Int? = nil) -> ReconnectPolicy {
        .init(strategy: .fixed(delay), maxAttempts: maxAttempts)
    }

    /// Randomised exponential backoff; by default with full jitter (the delay is random between 0 and the capped value).
    public static func exponential(
        base: Duration = .seconds(1), max: Duration = .seconds(30), jitter: Double = 1, maxAttempts: Int? = nil
    ) -> ReconnectPolicy {
        .init(strategy: .exponential(base: base, max: max, jitter: Swift.min(Swift.max(jitter, 0), 1)), maxAttempts: maxAttempts)
    }

    /// The default: full-jitter exponential backoff from 1 s, capped at 10 s, unlimited attempts
    /// (`exponential:1:10`).
    public static let `default` = ReconnectPolicy.exponential(base: .seconds(1), max: .seconds(10), jitter: 1)

    /// The delay before attempt number `attempt` (1-based), or `nil` when the policy gives up.
    /// - Parameters:
    ///   - attempt: the attempt about to be made, counting from 1 (smaller values count as 1).
    ///   - random: a source of values in `0..<1`, injectable so tests are deterministic.
    public func delay(beforeAttempt attempt: Int, random: () -> Double = { Double.random(in: 0..<1) }) -> Duration? {
        let attempt = max(1, attempt)
        if let maxAttempts, attempt > maxAttempts { return nil }
        switch strategy {
        case .fixed(let delay):
            return delay
        case .exponential(let base, let max, let jitter):
            let exponent = Swift.min(attempt - 1, 32)
            let raw = base * (1 << exponent)
            let capped = raw > max ? max : raw
            let factor = 1 - jitter * random()
            return capped * factor
        }
    }

    public var description: String {
        let limit = maxAttempts.map { ", at most \($0) attempts" } ?? ""
        switch strategy {
        case .fixed(let delay): return "fixed(\(delay))\(limit)"
        case .exponential(let base, let max, let jitter): return "exponential(base: \(base), max: \(max), jitter: \(jitter))\(limit)"
        }
    }
}

extension ReconnectPolicy {
    /// Parses the CLI and configuration form: `fixed:SECONDS` or `exponential:BASE:MAX` (seconds, decimals allowed;
    /// full jitter unless `:jitter=J` with `J` in 0...1 follows), optionally followed by `:attempts=N`. `nil` when
    /// the text is malformed (``init(validating:)`` says why).
    public init?(parsing text: String) {
        guard let policy = try? ReconnectPolicy(validating: text) else { return nil }
        self = policy
    }

    /// Parses the form of ``init(parsing:)``, or throws an error that names what is wrong.
    public init(validating text: String) throws(ReconnectPolicyFormatError) {
        func fail(_ problem: String) -> ReconnectPolicyFormatError { ReconnectPolicyFormatError(text: text, problem: problem) }
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var attempts: Int?
        var jitter: Double?
        while let last = parts.last, parts.count > 1, let equals = last.firstIndex(of: "=") {
            let (key, value) = (last[..<equals], last[last.index(after: equals)...])
            switch key {
            case "attempts" where attempts == nil && jitter == nil:
                guard let count = Int(value), count > 0 else { throw fail("attempts must be a whole number above 0") }
                attempts = count
            case "jitter" where jitter == nil:
                guard let fraction = Double(value), fraction >= 0, fraction <= 1 else { throw fail("jitter must be between 0 and 1") }
                jitter = fraction
            default:
                throw fail("unexpected option \"\(last)\"")
            }
            parts.removeLast()
        }
        func seconds(_ text: String, _ name: String) throws(ReconnectPolicyFormatError) -> Duration {
            // Bounded so the conversion to milliseconds cannot overflow: a day is far more than any sane delay.
            guard let value = Double(text), value >= 0, value <= 86_400 else { throw fail("\(name) must be seconds from 0 to 86400") }
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        switch parts.first {
        case "fixed" where parts.count == 2:
            guard jitter == nil else { throw fail("jitter applies to exponential only") }
            self = .fixed(try seconds(parts[1], "the delay"), maxAttempts: attempts)
        case "exponential" where parts.count == 3:
            let base = try seconds(parts[1], "BASE")
            let max = try seconds(parts[2], "MAX")
            guard base <= max else { throw fail("BASE must not exceed MAX") }
            self = .exponential(base: base, max: max, jitter: jitter ?? 1, maxAttempts: attempts)
        default:
            throw fail("expected fixed:SECONDS or exponential:BASE:MAX")
        }
    }
}

/// Why a reconnect policy's text (``ReconnectPolicy/init(validating:)``) was refused.
public struct ReconnectPolicyFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text as given.
    public var text: String
    /// What is wrong with it.
    public var problem: String

    /// Creates the error.
    public init(text: String, problem: String) {
        self.text = text
        self.problem = problem
    }

    public var description: String {
        "\"\(text)\" is not a reconnect policy: \(problem) (the forms: fixed:SECONDS, exponential:BASE:MAX, "
            + "each optionally followed by :attempts=N; exponential also by :jitter=J before it)"
    }
}
