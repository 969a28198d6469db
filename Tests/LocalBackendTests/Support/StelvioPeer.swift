import Foundation
import RealtimeTesting

/// The stelvio peer: `Tests/PythonPeers/stelvio_bridge_client.py` (stelvio's AppSync Events client), run with
/// `$VORTEX_STELVIO_PYTHON` (scripts/test.sh prepares `.venv-stelvio`: stelvio needs Python 3.12+), or `python3`.
/// Its versions are pinned in `Tests/PythonPeers/stelvio-requirements.txt`.
enum StelvioPeer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The Python interpreter to run.
    static let python: String = {
        let configured = ProcessInfo.processInfo.environment["VORTEX_STELVIO_PYTHON"] ?? ""
        return configured.isEmpty ? "python3" : configured
    }()

    /// The script, found relative to this file so it works from any working directory.
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // LocalBackendTests
        .deletingLastPathComponent()  // Tests
        .appendingPathComponent("PythonPeers")
        .appendingPathComponent("stelvio_bridge_client.py")

    /// CI (any non-empty `CI`) or `VORTEX_REQUIRE_PEERS=1` demands the peer: a missing stelvio then fails.
    static let isRequired: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["CI"] ?? "").isEmpty || environment["VORTEX_REQUIRE_PEERS"] == "1"
    }()

    /// stelvio's versions (JSON) when the script can import it, or why it cannot. Probed once per test run.
    static let availability: Swift.Result<String, Failure> = {
        do {
            let result = try run(["--check"])
            guard result.status == 0, result.stdout.hasPrefix("{") else {
                return .failure(Failure(description: "\(python) \(script.path) --check exited \(result.status): \(result.stderr)"))
            }
            return .success(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            return .failure(Failure(description: "could not launch \(python): \(error)"))
        }
    }()

    /// Whether the stelvio tests run: skipped (never passed) when stelvio is missing and not required; run, and
    /// failing with the reason, when it is required.
    static var shouldRun: Bool {
        if case .success = availability { return true }
        return isRequired
    }

    /// Throws, with the reason and the fix, when the peer cannot run.
    static func requireAvailable() throws {
        if case .failure(let failure) = availability {
            throw Failure(
                description: "stelvio peer unavailable (required because CI or VORTEX_REQUIRE_PEERS=1 is set): \(failure). "
                    + "Install it in a Python 3.12+ environment with: pip install -r Tests/PythonPeers/stelvio-requirements.txt, "
                    + "and point VORTEX_STELVIO_PYTHON at it (scripts/test.sh does both)")
        }
    }

    /// The outcome of one run of the script.
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the script to completion (output goes to files, so a chatty run cannot fill a pipe).
    static func run(_ arguments: [String]) throws -> Result {
        let (process, stdoutURL, stderrURL) = try launch(arguments)
        process.waitUntilExit()
        defer { cleanUp(stdoutURL, stderrURL) }
        return Result(
            status: process.terminationStatus, stdout: readTextFile(stdoutURL),
            stderr: readTextFile(stderrURL))
    }

    /// Starts the script; its stdout and stderr go to the returned files.
    static func launch(_ arguments: [String]) throws -> (Process, URL, URL) {
        let stem = FileManager.default.temporaryDirectory.appendingPathComponent("stelvio-\(UUID().uuidString)")
        let stdoutURL = stem.appendingPathExtension("stdout")
        let stderrURL = stem.appendingPathExtension("stderr")
        guard FileManager.default.createFile(atPath: stdoutURL.path, contents: nil),
            FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        else { throw Failure(description: "cannot create \(stem.path).stdout/.stderr") }
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? stdout.close()
            try? stderr.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, script.path] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return (process, stdoutURL, stderrURL)
    }

    static func cleanUp(_ urls: URL...) {
        for url in urls { try? FileManager.default.removeItem(at: url) }
    }
}
