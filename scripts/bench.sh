#!/usr/bin/env bash
# The benchmark suite of docs/performance.md: builds the client and the CLI, prepares the pinned Python peers in
# .venv (as scripts/test.sh does), then runs Benchmarks/Suite/bench.py and prints its report (Markdown) on stdout.
#
#   scripts/bench.sh                 full run, release build: throughput, RSS, latency, then idle wake-ups and the
#                                    lifecycle figures (about 35 minutes on 2 cores; the first build takes longer)
#   scripts/bench.sh --smoke         short run on the debug build (after scripts/test.sh: no extra build; under a minute)
#   scripts/bench.sh --smoke --release
#   scripts/bench.sh -- --only appsync bare-appsync --rounds 5    (arguments after -- go to bench.py)
#   scripts/bench.sh --idle          idle wake-ups a minute of `watch` on both transports against `serve` at the
#                                    service's cadence, above a bare Swift process (release; about 6 minutes)
#   scripts/bench.sh --idle -- --server-cli /tmp/before/vortex-realtime --cli /tmp/before/vortex-realtime
#                                    (arguments after -- go to Benchmarks/Suite/idle.py: measure other binaries)
#   scripts/bench.sh --lifecycle     time to detect, reconnect and be live again after each lifecycle event, both
#                                    transports (release; about 18 minutes); arguments after -- go to LifecycleBench
#   scripts/bench.sh --sessions      the heap each ended session keeps: 1,500 stacks made, observed until live and
#                                    shut down, AppSync (release; about a minute); arguments after -- go to
#                                    `LifecycleBench sessions` (--drop, --transports appsync graphql, --settle 70)
#
# Exit status 0 when every client received every event; the issue's targets are reported, never enforced.
set -euo pipefail
cd "$(dirname "$0")/.."

smoke=0
mode=suite
configuration=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --idle) mode=idle ;;
    --lifecycle) mode=lifecycle ;;
    --sessions) mode=sessions ;;
    --release) configuration=release ;;
    --debug) configuration=debug ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/bench.sh [--smoke|--idle|--lifecycle|--sessions] [--release|--debug] [-- arguments]" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$configuration" ]; then
  if [ "$smoke" = 1 ]; then configuration=debug; else configuration=release; fi
fi
bin=".build/$configuration"

idle() {
  swift build -c "$configuration" --product vortex-realtime >&2
  swift build -c "$configuration" --product LifecycleBench >&2
  python3 Benchmarks/Suite/idle.py --cli "$bin/vortex-realtime" --bare "$bin/LifecycleBench" "$@"
}

lifecycle() {
  swift build -c "$configuration" --product LifecycleBench >&2
  echo
  echo "## Lifecycle: time to detect, reconnect and be live again (LifecycleBench, $configuration build)"
  echo
  "$bin/LifecycleBench" lifecycle "$@"
}

sessions() {
  swift build -c "$configuration" --product LifecycleBench >&2
  echo
  echo "## Heap kept per ended session (LifecycleBench sessions, $configuration build)"
  echo
  "$bin/LifecycleBench" sessions --sessions 1500 --every 500 --transports appsync "$@"
}

case "$mode" in
  idle) idle ${extra[@]+"${extra[@]}"}; exit ;;
  sessions) sessions ${extra[@]+"${extra[@]}"}; exit ;;
  lifecycle) lifecycle ${extra[@]+"${extra[@]}"}; exit ;;
esac

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r Tests/PythonPeers/requirements.txt

swift build -c "$configuration" --product RealtimeBench >&2
swift build -c "$configuration" --product vortex-realtime >&2

args=(--configuration "$configuration" --python "$PWD/.venv/bin/python")
if [ "$smoke" = 1 ]; then args+=(--smoke); fi
status=0
.venv/bin/python Benchmarks/Suite/bench.py "${args[@]}" ${extra[@]+"${extra[@]}"} || status=$?
if [ "$smoke" = 0 ] && [ ${#extra[@]} -eq 0 ]; then
  idle
  lifecycle
fi
exit "$status"
