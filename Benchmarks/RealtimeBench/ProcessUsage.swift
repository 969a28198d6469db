import Foundation

#if canImport(Glibc)
import Glibc

// Glibc imports RUSAGE_SELF as an enum case while getrusage takes its raw Int32.
private let rusageSelf = __rusage_who_t(RUSAGE_SELF.rawValue)
#elseif canImport(Darwin)
import Darwin

private let rusageSelf = RUSAGE_SELF
#endif

/// CPU and memory of this process, read from the kernel.
enum ProcessUsage {
    /// User + system CPU seconds of every thread of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        _ = getrusage(rusageSelf, &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The peak resident set size, in KB (Linux reports KB).
    static func maxRSSKB() -> Int {
        var usage = rusage()
        _ = getrusage(rusageSelf, &usage)
        return Int(usage.ru_maxrss)
    }

    /// The current resident set size in KB, from /proc/self/statm (0 where it does not exist).
    static func currentRSSKB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// Wall-clock time in nanoseconds since the Unix epoch, comparable with another process's (Python time_ns).
    static func unixNanos() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    private static func seconds(_ value: timeval) -> Double {
        Double(value.tv_sec) + Double(value.tv_usec) / 1_000_000
    }
}
