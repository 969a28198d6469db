import Foundation
import SubscriberCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The drill's `--trigger command:CMD`: a command the team provides that causes one real backend event, run once per
/// event the drill needs.
///
/// **How it is run.** `CMD` is split into words once, when the drill starts: whitespace separates words, single quotes
/// keep everything literally, double quotes keep whitespace (a backslash escapes `"` and `\` inside them), a backslash
/// outside quotes escapes the next character. Nothing else is special: no shell runs it, so `$VAR`, `*`, `;`, `|`,
/// `>` and backquotes are passed as they are, and nothing the drill knows is ever pasted into the command line. The
/// first word is the program (a path, or a name looked up in `PATH`); the others are its arguments. A team that wants a
/// shell says so: `command:sh -c 'curl … -d "{\"seq\":$VORTEX_DRILL_SEQUENCE}"'` (that shell reads the values from
/// its environment, never from text the drill built).
///
/// **What it gets.** The drill's own environment (the command's credentials come from there, not from the drill's
/// options: `--token` and `--api-key` are not passed on), plus:
///
/// | variable | value |
/// |---|---|
/// | `VORTEX_DRILL_SEQUENCE` | 1, 2, 3, … across the whole drill |
/// | `VORTEX_DRILL_PHASE` | `parity` or `rollback` |
/// | `VORTEX_DRILL_KIND` | a suggested kind, cycling through the story (`devicePresence`, …, `tokenRevoked`); the command may ignore it |
/// | `VORTEX_DRILL_TIMESTAMP` | a unique ISO 8601 time the command may stamp the event with |
/// | `VORTEX_DRILL_USER`, `VORTEX_DRILL_ORG`, `VORTEX_DRILL_DEVICE_GROUP` | the drill's identity (the last two only when given) |
///
/// Its standard input and output are `/dev/null` (the drill's stdout carries the report); its standard error is the
/// drill's. It runs in a process group of its own, with every signal at its default disposition. A run that exits
/// non-zero, cannot start, or takes longer than ``timeout`` (its process group is then killed) counts as a failed run.
public struct TriggerCommand: Sendable, Equatable {
    /// The program and its arguments.
    public let words: [String]
    /// How long one run may take. Default 30 s.
    public var timeout: Duration = .seconds(30)

    /// Why a command line could not be read.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong.
        public var description: String
    }

    /// Splits `text` into words (see the type's documentation).
    public init(parsing text: String) throws(Problem) {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                // Inside double quotes a backslash escapes only `"` and `\`; before anything else it stays.
                if quote == "\"" && character != "\"" && character != "\\" { current.append("\\") }
                current.append(character)
                escaped = false
                inWord = true
                continue
            }
            switch (quote, character) {
            case ("'"?, "'"), ("\""?, "\""):
                quote = nil
            case ("'"?, _):
                current.append(character)
            case ("\""?, "\\"), (nil, "\\"):
                escaped = true
            case ("\""?, _):
                current.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, _) where character.isWhitespace:
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil else { throw Problem(description: "an unterminated \(quote == "'" ? "single" : "double") quote") }
        guard !escaped else { throw Problem(description: "a trailing backslash") }
        if inWord { words.append(current) }
        guard !words.isEmpty else { throw Problem(description: "no command given") }
        self.words = words
    }

    /// The program's path: the first word if it names a path, else its first match in `PATH`.
    public func executable(path: String? = ProcessInfo.processInfo.environment["PATH"]) throws(Problem) -> URL {
        let program = words[0]
        if program.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: program) else {
                throw Problem(description: "\(program) is not an executable file")
            }
            return URL(fileURLWithPath: program)
        }
        for directory in (path ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(program)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw Problem(description: "\(program) was not found in PATH")
    }

    /// One run's outcome.
    public struct Run: Sendable, Equatable {
        /// The exit status (`nil` when it could not start or was killed after the timeout).
        public var status: Int32?
        /// Why it failed, when it did.
        public var failure: String?
        /// Whether it succeeded (exit status 0).
        public var succeeded: Bool { status == 0 }
    }

    /// Runs the command once with `variables` added to the environment, waiting at most ``timeout``.
    public func run(variables: [String: String]) async -> Run {
        let executable: URL
        do { executable = try self.executable() } catch { return Run(status: nil, failure: error.description) }
        let child = ChildProcess(executable: executable, arguments: Array(words.dropFirst()), variables: variables)
        let timeout = self.timeout
        return await withTaskGroup(of: Run?.self) { group in
            group.addTask { await child.run() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            if let first {
                group.cancelAll()
                return first
            }
            // The timeout fired first: stop the child and wait for it, so no process outlives the drill's step.
            child.terminate()
            _ = await group.next()
            return Run(status: nil, failure: "no exit within \(timeout); killed")
        }
    }
}

/// One run of the command: spawned (no shell) in a process group of its own with every signal at its default
/// disposition, waited for on a thread of its own (a blocking `waitpid` must not hold one of the few threads of
/// Swift's cooperative pool).
///
/// Why not `Foundation.Process`: it would pass on signals the drill ignores (ignored dispositions survive `exec`, so a
/// SIGTERM could not stop the command), it cannot start a process group (a `sh -c` command's own children would outlive
/// a kill), and on Linux it reports the end only once every process holding its internal socket has gone.
private final class ChildProcess: Sendable {
    private let executable: String
    private let arguments: [String]
    private let environment: [String]
    /// The child's pid while it runs (0 before it started and once it was reaped), so a kill never hits a reused pid.
    private let running = Locked<pid_t>(0)

    init(executable: URL, arguments: [String], variables: [String: String]) {
        self.executable = executable.path
        self.arguments = [executable.path] + arguments
        self.environment = ProcessInfo.processInfo.environment.merging(variables) { $1 }.map { "\($0.key)=\($0.value)" }
    }

    func run() async -> TriggerCommand.Run {
        await withCheckedContinuation { (continuation: CheckedContinuation<TriggerCommand.Run, Never>) in
            Thread { continuation.resume(returning: self.spawnAndWait()) }.start()
        }
    }

    private func spawnAndWait() -> TriggerCommand.Run {
        #if os(tvOS) || os(watchOS)
        // spawn.h marks posix_spawn unavailable there (and signal.h kill): a tool's code must not break a package build.
        return TriggerCommand.Run(status: nil, failure: "cannot start: this platform cannot spawn processes")
        #else
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t?
        var actions: posix_spawn_file_actions_t?
        #else
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawnattr_init(&attributes)
        posix_spawn_file_actions_init(&actions)
        defer {
            posix_spawnattr_destroy(&attributes)
            posix_spawn_file_actions_destroy(&actions)
        }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        // Spawned under the lock, so a kill that races the start waits for the pid.
        let spawned = running.withLock { running -> Int32 in
            let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            if result == 0 { running = pid }
            return result
        }
        guard spawned == 0 else {
            return TriggerCommand.Run(status: nil, failure: "cannot start: \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        running.withLock { $0 = 0 }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7f
        guard signal == 0 else { return TriggerCommand.Run(status: nil, failure: "ended by signal \(signal)") }
        let code = (status >> 8) & 0xff
        return TriggerCommand.Run(status: code, failure: code == 0 ? nil : "exit status \(code)")
        #endif
    }

    /// Kills the child's whole process group (SIGKILL: the command's own children too).
    func terminate() {
        #if !os(tvOS) && !os(watchOS)
        running.withLock { pid in
            if pid > 0 { kill(-pid, SIGKILL) }
        }
        #endif
    }
}
