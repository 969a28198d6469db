import Foundation

extension RealtimeSettingsTable {
    /// The comment that opens the generated reference in `docs/configuration.md`.
    package static let referenceBegin = "<!-- settings-table:begin -->"
    /// The comment that closes it.
    package static let referenceEnd = "<!-- settings-table:end -->"

    /// The configuration reference as Markdown: a table (key, environment variable, default, effect) with a row per
    /// setting, then the replaced keys. `docs/configuration.md` holds it between ``referenceBegin`` and
    /// ``referenceEnd``; `vortex-realtime settings --write docs/configuration.md` regenerates it.
    package static func markdownReference() -> String {
        var lines = ["| key | environment variable | default | effect |", "|---|---|---|---|"]
        for setting in settings {
            let effect = [setting.doc, rule(of: setting)].compactMap { $0 }.joined(separator: " ")
            lines.append("| `\(setting.key)` | \(variableColumn(of: setting)) | \(setting.defaultText) | \(effect) |")
        }
        lines.append("")
        let replacedText = replaced.map { old in
            "`\(old.key)` (`\(old.environmentVariable)`) by `\(old.replacement)` (`\(old.replacementVariable)`), \(old.note)"
        }
        lines.append(
            "Replaced keys of earlier versions, refused with an error naming their replacement: "
                + replacedText.joined(separator: "; ") + ". Any other `\(environmentPrefix)*` variable is refused too (a typo "
                + "must not pass silently).")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `document` with the text between ``referenceBegin`` and ``referenceEnd`` replaced by ``markdownReference()``;
    /// `nil` when the markers are missing or out of order.
    package static func updatingReference(in document: String) -> String? {
        guard let begin = document.range(of: referenceBegin), let end = document.range(of: referenceEnd),
            begin.upperBound <= end.lowerBound
        else { return nil }
        return String(document[..<begin.upperBound]) + "\n" + markdownReference() + String(document[end.lowerBound...])
    }

    /// The text between the markers of `document` (without the newline after ``referenceBegin``); `nil` without them.
    package static func documentedReference(in document: String) -> String? {
        guard let begin = document.range(of: referenceBegin), let end = document.range(of: referenceEnd),
            begin.upperBound <= end.lowerBound
        else { return nil }
        let text = document[begin.upperBound..<end.lowerBound]
        return String(text.hasPrefix("\n") ? text.dropFirst() : text)
    }

    private static func variableColumn(of setting: RealtimeSetting) -> String {
        guard let variable = setting.environmentVariable else { return "— (file or code)" }
        switch setting.kind {
        case .onOff: return "`\(variable)` (`on`/`off`)"
        case .jsonTemplate: return "`\(variable)` (JSON text)"
        default: return "`\(variable)`"
        }
    }

    /// The kind's own rule, as a sentence.
    private static func rule(of setting: RealtimeSetting) -> String? {
        let range = setting.bounds.map { bounds in
            let lower = (bounds.includesLower ? "at least " : "above ") + RealtimeSetting.format(bounds.lower)
            return bounds.upper.map { "\(lower) and at most \(RealtimeSetting.format($0))" } ?? lower
        }
        switch setting.kind {
        case .choice(let names): return "One of " + names.map { "`\($0)`" }.joined(separator: ", ") + "."
        case .seconds: return range.map { "Seconds, \($0)." }
        case .optionalSeconds(let never):
            return "Seconds, \(range ?? "above 0"); `null` (`0` in the environment): \(never)."
        case .integer: return range.map { "A whole number, \($0)." }
        case .text, .url, .onOff, .reconnectPolicy, .jsonTemplate, .operations: return nil
        }
    }
}
