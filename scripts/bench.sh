#!/usr/bin/env bash
# The benchmark suite of docs/performance.md: builds the client and the CLI, prepares the pinned Python peers in
# .venv (as scripts/test.sh does), then runs Benchmarks/Suite/bench.py and prints its report (Markdown) on stdout.
#
#   scripts/bench.sh                 full run, release build (about 10 minutes on 2 cores; the first build takes longer)
#   scripts/bench.sh --smoke         short run on the debug build (after scripts/test.sh: no extra build; under a minute)
#   scripts/bench.sh --smoke --release
#   scripts/bench.sh -- --only appsync bare-appsync --rounds 5    (arguments after -- go to bench.py)
#
# Exit status 0 when every client received every event; the issue's targets are reported, never enforced.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
configuration=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --release) configuration=release ;;
    --debug) configuration=debug ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/bench.sh [--smoke] [--release|--debug] [-- bench.py arguments]" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$configuration" ]; then
  if [ "$smoke" = 1 ]; then configuration=debug; else configuration=release; fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r Tests/PythonPeers/requirements.txt

swift build -c "$configuration" --product RealtimeBench >&2
swift build -c "$configuration" --product vortex-realtime >&2

args=(--configuration "$configuration" --python "$PWD/.venv/bin/python")
if [ "$smoke" = 1 ]; then args+=(--smoke); fi
exec .venv/bin/python Benchmarks/Suite/bench.py "${args[@]}" ${extra[@]+"${extra[@]}"}
