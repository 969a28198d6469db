#!/usr/bin/env bash
# Runs every test: prepares the pinned Python test peers in .venv, builds with tests, fails on any warning in this
# package's own code, then runs the whole suite. Extra arguments go to `swift test` (e.g. --filter AppSync).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Python test peers, and the environment that makes peer-backed tests run instead of skipping.
source scripts/lib/test-env.sh

# Formatting is part of the build: .swift-format is the project's style.
swift format lint --strict -r Sources Tests Benchmarks Package.swift

# Linux's compiler checks no availability: an Apple API newer than the package's platforms, used unguarded, builds here
# and breaks `swift build` on a Mac. The check tests itself first, so a broken check cannot pass everything.
python3 scripts/check-apple-availability.py --self-test
python3 scripts/check-apple-availability.py

# The groups, and the bound on each run of `swift test` (a hang fails the run instead of hanging it).
source scripts/lib/test-groups.sh

build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
if grep -E "^$PWD/(Sources|Tests|Benchmarks)/.*warning:" "$build_log"; then
  echo "error: the build has warnings in this package's code (see above)" >&2
  exit 1
fi
if [ $# -gt 0 ]; then
  bounded_swift_test --skip-build "$@"
else
  # docs/api.md lists every public symbol; the whole run fails when it no longer matches the sources (about 40 s on
  # the build just made). The listing is Linux's: on Apple platforms more is public (SystemNetworkPathMonitor).
  if [ "$(uname -s)" = Linux ]; then bash scripts/api-listing.sh --check; fi
  # In groups, one after another (scripts/lib/test-groups.sh says why).
  status=0
  for index in "${!test_group_names[@]}"; do
    read -r -a group_args <<<"${test_group_args[$index]}"
    echo "== ${test_group_names[$index]}: swift test ${test_group_args[$index]}"
    bounded_swift_test --skip-build "${group_args[@]}" || status=1
  done
  exit "$status"
fi
