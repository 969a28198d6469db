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
