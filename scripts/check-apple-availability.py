#!/usr/bin/env python3
"""Finds uses of Apple APIs newer than the package's minimum platforms that no availability guard covers.

Linux's compiler has no availability checks, so an unguarded `Atomic` or `TaskExecutor` builds here and breaks
`swift build` on a Mac. This check reads every *.swift under Sources, Tests and Benchmarks and reports each use of an
API listed in scripts/lib/newer-apple-apis.tsv that is not guarded. A use is guarded when it sits:

  (a) in the body of `if #available(...)` / `while #available(...)`, or after `guard #available(...) else { ... }`
      up to the end of the enclosing block (also the `else` of `if #unavailable(...)` and the body of
      `guard #unavailable(...) else { ... }`);
  (b) in a declaration marked `@available(...)` (type, extension, func, init, subscript, var, ...), from the attribute
      to the end of the declaration, or in any declaration lexically inside one;
  (c) in an `#if` / `#elseif` / `#else` branch that no Apple platform compiles: `os(Linux)`, `os(Android)`, ...,
      `canImport(Glibc)`, `canImport(Musl)`, `canImport(FoundationNetworking)`, `!canImport(Darwin)`, and the
      `#else` of `canImport(Darwin)`, combined with `!`, `&&`, `||` and nested to any depth.

For (a) and (b) the versions of all the guards around a use combine (the highest per platform, the package's minimum
where none names it); they must reach the API's versions for macOS, iOS and tvOS. Guards in other files (an
`@available` type extended here) are not seen: put the attribute on the extension too.

(d) An `import` entry (`import Synchronization`) is reported only when the same file has an unguarded use of another
listed API: importing the module is harmless, using it unguarded is not.

Comments and string literals (single-line, multi-line, raw, with interpolations, which stay code) are blanked by a
small tokenizer before matching and before braces are counted. Bare `/regex/` literals are not recognised; a brace in
one would unbalance the count, which the check reports rather than guess.

Usage: check-apple-availability.py [--self-test]
"""

from __future__ import annotations

import bisect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API_LIST = Path(__file__).resolve().parent / "lib" / "newer-apple-apis.tsv"
SCANNED_DIRS = ("Sources", "Tests", "Benchmarks")
CHECKED_PLATFORMS = ("macOS", "iOS", "tvOS")
# Used when Package.swift cannot be read; the package declares these.
FALLBACK_MINIMUM = {"macOS": (14,), "iOS": (17,), "tvOS": (17,)}

Version = tuple[int, ...]


@dataclass
class Api:
    pattern: re.Pattern[str]
    versions: dict[str, Version]
    versions_text: str
    name: str
    is_import: bool


@dataclass
class Use:
    line: int
    api: Api
    guarded: bool


@dataclass
class FileResult:
    uses: list[Use] = field(default_factory=list)
    error: str | None = None


# ---------------------------------------------------------------------------------------------------------------------
# The API list


def parse_versions(text: str) -> dict[str, Version]:
    versions: dict[str, Version] = {}
    for platform, number in re.findall(r"\b([A-Za-z]+)\s+(\d+(?:\.\d+){0,2})\b", text):
        versions[platform] = tuple(int(part) for part in number.split("."))
    return versions


def load_apis(path: Path) -> list[Api]:
    apis = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        fields = raw.split("\t")
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: expected 3 TAB-separated fields, found {len(fields)}")
        regex, versions_text, label = fields
        versions = parse_versions(versions_text)
        if not all(platform in versions for platform in CHECKED_PLATFORMS):
            raise ValueError(f"{path}:{number}: the versions must name {', '.join(CHECKED_PLATFORMS)}")
        name = label.split(" — ", 1)[0].strip()
        apis.append(Api(re.compile(regex), versions, versions_text.strip(), name, name.startswith("import ")))
    return apis


def availability_macros(package_swift: Path) -> dict[str, dict[str, Version]]:
    """Availability macros the package defines (`-define-availability "Name 1.0:macOS 15, iOS 18"`), by name."""
    try:
        text = package_swift.read_text(encoding="utf-8")
    except OSError:
        return {}
    return {
        name.strip(): parse_versions(versions)
        for name, versions in re.findall(r"(?:AvailabilityMacro=|-define-availability[\",\s]+)([^:\"]+):([^\"]+)", text)
    }


def package_minimum(package_swift: Path) -> dict[str, Version]:
    """The `platforms:` of Package.swift, e.g. `.macOS(.v14)` or `.iOS("17.0")`."""
    try:
        text = package_swift.read_text(encoding="utf-8")
    except OSError:
        return dict(FALLBACK_MINIMUM)
    found: dict[str, Version] = {}
    for platform, major, minor, quoted in re.findall(
        r"\.(macOS|iOS|tvOS|watchOS|visionOS)\s*\(\s*(?:\.v(\d+)(?:_(\d+))?|\"([\d.]+)\")\s*\)", text
    ):
        if quoted:
            found[platform] = tuple(int(part) for part in quoted.split("."))
        else:
            found[platform] = (int(major), int(minor)) if minor else (int(major),)
    return {platform: found.get(platform, FALLBACK_MINIMUM[platform]) for platform in CHECKED_PLATFORMS}


# ---------------------------------------------------------------------------------------------------------------------
# Tokenizer: blank comments and string literals, keep everything else (newlines, interpolated code) in place.


class SourceError(Exception):
    pass


def blank_comments_and_strings(src: str) -> str:
    out = list(src)
    n = len(src)

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    i = 0
    string: tuple[str, int] | None = None  # (delimiter, number of #) while inside a string literal's text
    interpolations: list[list] = []  # [delimiter, hashes, open parentheses] of each string we are interpolating into
    while i < n:
        if string is not None:
            quote, hashes = string
            c = src[i]
            if c == "\\" and src.startswith("#" * hashes, i + 1):
                j = i + 1 + hashes
                if j < n and src[j] == "(":
                    blank(i, j + 1)
                    interpolations.append([quote, hashes, 0])
                    string = None
                    i = j + 1
                else:
                    blank(i, min(j + 1, n))
                    i = j + 1
            elif src.startswith(quote + "#" * hashes, i):
                end = i + len(quote) + hashes
                blank(i, end)
                string = None
                i = end
            elif c == "\n" and quote == '"':
                string = None  # an unterminated single-line string: the compiler would reject it
                i += 1
            else:
                blank(i, i + 1)
                i += 1
            continue

        c = src[i]
        if src.startswith("//", i):
            end = src.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == '"' or c == "#":
            hashes = 0
            while i + hashes < n and src[i + hashes] == "#":
                hashes += 1
            start = i + hashes
            if start < n and src[start] == '"':
                quote = '"""' if src.startswith('"""', start) else '"'
                if quote == '"""' and hashes:
                    # As Swift's lexer: `#"""#` with its closing delimiter on the same line is a one-line string.
                    line_end = src.find("\n", start)
                    if ('"' + "#" * hashes) in src[start + 3 : n if line_end < 0 else line_end]:
                        quote = '"'
                blank(i, start + len(quote))
                string = (quote, hashes)
                i = start + len(quote)
            else:
                i += max(hashes, 1)
        elif c == "(" and interpolations:
            interpolations[-1][2] += 1
            i += 1
        elif c == ")" and interpolations:
            if interpolations[-1][2] == 0:
                quote, hashes, _ = interpolations.pop()
                blank(i, i + 1)
                string = (quote, hashes)
            else:
                interpolations[-1][2] -= 1
            i += 1
        else:
            i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------------
# Conditional compilation: which lines sit in a branch no Apple platform compiles.

NON_APPLE_OS = {"Linux", "Android", "Windows", "FreeBSD", "OpenBSD", "WASI", "Cygwin", "PS4", "Haiku", "none"}
APPLE_ONLY_MODULES = {"Darwin"}
NON_APPLE_MODULES = {"Glibc", "Musl", "Bionic", "Android", "WinSDK", "WASILibc", "FoundationNetworking", "CRT"}


def evaluate_on_apple(condition: str) -> bool | None:
    """An `#if` condition on every Apple platform: True (always), False (never), None (it depends)."""
    tokens = re.findall(r"&&|\|\||!|\(|\)|[A-Za-z_][A-Za-z0-9_]*|[^\s()!&|]+", condition)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str | None:
        nonlocal position
        token = peek()
        position += 1
        return token

    def either(left: bool | None, right: bool | None) -> bool | None:
        if left is True or right is True:
            return True
        if left is False and right is False:
            return False
        return None

    def both(left: bool | None, right: bool | None) -> bool | None:
        if left is False or right is False:
            return False
        if left is True and right is True:
            return True
        return None

    def parse_or() -> bool | None:
        value = parse_and()
        while peek() == "||":
            take()
            value = either(value, parse_and())
        return value

    def parse_and() -> bool | None:
        value = parse_unary()
        while peek() == "&&":
            take()
            value = both(value, parse_unary())
        return value

    def parse_unary() -> bool | None:
        if peek() == "!":
            take()
            value = parse_unary()
            return None if value is None else not value
        return parse_primary()

    def parse_primary() -> bool | None:
        token = take()
        if token == "(":
            value = parse_or()
            if peek() == ")":
                take()
            return value
        if token is None:
            return None
        argument = None
        if peek() == "(":
            take()
            parts = []
            depth = 0
            while peek() is not None and not (peek() == ")" and depth == 0):
                part = take()
                depth += {"(": 1, ")": -1}.get(part, 0)
                parts.append(part)
            take()
            argument = " ".join(parts).strip()
        if token == "os" and argument is not None:
            return False if argument in NON_APPLE_OS else None
        if token == "canImport" and argument is not None:
            module = argument.split(",")[0].strip()
            if module in APPLE_ONLY_MODULES:
                return True
            if module in NON_APPLE_MODULES:
                return False
            return None
        if token == "true" and argument is None:
            return True
        if token == "false" and argument is None:
            return False
        return None

    return parse_or()


def non_apple_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it sits in an #if branch that no Apple platform compiles."""
    result = []
    stack: list[dict] = []  # per open #if: the values of its branch conditions so far, and whether the current is dead
    for line in lines:
        directive = re.match(r"\s*#(if|elseif|else|endif)\b(.*)", line)
        if directive:
            kind, rest = directive.group(1), directive.group(2).strip()
            if kind == "if":
                value = evaluate_on_apple(rest)
                stack.append({"conditions": [value], "dead": value is False})
            elif kind == "elseif" and stack:
                frame = stack[-1]
                value = evaluate_on_apple(rest)
                frame["dead"] = value is False or any(v is True for v in frame["conditions"])
                frame["conditions"].append(value)
            elif kind == "else" and stack:
                frame = stack[-1]
                frame["dead"] = any(v is True for v in frame["conditions"])
            elif kind == "endif" and stack:
                stack.pop()
            result.append(any(frame["dead"] for frame in stack))  # the directive line itself
            continue
        result.append(any(frame["dead"] for frame in stack))
    return result


# ---------------------------------------------------------------------------------------------------------------------
# Availability guards: regions of the (blanked) text with the versions they guarantee.

MODIFIERS = {
    "public", "private", "fileprivate", "internal", "package", "open", "final", "static", "override", "mutating",
    "nonmutating", "nonisolated", "convenience", "required", "lazy", "weak", "unowned", "dynamic", "indirect",
    "optional", "distributed", "consuming", "borrowing", "prefix", "postfix", "infix",
}
BODY_DECLARATIONS = {
    "class", "struct", "enum", "actor", "protocol", "extension", "func", "init", "deinit", "subscript", "macro",
}
LINE_DECLARATIONS = {"var", "let", "typealias", "case", "associatedtype"}


@dataclass
class Region:
    start: int
    end: int
    versions: dict[str, Version]


class Scanner:
    def __init__(self, text: str, macros: dict[str, dict[str, Version]] | None = None) -> None:
        self.text = text
        self.macros = macros or {}
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.matching: dict[int, int] = {}
        self.pairs: list[tuple[int, int]] = []
        opened: list[int] = []
        for index, c in enumerate(text):
            if c == "{":
                opened.append(index)
            elif c == "}":
                if not opened:
                    raise SourceError(f"line {self.line_of(index)}: a '}}' closes nothing")
                start = opened.pop()
                self.matching[start] = index
                self.pairs.append((start, index))
        if opened:
            raise SourceError(f"line {self.line_of(opened[-1])}: a '{{' is never closed")

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def closing_paren(self, open_index: int) -> int:
        depth = 0
        for index in range(open_index, len(self.text)):
            c = self.text[index]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return index
        return len(self.text) - 1

    def next_body_brace(self, start: int) -> int | None:
        """The first `{` after `start` outside parentheses and brackets; None if a `}` or `;` comes first."""
        depth = 0
        for index in range(start, len(self.text)):
            c = self.text[index]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
                if depth < 0:
                    return None
            elif depth == 0 and c == "{":
                return index
            elif depth == 0 and c in "};":
                return None
        return None

    def enclosing_block_end(self, offset: int) -> int:
        inner = None
        for start, end in self.pairs:
            if start < offset < end and (inner is None or start > inner[0]):
                inner = (start, end)
        return inner[1] if inner else len(self.text)

    def statement_keyword(self, offset: int) -> str | None:
        """The `if`, `guard` or `while` whose condition list contains `offset`."""
        depth = 0
        index = offset - 1
        while index >= 0:
            c = self.text[index]
            if c in ")]":
                depth += 1
            elif c in "([":
                if depth == 0:
                    return None
                depth -= 1
            elif depth == 0 and c in "{};":
                break
            index -= 1
        keywords = re.findall(r"\b(if|guard|while)\b", self.text[index + 1 : offset])
        return keywords[-1] if keywords else None

    def else_block_after(self, close_index: int) -> int | None:
        match = re.match(r"\s*else\s*\{", self.text[close_index + 1 :])
        return close_index + match.end() if match else None

    def guard_versions(self, arguments: str) -> dict[str, Version]:
        """The versions an availability list names, with the package's availability macros expanded."""
        versions: dict[str, Version] = {}
        for name, expansion in self.macros.items():
            if re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w.])", arguments):
                arguments = arguments.replace(name, "")
                versions.update(expansion)
        versions.update(parse_versions(arguments))
        return versions

    def availability_regions(self) -> list[Region]:
        regions = []
        for match in re.finditer(r"#(available|unavailable)\s*\(", self.text):
            close = self.closing_paren(match.end() - 1)
            versions = self.guard_versions(self.text[match.end() : close])
            keyword = self.statement_keyword(match.start())
            body = self.next_body_brace(close + 1)
            if not versions or keyword is None or body is None:
                continue
            body_end = self.matching[body]
            if match.group(1) == "available":
                if keyword in ("if", "while"):
                    regions.append(Region(body, body_end, versions))
                elif keyword == "guard":
                    regions.append(Region(body_end, self.enclosing_block_end(match.start()), versions))
            else:
                if keyword == "if":
                    else_open = self.else_block_after(body_end)
                    if else_open is not None:
                        regions.append(Region(else_open, self.matching[else_open], versions))
                elif keyword == "guard":
                    regions.append(Region(body, body_end, versions))
        for match in re.finditer(r"@available\s*\(", self.text):
            close = self.closing_paren(match.end() - 1)
            arguments = self.text[match.end() : close]
            introduced = re.match(r"\s*([A-Za-z]+)\s*,\s*introduced\s*:\s*(\d+(?:\.\d+){0,2})", arguments)
            if introduced:
                versions = parse_versions(f"{introduced.group(1)} {introduced.group(2)}")
            elif re.search(r"\b(unavailable|deprecated|obsoleted|renamed|message|introduced)\b", arguments):
                continue
            else:
                versions = self.guard_versions(arguments)
            if not versions:
                continue
            end = self.declaration_end(close + 1)
            if end is not None:
                regions.append(Region(match.start(), end, versions))
        return regions

    def declaration_end(self, start: int) -> int | None:
        """Where the declaration that follows an attribute ends; None if no declaration is recognised."""
        text = self.text
        index = start
        while True:
            while index < len(text) and text[index].isspace():
                index += 1
            if index < len(text) and text[index] == "@":
                word = re.match(r"@[A-Za-z_][A-Za-z0-9_.]*", text[index:])
                index += word.end() if word else 1
                if index < len(text) and text[index] == "(":
                    index = self.closing_paren(index) + 1
                continue
            word = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[index:])
            if not word:
                return None
            name = word.group(0)
            after = index + word.end()
            rest = text[after:]
            if name in MODIFIERS or (name == "class" and re.match(r"\s+(func|var|let|subscript)\b", rest)):
                index = after
                if index < len(text) and text[index] == "(":  # private(set), nonisolated(unsafe)
                    index = self.closing_paren(index) + 1
                continue
            if name in BODY_DECLARATIONS:
                return self.body_declaration_end(after)
            if name in LINE_DECLARATIONS:
                return self.logical_line_end(after)
            return None

    def body_declaration_end(self, start: int) -> int:
        """The end of a type, extension or function: its body's closing brace, or the end of a bodiless one."""
        text = self.text
        depth = 0
        index = start
        while index < len(text):
            c = text[index]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and c == "{":
                return self.matching[index] + 1
            elif depth == 0 and c in "};":
                return index
            elif depth == 0 and c == "\n":
                following = re.match(r"\s*(@|#|\}|[A-Za-z_][A-Za-z0-9_]*)", text[index:])
                word = following.group(1) if following else None
                if word in ("@", "#", "}") or word in MODIFIERS | BODY_DECLARATIONS | LINE_DECLARATIONS:
                    return index  # a requirement without a body: the next declaration starts here
            index += 1
        return len(text)

    def logical_line_end(self, start: int) -> int:
        depth = 0
        for index in range(start, len(self.text)):
            c = self.text[index]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    return index
            elif c == "\n" and depth == 0:
                return index
        return len(self.text)


# ---------------------------------------------------------------------------------------------------------------------
# The check


def check_source(
    source: str, apis: list[Api], minimum: dict[str, Version], macros: dict[str, dict[str, Version]] | None = None
) -> FileResult:
    text = blank_comments_and_strings(source)
    try:
        scanner = Scanner(text, macros)
    except SourceError as error:
        return FileResult(error=f"cannot check: {error} (after blanking comments and strings)")
    regions = scanner.availability_regions()
    dead = non_apple_lines(text.split("\n"))
    result = FileResult()
    imports = []
    for api in apis:
        if all(api.versions[p] <= minimum.get(p, (0,)) for p in CHECKED_PLATFORMS):
            continue  # already available at the package's minimum
        for match in api.pattern.finditer(text):
            line = scanner.line_of(match.start())
            if dead[line - 1]:
                result.uses.append(Use(line, api, True))
                continue
            if api.is_import:
                imports.append(Use(line, api, False))
                continue
            effective = dict(minimum)
            for region in regions:
                if region.start <= match.start() < region.end:
                    for platform, version in region.versions.items():
                        if platform in effective and version > effective[platform]:
                            effective[platform] = version
            guarded = all(effective.get(p, (0,)) >= api.versions[p] for p in CHECKED_PLATFORMS)
            result.uses.append(Use(line, api, guarded))
    any_unguarded = any(not use.guarded for use in result.uses)
    for use in imports:
        use.guarded = not any_unguarded
        result.uses.append(use)
    result.uses.sort(key=lambda use: use.line)
    return result


def violation_message(path: str, use: Use) -> str:
    return (
        f"{path}:{use.line}: {use.api.name} needs {use.api.versions_text}; "
        "guard it with #available/@available or replace it"
    )


def run_check(root: Path) -> int:
    apis = load_apis(API_LIST)
    minimum = package_minimum(root / "Package.swift")
    macros = availability_macros(root / "Package.swift")
    files = sorted(path for directory in SCANNED_DIRS for path in (root / directory).rglob("*.swift"))
    guarded = 0
    failures = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        result = check_source(path.read_text(encoding="utf-8"), apis, minimum, macros)
        if result.error:
            failures.append(f"{relative}: {result.error}")
            continue
        for use in result.uses:
            if use.guarded:
                guarded += 1
            else:
                failures.append(violation_message(relative, use))
    for failure in failures:
        print(failure)
    if failures:
        print(
            f"apple availability: {len(files)} files checked, {guarded} guarded uses, {len(failures)} unguarded",
            file=sys.stderr,
        )
        return 1
    print(f"apple availability: {len(files)} files checked, {guarded} guarded uses, 0 unguarded")
    return 0


# ---------------------------------------------------------------------------------------------------------------------
# Self-test: Swift snippets whose lines say what the check must decide. A line ending in `//: ok` must hold at least
# one use, all guarded; `//: flag` at least one use, all reported; any other line no use at all.

SELF_TEST_CASES: dict[str, str] = {
    "if #available with enough versions guards its body, not what follows": """
func f() {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        let counter = Atomic(0)  //: ok
        _ = counter
    }
    let late = Atomic(0)  //: flag
}
""",
    "if #available that names only macOS guards nothing for iOS and tvOS": """
func f() {
    if #available(macOS 15, *) {
        let lock = Mutex(0)  //: flag
    }
}
""",
    "if #available with macOS 15 does not cover a macOS 26 API": """
func f() {
    if #available(macOS 15, iOS 18, tvOS 18, *) {
        let a: InlineArray<2, Int> = [1, 2]  //: flag
        Task.immediate { }  //: flag
    }
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, *) {
        Task.immediate { }  //: ok
    }
}
""",
    "if #available after other conditions, else branch unguarded": """
func f(value: Int?) {
    if let value, #available(macOS 15.0, iOS 18.0, tvOS 18.0, *) {
        _ = String(validating: [value], as: UTF8.self)  //: ok
    } else {
        _ = String(validating: [0], as: UTF8.self)  //: flag
    }
}
""",
    "guard #available guards the rest of the block only": """
func f() {
    guard #available(macOS 15, iOS 18, tvOS 18, *) else {
        _ = Atomic(1)  //: flag
        return
    }
    _ = Atomic(2)  //: ok
    if true {
        _ = Mutex(3)  //: ok
    }
}
func g() {
    _ = Atomic(4)  //: flag
}
""",
    "if #unavailable guards its else branch": """
func f() {
    if #unavailable(macOS 15, iOS 18, tvOS 18) {
        _ = Atomic(1)  //: flag
    } else {
        _ = Atomic(2)  //: ok
    }
}
""",
    "@available on the line before an extension covers its header and body": """
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension Loop: TaskExecutor {  //: ok
    func enqueue(_ job: consuming ExecutorJob) {
        job.runSynchronously(on: self.asUnownedTaskExecutor())  //: ok
    }
}
extension Loop {
    func other() -> (any TaskExecutor)? { nil }  //: flag
}
""",
    "@available on a function, after other attributes and modifiers, and on a computed property": """
struct S {
    @available(macOS 15, iOS 18, tvOS 18, *)
    @inlinable
    public static func make() -> Mutex<Int> {  //: ok
        Mutex(0)  //: ok
    }
    @available(macOS 15, iOS 18, tvOS 18, *)
    var wide: Int128 {  //: ok
        Int128(1)  //: ok
    }
    func after() -> Int128 { 0 }  //: flag
}
""",
    "@available on a type covers nested declarations; a bodiless requirement does not leak": """
@available(macOS 15, iOS 18, tvOS 18, *)
final class Counter: Sendable {
    let value = Atomic(0)  //: ok
    struct Inner {
        func f() { _ = Mutex(0) }  //: ok
    }
}
protocol P {
    @available(macOS 15, iOS 18, tvOS 18, *)
    func wide() -> Int128  //: ok
    func narrow() -> Int128  //: flag
}
""",
    "@available guards combine with #available per platform": """
@available(macOS 15, *)
func f() {
    if #available(iOS 18, tvOS 18, *) {
        _ = Atomic(0)  //: ok
    }
    _ = Atomic(1)  //: flag
}
""",
    "#if branches no Apple platform compiles": """
#if os(Linux)
let a = Atomic(0)  //: ok
#endif
#if os(Linux) || os(Android)
let b = Atomic(0)  //: ok
#elseif os(macOS)
let c = Atomic(0)  //: flag
#endif
#if !canImport(Darwin)
let d = Atomic(0)  //: ok
#endif
#if canImport(Glibc)
let e = Atomic(0)  //: ok
#elseif canImport(Musl)
let f = Atomic(0)  //: ok
#else
let g = Atomic(0)  //: flag
#endif
#if canImport(Darwin)
let h = Atomic(0)  //: flag
#else
let i = Atomic(0)  //: ok
#endif
#if os(macOS) || os(Linux)
let j = Atomic(0)  //: flag
#endif
""",
    "nested #if: a dead outer branch stays dead, a live outer branch decides by the inner": """
#if canImport(Darwin)
#if DEBUG
let a = Atomic(0)  //: flag
#else
let b = Atomic(0)  //: flag
#endif
#else
#if DEBUG
let c = Atomic(0)  //: ok
#endif
let d = Atomic(0)  //: ok
#endif
#if DEBUG
#if os(Linux)
let e = Atomic(0)  //: ok
#endif
let f = Atomic(0)  //: flag
#endif
""",
    "comments and strings are not uses and do not count braces": """
// Atomic(0) in a line comment, and TaskExecutor
/// A doc comment naming Mutex<Int> and String(validating:)
/* a block comment with Atomic(0) { and /* a nested one with InlineArray } */ still inside */
func f() {
    if #available(macOS 15, iOS 18, tvOS 18, *) {
        let s = "Atomic(0) }"
        let raw = #"TaskExecutor "quoted" } \\(Atomic(0))"#
        let text = \"\"\"
            Mutex<Int> }
            \\(Atomic(1))  //: ok
            \"\"\"
        let joined = "\\(Atomic(2)) and \\("{")"  //: ok
        let quotes = #\"\"\"\"#, brace = "\\u{7D}", slash = "\\\\"; _ = Atomic(6)  //: ok
        _ = Atomic(3)  //: ok
    }
    let after = "plain Atomic(4) text"
    _ = "\\(Atomic(5))"  //: flag
}
""",
    "names that only look like listed APIs": """
func f() throws {
    _ = try ReconnectPolicy(validating: "1s")
    let atomicCount = 0
    let mutexLike = MyMutex()
    let spanish = spans
}
""",
    "an availability macro of the package counts as its versions": """
@available(Realtime 1.1, *)
struct S {
    let lock = Mutex(0)  //: ok
}
func f() {
    if #available(Realtime 1.1, *) {
        _ = Atomic(0)  //: ok
    }
    if #available(Realtime 1, *) {
        _ = Atomic(1)  //: flag
    }
}
""",
    "import Synchronization is reported only with an unguarded use in the file": """
import Synchronization  //: flag
@available(macOS 15, iOS 18, tvOS 18, *)
let fine = Atomic(0)  //: ok
let broken = Atomic(0)  //: flag
""",
    "import Synchronization with every use guarded is accepted": """
import Foundation
import Synchronization  //: ok
@available(macOS 15, iOS 18, tvOS 18, *)
final class C {
    let value = Atomic(0)  //: ok
}
""",
}


def self_test() -> int:
    apis = load_apis(API_LIST)
    minimum = dict(FALLBACK_MINIMUM)
    macros = {"Realtime 1.1": parse_versions("macOS 15, iOS 18, tvOS 18, watchOS 11")}
    failures = []
    for title, source in SELF_TEST_CASES.items():
        source = source.lstrip("\n")
        result = check_source(source, apis, minimum, macros)
        if result.error:
            failures.append(f"{title}: {result.error}")
            continue
        verdicts: dict[int, set[bool]] = {}
        for use in result.uses:
            verdicts.setdefault(use.line, set()).add(use.guarded)
        for number, line in enumerate(source.split("\n"), start=1):
            expected = "ok" if line.endswith("//: ok") else "flag" if line.endswith("//: flag") else None
            found = verdicts.get(number, set())
            actual = None if not found else "ok" if found == {True} else "flag" if found == {False} else "mixed"
            if actual != expected:
                wanted, got = expected or "no use", actual or "no use"
                failures.append(f"{title}: line {number} `{line.strip()}`: expected {wanted}, got {got}")
    checked = len(SELF_TEST_CASES)
    for failure in failures:
        print(f"self-test: {failure}", file=sys.stderr)
    if failures:
        print(f"apple availability self-test: {len(failures)} wrong verdicts in {checked} cases", file=sys.stderr)
        return 1
    print(f"apple availability self-test: {checked} cases, every verdict right")
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--self-test"]:
        return self_test()
    if argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    return run_check(ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
