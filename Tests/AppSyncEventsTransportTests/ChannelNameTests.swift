import AppSyncEventsTransport
import SubscriberCore
import Testing

private let fifty = String(repeating: "a", count: 50)
private let fiftyOne = String(repeating: "a", count: 51)

@Suite("ChannelName")
struct ChannelNameTests {
    /// Channels valid for both subscribing and publishing, with the normalised form `validate` returns.
    @Test("valid for subscribe and publish", arguments: [
        ("default/test", "default/test"),
        ("/default/test", "default/test"),
        ("default", "default"),
        ("/default", "default"),
        ("a/b/c/d/e", "a/b/c/d/e"),
        ("/a/b/c/d/e", "a/b/c/d/e"),
        ("vortex-app/user/u-1/device/presenceChanged", "vortex-app/user/u-1/device/presenceChanged"),
        ("/vortex-app/user/u-1/device/presenceChanged", "vortex-app/user/u-1/device/presenceChanged"),
        ("\(fifty)/x", "\(fifty)/x"),
        ("ns/\(fifty)", "ns/\(fifty)"),
        ("\(fifty)/\(fifty)/\(fifty)/\(fifty)/\(fifty)", "\(fifty)/\(fifty)/\(fifty)/\(fifty)/\(fifty)"),
        ("a-b/c", "a-b/c"),
        ("0/9", "0/9"),
        ("A-0-z/ABC-xyz-019", "A-0-z/ABC-xyz-019"),
        ("ns/-lead/trail-/-", "ns/-lead/trail-/-"),
        ("ns/a--b", "ns/a--b"),
    ])
    func validEverywhere(channel: String, normalised: String) throws {
        #expect(try ChannelName.validate(channel, for: .subscribe) == normalised)
        #expect(try ChannelName.validate(channel, for: .publish) == normalised)
    }

    @Test("wildcards are valid for subscribe only", arguments: [
        ("vortex-app/user/u-1/device/*", "vortex-app/user/u-1/device/*"),
        ("default/*", "default/*"),
        ("/default/*", "default/*"),
        ("a/b/c/d/*", "a/b/c/d/*"),
    ])
    func wildcard(channel: String, normalised: String) throws {
        #expect(try ChannelName.validate(channel, for: .subscribe) == normalised)
        let error = #expect(throws: RealtimeError.self) { try ChannelName.validate(channel, for: .publish) }
        guard case .invalidChannel(let reported, _)? = error else {
            Issue.record("expected invalidChannel, got \(String(describing: error))")
            return
        }
        #expect(reported == channel)
    }

    @Test("invalid for subscribe and publish", arguments: [
        // Empty channel or segments.
        "",
        "/",
        "//",
        "a//b",
        "a/",
        "/a/",
        "//a",
        "a/b/",
        "a/b//",
        // Too many segments.
        "a/b/c/d/e/f",
        "/a/b/c/d/e/f",
        "a/b/c/d/e/*",
        // Segment length.
        "ns/\(fiftyOne)",
        "\(fiftyOne)/x",
        fiftyOne,
        // Characters.
        "ns/a_b",
        "ns/a.b",
        "ns/a b",
        " ns/a",
        "ns/a\n",
        "ns/é",
        "ns/ａ",
        "ns/a+b",
        "ns/a:b",
        "ns/a*",
        "ns/*a",
        "ns/**",
        "ns.a/b",
        "ns\\a/b",
        // Namespace rules.
        "-ns/x",
        "ns-/x",
        "-",
        "-/x",
        "-ns",
        // Wildcard placement.
        "*",
        "/*",
        "*/a",
        "ns/*/x",
        "ns/a/*/*",
    ])
    func invalidEverywhere(channel: String) {
        for use in [ChannelName.Use.subscribe, .publish] {
            let error = #expect(throws: RealtimeError.self, "\(use)") { try ChannelName.validate(channel, for: use) }
            guard case .invalidChannel(let reported, let reason)? = error else {
                Issue.record("expected invalidChannel, got \(String(describing: error))")
                continue
            }
            #expect(reported == channel)
            #expect(!reason.isEmpty)
        }
    }

    @Test("isWildcard", arguments: [
        ("default/*", true),
        ("a/b/c/d/*", true),
        ("/default/*", true),
        ("default/test", false),
        ("default", false),
        ("default/a*", false),
        ("*", false),
    ])
    func isWildcard(channel: String, expected: Bool) {
        #expect(ChannelName.isWildcard(channel) == expected)
    }

    @Test func limits() {
        #expect(ChannelName.maxSegments == 5)
        #expect(ChannelName.maxSegmentLength == 50)
    }
}
