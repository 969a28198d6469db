# Sourced by scripts/test.sh and scripts/soak.sh: the groups the whole suite runs in, one `swift test` each, one after
# another. Swift Testing starts every test of a run at once, and on 2 cores 580 tests with real sockets, Python peers
# and real-time deadlines starve each other (tests that pass alone timed out together). The chaos suites (ChaosTests and
# StoreChaosTests: the filter matches both, and the integration group skips both) and the fuzz suite load both cores
# for a minute or more each, and the fuzz suite asserts how fast every link is replaced: each runs on its own.
# Every test target is named here; a new target must join a group.
#
# test_group_names[i] names group i; test_group_args[i] is its `swift test` filter (words split on spaces).
test_group_names=(core transports notifier local-backend integration chaos fuzz)
test_group_args=(
  "--filter SubscriberCoreTests|WebSocketNIOTests|WebSocketURLSessionTests|VortexVocabularyTests"
  "--filter GraphQLTransportTests|AppSyncEventsTransportTests"
  "--filter BackendNotifierTests|CompositionTests|RealtimeStoreTests|RealtimePreflightTests"
  "--filter LocalBackendTests"
  "--filter IntegrationTests --skip ChaosTests"
  "--filter ChaosTests"
  "--filter FuzzTests"
)

# A hang (an unbounded `for await` over a stream that never ends, a deadlock) would hang the whole run, CI included: every
# `swift test` of a group runs under `timeout`, which ends its whole process group (the test process and any peer it
# started) and fails the group. The bound is VORTEX_TEST_GROUP_TIMEOUT seconds, default 600: the slowest group, chaos,
# takes about 130 s, plain, under the soak's burners and under both sanitizers alike (its length is set by its own
# clock), so 600 s is over four times anything a passing group needs.
test_group_timeout="${VORTEX_TEST_GROUP_TIMEOUT:-600}"

# Runs `swift test` with the arguments given, bounded by test_group_timeout; status 124 (and a line on stderr naming the
# bound) when the bound ended it.
# macOS has no `timeout` unless coreutils is installed (as `gtimeout`); without either, runs are not bounded.
bounded_swift_test() {
  local status=0 timeout_command
  timeout_command=$(command -v timeout || command -v gtimeout || true)
  if [ -z "$timeout_command" ]; then
    echo "warning: no timeout command (coreutils): swift test runs without the ${test_group_timeout} s bound" >&2
    swift test "$@" || return $?
    return 0
  fi
  "$timeout_command" --kill-after=30 "$test_group_timeout" swift test "$@" || status=$?
  if [ "$status" -eq 124 ]; then
    echo "error: swift test $* did not end within ${test_group_timeout} s (VORTEX_TEST_GROUP_TIMEOUT) and was stopped: a hang" >&2
  elif [ "$status" -eq 137 ]; then
    echo "error: swift test $* was killed: past the bound and deaf to SIGTERM for 30 s, or by the system" >&2
  fi
  return "$status"
}
