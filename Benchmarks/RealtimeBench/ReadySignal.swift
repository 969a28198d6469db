import Foundation

/// Tells the orchestrator that the subscription is live (latency runs start publishing only then).
enum ReadySignal {
    static func send() {
        FileHandle.standardOutput.write(Data("{\"ready\":true}\n".utf8))
    }
}
