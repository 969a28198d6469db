import RealtimeTesting

extension ManualClock {
    /// Lets a switch whose new subscriptions are all live cut over: waits until the notifier's settle timer sleeps
    /// (the old transport delivers for 500 ms more), then moves time past it.
    func settleSwitch() async throws {
        try await waitForSleeper(sleeping: .milliseconds(500))
        advance(by: .milliseconds(500))
    }
}
