#if os(Linux) || os(Android)
import Foundation
import NIOCore
import NIOPosix
import SubscriberCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Who closes a descriptor handed to `NIOPipeBootstrap.takingOwnershipOfDescriptor(input:)` when the bootstrap fails:
/// `TimerFDLinkTimer.make(on:)` closes its read copy only where NIO gave it back. NIO's documentation says a failed
/// future always leaves it with the caller; its code closes it once it made a channel of it. These tests notice if
/// that changes (the timer would then leak a descriptor, or close one twice).
@Suite("NIOPipeBootstrap's descriptor ownership on failure")
struct PipeDescriptorOwnershipTests {
    private struct Refused: Error {}

    /// The file behind `descriptor` as the kernel names it (`pipe:[inode]`, a path), `nil` once it is closed: a number
    /// given out again names another file. Read from `/proc`, not with `fstat`: MemberImportVisibility credits `struct
    /// stat`'s fields to whichever C module the compiler loaded first for the files it compiles together (Glibc,
    /// CoreFoundation, CDispatch), so the build broke or not with the number of files in the target.
    private static func identity(_ descriptor: CInt) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
    }

    @Test("a channel initializer that fails: NIO closes the descriptor itself, so the caller must not")
    func failedInitializerClosesTheDescriptor() async throws {
        var ends: [CInt] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { _ = close(ends[1]) }
        let before = try #require(Self.identity(ends[0]))
        let bootstrap = NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
            .channelInitializer { channel in channel.eventLoop.makeFailedFuture(Refused()) }
        await #expect(throws: Refused.self) {
            _ = try await bootstrap.takingOwnershipOfDescriptor(input: ends[0]).get()
        }
        #expect(Self.identity(ends[0]) != before, "NIO closed the read end")
    }

    @Test("a descriptor refused before a channel is made of it (a regular file) stays open: the caller closes it")
    func refusedDescriptorStaysWithTheCaller() async throws {
        var template = Array("\(NSTemporaryDirectory())/pipe-ownership-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        try #require(file >= 0)
        unlink(template)
        defer { _ = close(file) }
        let before = try #require(Self.identity(file))
        let ran = Locked(false)
        let bootstrap = NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
            .channelInitializer { channel in
                ran.withLock { $0 = true }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
        await #expect(throws: (any Error).self) {
            _ = try await bootstrap.takingOwnershipOfDescriptor(input: file).get()
        }
        #expect(!ran.withLock { $0 }, "no channel was made")
        #expect(Self.identity(file) == before, "the file is still open")
    }
}
#endif
