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

# The stelvio peer needs Python 3.12 or later and websockets < 17: an environment of its own, .venv-stelvio.
stelvio_python=""
for candidate in python3.13 python3.12 python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 \
    && "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
    stelvio_python="$candidate"
    break
  fi
done
if [ -n "$stelvio_python" ]; then
  if [ ! -x .venv-stelvio/bin/python ]; then
    "$stelvio_python" -m venv .venv-stelvio
  fi
  .venv-stelvio/bin/pip install --quiet --disable-pip-version-check -r Tests/PythonPeers/stelvio-requirements.txt
  export VORTEX_STELVIO_PYTHON="$PWD/.venv-stelvio/bin/python"
else
  echo "warning: no Python 3.12 or later found: the stelvio peer is not installed, and its tests fail below" >&2
fi
# Peer-backed tests (botocore, strawberry, stelvio) must run, not skip.
export VORTEX_REQUIRE_PEERS=1

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
