#!/usr/bin/env bash
# Runs every test: prepares the pinned Python test peers in .venv, builds with tests, fails on any warning in this
# package's own code, then runs the whole suite. Extra arguments go to `swift test` (e.g. --filter AppSync).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r Tests/PythonPeers/requirements.txt

export VORTEX_PYTHON="$PWD/.venv/bin/python"
# Peer-backed tests (botocore, and later strawberry) must run, not skip.
export VORTEX_REQUIRE_PEERS=1

build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
if grep -E "^$PWD/(Sources|Tests)/.*warning:" "$build_log"; then
  echo "error: the build has warnings in this package's code (see above)" >&2
  exit 1
fi
swift test --skip-build "$@"
