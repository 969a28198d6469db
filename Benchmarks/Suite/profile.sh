#!/usr/bin/env bash
# CPU profile of one benchmark client against the firehose: the top 20 symbols by self time, demangled.
#   Benchmarks/Suite/profile.sh [appsync|graphql|notifier-appsync|notifier-graphql|bare-appsync|bare-graphql] [COUNT]
# Needs perf (Debian: linux-perf) and the release build (scripts/bench.sh builds it). Samples the software clock
# (cpu-clock), which works where hardware counters are not exposed (virtual machines). Writes .build/perf-CLIENT.data.
set -euo pipefail
cd "$(dirname "$0")/../.."
client=${1:-appsync}
count=${2:-200000}
case "$client" in
  bare-*|notifier-*) args=(--client "${client%%-*}" --protocol "${client#*-}") ;;
  *) args=(--client "$client") ;;
esac
fifo=$(mktemp -u)
mkfifo "$fifo"
python3 Benchmarks/Suite/firehose.py --count "$count" > "$fifo" &
firehose=$!
trap 'kill $firehose 2>/dev/null; rm -f "$fifo"' EXIT
port=$(head -1 "$fifo" | python3 -c 'import json,sys; print(json.load(sys.stdin)["port"])')
case "$client" in
  *graphql) endpoint="ws://127.0.0.1:$port/graphql" ;;
  *) endpoint="http://127.0.0.1:$port/event" ;;
esac
data=".build/perf-$client.data"
perf record -e cpu-clock -F 1999 -g -o "$data" -- \
  .build/release/RealtimeBench "${args[@]}" --endpoint "$endpoint" --count "$count" 2>/dev/null
echo
echo "Top 20 symbols by self time ($client, $count events):"
perf report -i "$data" --stdio --no-children -g none --sort dso,symbol --percent-limit 0.5 2>/dev/null \
  | grep -E '^ +[0-9]' | head -20 | swift demangle --simplified | sed 's/ *$//' | cut -c1-200
