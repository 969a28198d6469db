import AppSyncEventsWire
import SubscriberCore
import Testing

private let fifty = String(repeating: "a", count: 50)
private let fiftyOne = String(repeating: "a", count: 51)

@Suite("ChannelName")
struct ChannelNameTests {
    /// Channels valid for both subscribing and publishing, with the normalised form `validate` returns.
    @Test(
        "valid for subscribe and publish",
        arguments: [
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
            ("ns/a--b", "ns/a--b"),
            ("ns/a-b-c", "ns/a-b-c"),
            // The pattern's optional trailing "/" (AWS accepts `default/a/`).
            ("default/a/", "default/a"),
            ("/default/a/", "default/a"),
            ("default/", "default"),
            ("/default/", "default"),
            ("a/b/c/d/e/", "a/b/c/d/e"),
            ("\(fifty)/\(fifty)/", "\(fifty)/\(fifty)"),
        ])
    func validEverywhere(channel: String, normalised: String) throws {
        #expect(try ChannelName.validate(channel, for: .subscribe) == normalised)
        #expect(try ChannelName.validate(channel, for: .publish) == normalised)
    }

    @Test(
        "wildcards are valid for subscribe only",
        arguments: [
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

    @Test(
        "invalid for subscribe and publish",
        arguments: [
            // Empty channel or segments.
            "",
            "/",
            "//",
            "///",
            "a//b",
            "//a",
            "a//",
            "a/b//",
            "//a//",
            // Too many segments.
            "a/b/c/d/e/f",
            "/a/b/c/d/e/f",
            "a/b/c/d/e/f/",
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
            // Every segment starts and ends with a letter or digit, not only the namespace.
            "default/-bad-",
            "default/-bad",
            "default/bad-",
            "default/-",
            "ns/-lead/trail-/-",
            "ns/ok/-",
            "ns/a/b-/",
            // Wildcard placement.
            "*",
            "/*",
            "*/a",
            "ns/*/x",
            "ns/a/*/*",
            "ns/*/",
            "/ns/a/*/",
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

    @Test(
        "isWildcard",
        arguments: [
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
