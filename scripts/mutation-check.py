#!/usr/bin/env python3
"""Checks that the tests can fail: applies each mutant of scripts/mutants.json to the source (one at a time), builds,
runs the tests it names, and restores the file. A mutant the tests do not kill is a behaviour no test pins down.

    python3 scripts/mutation-check.py [--only TEXT] [--list] [--check]

A mutant is {"file", "from", "to", "tests"} (`from` must occur exactly once in `file`; `tests` is a `swift test --filter`),
plus "equivalent": a reason, for a mutant no test can kill because the rest of the code never lets it make a difference.
About a minute per mutant on 2 cores (an incremental build and one suite); the whole list takes over an hour, so it is
not part of CI. Exit status 1 when a mutant that is not marked equivalent survives, or a mutant no longer applies.
Never run it while another build of this package runs, and never edit sources meanwhile: each mutant is built from the
working tree, and the file is restored from a copy taken just before.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(mutant, backup):
    path = os.path.join(ROOT, mutant["file"])
    with open(path) as handle:
        source = handle.read()
    if source.count(mutant["from"]) != 1:
        return "stale", "the text to replace occurs %d times" % source.count(mutant["from"])
    shutil.copy(path, backup)
    try:
        with open(path, "w") as handle:
            handle.write(source.replace(mutant["from"], mutant["to"]))
        build = subprocess.run(["swift", "build", "--build-tests"], cwd=ROOT, capture_output=True, text=True)
        if build.returncode != 0:
            return "stale", "the mutant does not build"
        test = subprocess.run(
            ["swift", "test", "--skip-build", "--filter", mutant["tests"]], cwd=ROOT, capture_output=True, text=True)
        output = (test.stdout + test.stderr).splitlines()
        failed = [line for line in output if line.startswith('✘ Test "')]
        if test.returncode != 0:
            return "killed", failed[0] if failed else ""
        # A filter that selects nothing passes too: that is a mutant no test can kill, not a survivor.
        if not any(re.search(r"Test run with [1-9]|Executed [1-9]", line) for line in output):
            return "stale", "the filter %r selects no test" % mutant["tests"]
        return "survived", ""
    finally:
        shutil.copy(backup, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="only the mutants whose file or text contains TEXT")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--start", type=int, default=0, help="skip the first N mutants (of those selected): new ones go last")
    parser.add_argument(
        "--check", action="store_true",
        help="only check that every mutant still applies (its text occurs exactly once), without building: a second")
    arguments = parser.parse_args()
    with open(os.path.join(ROOT, "scripts", "mutants.json")) as handle:
        mutants = json.load(handle)
    if arguments.only:
        mutants = [m for m in mutants if arguments.only in m["file"] or arguments.only in m["from"]]
    mutants = mutants[arguments.start:]
    if arguments.check:
        # A mutant whose text was edited away tests nothing; a run that starts past it (--start, --only) never says so.
        stale = 0
        for index, mutant in enumerate(mutants):
            path = os.path.join(ROOT, mutant["file"])
            count = 0
            if os.path.exists(path):
                with open(path) as handle:
                    count = handle.read().count(mutant["from"])
            if count != 1:
                stale += 1
                print("stale   %2d %s: the text to replace occurs %d times: update scripts/mutants.json" % (
                    index, mutant["file"], count))
        print("%d mutants, %d stale" % (len(mutants), stale))
        return 1 if stale else 0
    if arguments.list:
        for index, mutant in enumerate(mutants):
            print("%2d %s: %s" % (index, mutant["file"], mutant["from"].strip().splitlines()[0]))
        return 0
    problems = 0
    with tempfile.TemporaryDirectory() as scratch:
        backup = os.path.join(scratch, "backup")
        for index, mutant in enumerate(mutants):
            outcome, detail = run(mutant, backup)
            expected = "survived" if "equivalent" in mutant else "killed"
            mark = "ok" if outcome == expected else "PROBLEM"
            if outcome != expected and not (outcome == "killed" and expected == "survived"):
                problems += 1
            first_line = mutant["from"].strip().splitlines()[0]
            print("%-7s %2d %-8s %s: %s" % (mark, index, outcome, mutant["file"], first_line), flush=True)
            if outcome == "killed" and expected == "killed":
                print("        %s" % (detail[:160] or "no test reported failing: the run itself failed (a crash?)"))
            if outcome == "killed" and expected == "survived":
                print("        marked equivalent, yet killed: the reason no longer holds (%s)" % detail[:160])
            elif outcome == "survived" and expected == "killed":
                print("        no test fails: add one that pins this behaviour down")
            elif outcome == "stale":
                print("        %s: update scripts/mutants.json" % detail)
    # The last build was a mutant's: build the restored tree, so `swift test --skip-build` tests what is on disk.
    if mutants and subprocess.run(["swift", "build", "--build-tests"], cwd=ROOT, capture_output=True).returncode != 0:
        print("the restored tree does not build")
        problems += 1
    print("%d mutants, %d problems" % (len(mutants), problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
