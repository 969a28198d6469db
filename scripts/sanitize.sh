#!/usr/bin/env bash
# Runs the tests under the thread sanitizer and/or the address sanitizer (with LeakSanitizer, on by default on Linux),
# each build in a scratch path of its own (.build-tsan, .build-asan) so the ordinary build stays as it is. Real-time test
# deadlines are stretched by VORTEX_TEST_TIME_SCALE (RealtimeTesting's TestTime) to tolerate the slowdown. Prints every
# sanitizer report's headline; exit status 1 when a test failed or a sanitizer reported anything.
# LeakSanitizer reads scripts/lsan-suppressions.txt: what it reports that is no leak of this package (each with its reason).
#
#   scripts/sanitize.sh                                 both sanitizers, the whole suite (in scripts/test.sh's groups)
#   scripts/sanitize.sh thread --filter 'SubscriberCoreTests|GraphQLTransportTests'
#   scripts/sanitize.sh address --skip 'ChaosTests|FuzzTests'
#
# Options: `thread`, `address` or `both` (the default); --filter/--skip PATTERN as `swift test` takes them; --scale N, the
# deadline factor (default 10 under the thread sanitizer, 4 under the address sanitizer). Logs: <scratch path>/sanitize-*.log.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=(thread address)
selection=()
scale=""
while [ $# -gt 0 ]; do
  case "$1" in
    thread | address) sanitizers=("$1"); shift ;;
    both) sanitizers=(thread address); shift ;;
    --filter | --skip) selection+=("$1" "$2"); shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sanitize.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

source scripts/lib/test-env.sh

# Keep going after a report (so one run lists them all); the stacks of both threads of a race.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
# What the leak check reports that is no leak of this package's code, each entry with its reason; the suppressions used
# are listed at the end of each log.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=1}"

failed=0
for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in
    thread) scratch=.build-tsan; factor="${scale:-10}" ;;
    address) scratch=.build-asan; factor="${scale:-4}" ;;
  esac
  export VORTEX_TEST_TIME_SCALE="$factor"
  echo "== $sanitizer sanitizer ($scratch, test deadlines x$factor)"
  swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"

  # The parts: the selection given, or the whole suite in the groups scripts/test.sh runs it in (the sanitizers'
  # slowdown makes tests that start together starve each other even more than on a plain build).
  # Each run is bounded as in scripts/test.sh (a hang fails the run instead of hanging it).
  source scripts/lib/test-groups.sh
  runs=()
  if [ ${#selection[@]} -gt 0 ]; then
    runs=("selected")
  else
    runs=("${test_group_names[@]}")
  fi
  for index in "${!runs[@]}"; do
    run="${runs[$index]}"
    if [ "$run" = selected ]; then
      arguments=("${selection[@]}")
    else
      read -r -a arguments <<<"${test_group_args[$index]}"
    fi
    log="$scratch/sanitize-$run.log"
    status=0
    bounded_swift_test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${arguments[@]}" >"$log" 2>&1 || status=$?
    # Reports start a line, after the process id for the address and leak sanitizers ("==1234==ERROR: …").
    reports=$(grep -cE '^(==[0-9]+==)?(WARNING: ThreadSanitizer|ERROR: (AddressSanitizer|LeakSanitizer)):' "$log" || true)
    summary=$(grep -E '^(✔|✘) Test run with' "$log" | tail -1 || true)
    echo "$sanitizer $run: status $status, $reports sanitizer report(s); ${summary:-no test summary (see $log)}"
    if [ "$reports" -gt 0 ]; then
      grep -E '^(==[0-9]+==)?(WARNING: ThreadSanitizer|ERROR: (AddressSanitizer|LeakSanitizer)|SUMMARY: (Thread|Address|Leak)Sanitizer):' "$log" |
        sed -E 's/^==[0-9]+==//' |
        sort | uniq -c | sort -rn | head -20
    fi
    if [ "$status" -ne 0 ] || [ "$reports" -gt 0 ]; then failed=1; fi
  done
done
exit "$failed"
