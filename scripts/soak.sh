#!/usr/bin/env bash
# Soak: runs the test suite N times in a row (default 10) while a CPU burner keeps every core busy, and reports the
# failures per test. A test that fails now and then under load shows up here, with how often. Exit status 1 when any
# round failed (a test failed, or `swift test` ended badly without naming one: a crash or a hang cut short).
#
#   scripts/soak.sh                      10 rounds of the whole suite, as scripts/test.sh runs it
#   scripts/soak.sh -n 3 --filter Fan    3 rounds of the tests matching a `swift test --filter` pattern
#   scripts/soak.sh --no-load            without the CPU burners
#   scripts/soak.sh --scale 1            test deadlines unstretched (default 3)
#
# The burners make a test take many times its own time, and Swift Testing starts a group's tests at once on as many
# threads as there are cores: real-time deadlines, which only bound a hang, are stretched by VORTEX_TEST_TIME_SCALE
# (default 3 here, as scripts/sanitize.sh stretches them), or a 20 s wait runs out while its test queues.
#
# It builds once (`swift build --build-tests`), then each round runs `swift test --skip-build`: the whole suite in the
# groups of scripts/lib/test-groups.sh (as scripts/test.sh does), or just the --filter pattern (no spaces in it).
# Every round's output is kept in .build/soak/round-<n>-<part>.log.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=10
filter=""
load=1
scale=3
while [ $# -gt 0 ]; do
  case "$1" in
    -n | --rounds) rounds="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    --no-load) load=0; shift ;;
    --scale) scale="$2"; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$scale" =~ ^[1-9][0-9]*$ ]]; then
  echo "soak.sh: --scale takes a whole number ≥ 1, got $scale" >&2
  exit 2
fi
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "soak.sh: -n takes a whole number of rounds ≥ 1, got $rounds" >&2
  exit 2
fi

source scripts/lib/test-env.sh
export VORTEX_TEST_TIME_SCALE="$scale"
swift build --build-tests

logs=.build/soak
rm -rf "$logs"
mkdir -p "$logs"
failures="$logs/failures.txt"
: >"$failures"

# One burner per core, ended (only these, by their ids) however the script ends.
burners=()
stop_burners() {
  if [ ${#burners[@]} -gt 0 ]; then kill "${burners[@]}" 2>/dev/null || true; fi
}
trap stop_burners EXIT
if [ "$load" = 1 ]; then
  cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
  for _ in $(seq "$cores"); do
    (while :; do :; done) &
    burners+=("$!")
  done
  echo "soak: $rounds round(s), $cores CPU burner(s) running"
else
  echo "soak: $rounds round(s), no CPU burner"
fi

# The parts of one round: a name, and the `swift test` filter (the groups of scripts/test.sh, or the --filter pattern).
# Each run is bounded as in scripts/test.sh (a hang ends as a failed round, not as a soak that never ends).
source scripts/lib/test-groups.sh
if [ -n "$filter" ]; then
  names=(filtered); group_args=("--filter $filter")
else
  names=("${test_group_names[@]}"); group_args=("${test_group_args[@]}")
fi

# The failing tests a `swift test` log names, one per line: Swift Testing's "✘ Test <name> failed after …" (the name as
# it prints it, with " with N test cases" dropped) and XCTest's "Test Case '<name>' failed".
failed_tests() {
  sed -nE \
    -e '/^✘ Test run with /d' \
    -e 's/^✘ Test (.*) failed after [0-9.]+ seconds.*/\1/p' \
    -e "s/^Test Case '(.*)' failed .*/\1/p" "$1" |
    sed -E 's/ with [0-9]+ test cases?$//' | sort -u
}

failed_rounds=0
for round in $(seq "$rounds"); do
  round_failed=0
  for index in "${!names[@]}"; do
    name="${names[$index]}"
    log="$logs/round-$round-$name.log"
    status=0
    read -r -a args <<<"${group_args[$index]}"
    bounded_swift_test --skip-build "${args[@]}" >"$log" 2>&1 || status=$?
    named=$(failed_tests "$log")
    if [ -n "$named" ]; then
      while IFS= read -r test; do echo "$test|$round|$log" >>"$failures"; done <<<"$named"
      round_failed=1
    elif [ "$status" -ne 0 ]; then
      echo "(swift test $name exited $status naming no failed test: a crash or a hang; see the log)|$round|$log" >>"$failures"
      round_failed=1
    fi
    echo "round $round/$rounds $name: $([ "$status" -eq 0 ] && echo passed || echo "FAILED (status $status)")"
  done
  failed_rounds=$((failed_rounds + round_failed))
done

echo
if [ ! -s "$failures" ]; then
  echo "soak: $rounds round(s), no failure"
  exit 0
fi
echo "soak: $failed_rounds of $rounds round(s) failed. Failures per test (count, test, rounds):"
cut -d'|' -f1 "$failures" | sort | uniq -c | sort -rn | while read -r count test; do
  rounds_of_test=$(awk -F'|' -v t="$test" '$1 == t { print $2 }' "$failures" | sort -n | uniq | paste -sd, -)
  printf '%5d  %s  (rounds %s)\n' "$count" "$test" "$rounds_of_test"
done
echo "logs: $logs"
exit 1
