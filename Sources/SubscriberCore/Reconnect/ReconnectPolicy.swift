/// How long to wait before each reconnect attempt, and when to give up.
///
/// The documents' choice, a fixed 10 s delay, is the default. The transports ask the policy before every attempt,
/// and reset the attempt count after a connection is acknowledged.
public struct ReconnectPolicy: Sendable, Equatable, CustomStringConvertible {
    /// The delay schedule.
    public enum Strategy: Sendable, Equatable {
        /// The same delay before every attempt.
        case fixed(Duration)
        /// `base * 2^(attempt-1)`, capped at `max`, with up to `jitter` (0...1) of it randomised away
        /// so that many clients do not reconnect in lockstep.
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

    /// Randomised exponential backoff.
    public static func exponential(
        base: Duration = .seconds(1), max: Duration = .seconds(30), jitter: Double = 0.5, maxAttempts: Int? = nil
    ) -> ReconnectPolicy {
        .init(strategy: .exponential(base: base, max: max, jitter: Swift.min(Swift.max(jitter, 0), 1)), maxAttempts: maxAttempts)
    }

    /// The default: 10 s fixed, unlimited attempts.
    public static let `default` = ReconnectPolicy.fixed(.seconds(10))

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
    /// Parses the CLI and configuration form: `fixed:SECONDS` or `exponential:BASE:MAX` (seconds, decimals allowed),
    /// optionally followed by `:attempts=N`.
    public init?(parsing text: String) {
        var parts = text.split(separator: ":").map(String.init)
        var attempts: Int?
        if let last = parts.last, last.hasPrefix("attempts=") {
            guard let value = Int(last.dropFirst("attempts=".count)), value > 0 else { return nil }
            attempts = value
            parts.removeLast()
        }
        func seconds(_ text: String) -> Duration? {
            // Bounded so the conversion to milliseconds cannot overflow: a day is far more than any sane delay.
            guard let value = Double(text), value >= 0, value <= 86_400 else { return nil }
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        switch parts.first {
        case "fixed" where parts.count == 2:
            guard let delay = seconds(parts[1]) else { return nil }
            self = .fixed(delay, maxAttempts: attempts)
        case "exponential" where parts.count == 3:
            guard let base = seconds(parts[1]), let max = seconds(parts[2]), base <= max else { return nil }
            self = .exponential(base: base, max: max, maxAttempts: attempts)
        default:
            return nil
        }
    }
}
