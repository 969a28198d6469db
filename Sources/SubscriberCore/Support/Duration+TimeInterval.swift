import Foundation

extension Duration {
    /// The duration in seconds, for arithmetic with `Date` (gap and loss windows).
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
