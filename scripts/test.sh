#!/usr/bin/env bash
# Runs every test: prepares the pinned Python test peers in .venv, builds with tests, fails on any warning in this
# package's own code, then runs the whole suite. Extra arguments go to `swift test` (e.g. --filter AppSync).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Python test peers, and the environment that makes peer-backed tests run instead of skipping.
source scripts/lib/test-env.sh

# Formatting is part of the build: .swift-format is the project's style.
swift format lint --strict -r Sources Tests Benchmarks Package.swift

build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
if grep -E "^$PWD/(Sources|Tests|Benchmarks)/.*warning:" "$build_log"; then
  echo "error: the build has warnings in this package's code (see above)" >&2
  exit 1
fi
if [ $# -gt 0 ]; then
  swift test --skip-build "$@"
else
  # The chaos and fuzz suites load both cores for half a minute each, and the fuzz suite asserts how fast every link
  # is replaced: each runs on its own, not beside 370 other tests with real-time timeouts.
  swift test --skip-build --skip 'ChaosTests|FuzzTests'
  swift test --skip-build --filter ChaosTests
  swift test --skip-build --filter FuzzTests
fi
