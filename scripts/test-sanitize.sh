#!/usr/bin/env bash
# Runs test suites under ThreadSanitizer and AddressSanitizer (`make test-sanitize`), each in its own build
# directory. Any report fails the run (halt_on_error; a leak outside the suppressions in
# scripts/sanitizers/lsan.supp fails it too).
#
#   scripts/test-sanitize.sh                 # the default suites below (what CI runs)
#   SANITIZE_TSAN_FILTER=. SANITIZE_ASAN_FILTER=. scripts/test-sanitize.sh   # every test (slow: about 1 h here)
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}

# Threads and processes meeting: live views and their delivery, suspend/resume, the commit watchers, the
# shared header's locks and slots, the platform layer's waits and child processes, the sync engine's races.
tsan_filter=${SANITIZE_TSAN_FILTER:-'ViewTests|ViewCallbackTests|ViewCloseTests|PeerViewsTests|PeerViewsRandomTests|PostboxTests|SuspendResumeTests|EmbeddingTests|SuspendTests|SharedHeaderTests|BoxwoodPlatformTests|ResetRaceTests|UpdateReducerTests|HostileServerTests|SyncNotificationTests|OutboundActionTests|ChannelPollingTests|DraftSyncTests|SyncDataItemTests|BackgroundCheckpointTests|CheckpointProgressTests|WrittenOnceValueTests'}
# Bytes from files and the wire: decoding, validation, the LZ4 codec. (The fuzzers' corpora run under
# AddressSanitizer in `make fuzz-smoke`; their regression test only spawns processes, through Foundation's Process,
# whose own leaks are not ours.)
asan_filter=${SANITIZE_ASAN_FILTER:-'SemanticsTests|HostileKeyTests|HostileFileTests|BadFileTests|WALDamageTests|HeaderHintTests|MetaDamageTests|CorruptionTests|BoxwoodLZ4Tests|CoderTests|MalformedBytesTests|CodableBridgeTests|ExtentTests|WrittenOnceValueTests'}

echo "== ThreadSanitizer: $tsan_filter"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  "$swift" test --sanitize=thread --scratch-path .build-tsan --filter "$tsan_filter"
echo "== AddressSanitizer: $asan_filter"
ASAN_OPTIONS="halt_on_error=1 detect_leaks=1" LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp print_suppressions=0" \
  "$swift" test --sanitize=address --scratch-path .build-asan --filter "$asan_filter"
echo "sanitizers: no reports"
