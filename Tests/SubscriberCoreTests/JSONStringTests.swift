import Foundation
import SubscriberCore
import Testing

/// Parses `text` with Foundation (fragments allowed).
private func parse(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}

@Suite("JSONString")
struct JSONStringTests {
    @Test(
        "quoted gives exact bytes",
        arguments: [
            ("", #""""#),
            ("abc", #""abc""#),
            ("a/b", #""a/b""#),
            ("</script>", #""</script>""#),
            ("<>&'", #""<>&'""#),
            ("a\"b", #""a\"b""#),
            ("a\\b", #""a\\b""#),
            ("\\\"", #""\\\"""#),
            ("\n", #""\n""#),
            ("\r", #""\r""#),
            ("\t", #""\t""#),
            ("\u{08}", #""\b""#),
            ("\u{0C}", #""\f""#),
            ("\u{00}", #""\u0000""#),
            ("\u{01}", #""\u0001""#),
            ("\u{0B}", #""\u000b""#),
            ("\u{1B}", #""\u001b""#),
            ("\u{1F}", #""\u001f""#),
            ("\u{20}", #"" ""#),
            ("\u{7F}", "\"\u{7F}\""),
            ("é", #""é""#),
            ("日本語", #""日本語""#),
            ("🚀", #""🚀""#),
            ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
            ("e\u{301}", "\"e\u{301}\""),
            ("a\nb\"c</d>", #""a\nb\"c</d>""#),
        ])
    func quoted(input: String, expected: String) throws {
        let output = JSONString.quoted(input)
        #expect(Array(output.utf8) == Array(expected.utf8))
        let parsed = try #require(try parse(output) as? String)
        #expect(Array(parsed.utf8) == Array(input.utf8))
    }

    @Test("every control character is escaped and nothing else below 0x80 is", arguments: 0..<0x80)
    func asciiEscaping(code: Int) throws {
        let scalar = try #require(Unicode.Scalar(code))
        let input = String(Character(scalar))
        let body = String(JSONString.quoted(input).dropFirst().dropLast())
        let shortForms: [Int: String] = [0x08: #"\b"#, 0x09: #"\t"#, 0x0A: #"\n"#, 0x0C: #"\f"#, 0x0D: #"\r"#, 0x22: #"\""#, 0x5C: #"\\"#]
        if let short = shortForms[code] {
            #expect(body == short)
        } else if code < 0x20 {
            #expect(body == String(format: "\\u%04x", code))
        } else {
            #expect(body == input)
        }
    }

    @Test func objectKeepsTheGivenOrder() throws {
        let text = JSONString.object([(key: "b", json: "1"), (key: "a", json: #""x""#), (key: "c", json: "[true,null]")])
        #expect(text == #"{"b":1,"a":"x","c":[true,null]}"#)
        let parsed = try #require(try parse(text) as? [String: Any])
        #expect(parsed["b"] as? Int == 1)
        #expect(parsed["a"] as? String == "x")
        #expect(parsed["c"] as? [Any] != nil)
    }

    @Test func objectEscapesKeysButNotValues() {
        #expect(JSONString.object([(key: "q\"k</", json: "null")]) == #"{"q\"k</":null}"#)
        // Values are already JSON: they go in verbatim.
        #expect(JSONString.object([(key: "v", json: #"{"x":"\n"}"#)]) == #"{"v":{"x":"\n"}}"#)
    }

    @Test func emptyContainers() {
        #expect(JSONString.object([]) == "{}")
        #expect(JSONString.array([]) == "[]")
        #expect(JSONString.sortedStringObject([:]) == "{}")
    }

    @Test func arrayJoinsValuesVerbatim() throws {
        let text = JSONString.array(["1", #""a""#, "{}", "[]", JSONString.quoted("x\"y")])
        #expect(text == #"[1,"a",{},[],"x\"y"]"#)
        let parsed = try #require(try parse(text) as? [Any])
        #expect(parsed.count == 5)
        #expect(parsed[4] as? String == "x\"y")
    }

    @Test(
        "sortedStringObject sorts keys and escapes values",
        arguments: [
            (["x-api-key": "k", "host": "h"], #"{"host":"h","x-api-key":"k"}"#),
            (["host": "h", "Authorization": "t"], #"{"Authorization":"t","host":"h"}"#),
            (["b": "2", "a": "1", "C": "3", "_": "4", "-": "5"], #"{"-":"5","C":"3","_":"4","a":"1","b":"2"}"#),
            (["k": "</\"\n\u{1}"], #"{"k":"</\"\n\u0001"}"#),
            (
                ["x-amz-date": "d", "x-amz-security-token": "s", "authorization": "a", "host": "h"],
                #"{"authorization":"a","host":"h","x-amz-date":"d","x-amz-security-token":"s"}"#
            ),
        ])
    func sortedStringObject(members: [String: String], expected: String) throws {
        let text = JSONString.sortedStringObject(members)
        #expect(text == expected)
        let parsed = try #require(try parse(text) as? [String: String])
        #expect(parsed == members)
    }

    @Test func sortedStringObjectIsIndependentOfInsertionOrder() {
        var forward: [String: String] = [:]
        var backward: [String: String] = [:]
        let keys = (0..<50).map { "key-\($0)" }
        for key in keys { forward[key] = key }
        for key in keys.reversed() { backward[key] = key }
        let text = JSONString.sortedStringObject(forward)
        #expect(text == JSONString.sortedStringObject(backward))
        #expect(text.hasPrefix(#"{"key-0":"key-0","key-1":"key-1","key-10":"#))
    }
}
