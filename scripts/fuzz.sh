#!/usr/bin/env bash
# Builds and runs Boxwood's libFuzzer targets (Fuzz/README.md).
#
#   scripts/fuzz.sh build                       build the fuzzers (release, -sanitize=fuzzer,address) into .build-fuzz
#   scripts/fuzz.sh smoke [SECONDS] [TARGET...] build, then run each target SECONDS (default 20) from its seeds
#   scripts/fuzz.sh run [SECONDS] [TARGET...]   build, then run each target SECONDS (default 600), growing the
#                                               corpus in .build-fuzz/corpus/<target>, going on after a crash
#                                               (libFuzzer fork mode), and minimizing every crash
#   scripts/fuzz.sh minimize TARGET CRASH       minimize a crash input (libFuzzer -minimize_crash=1)
#   scripts/fuzz.sh targets                     list the targets
#
# Seeds and crash reproducers live in Fuzz/Corpus/<target>/ (read, never written by a run). New inputs go to
# .build-fuzz/corpus/<target>/, crash artifacts to .build-fuzz/artifacts/<target>/ (with minimized-* beside each).
# A summary of each run (executions, executions/s, crashes) is appended to .build-fuzz/fuzz-summary.txt.
#
# `smoke` skips (exit 0, with a message) when the toolchain cannot build a libFuzzer binary; it fails when a
# target crashes. Environment: SWIFT (default swift), FUZZ_SCRATCH (default .build-fuzz), FUZZ_BUILD=0 (`run`
# without building first), BOXWOOD_FUZZ_FILES=memory|disk (where the database targets' files live; see
# Fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
ROOT=$(pwd)
SCRATCH=${FUZZ_SCRATCH:-.build-fuzz}
# FUZZ_SCRATCH may be absolute (a build outside the checkout) or relative to it.
case "$SCRATCH" in /*) ;; *) SCRATCH="$ROOT/$SCRATCH" ;; esac
BINARY="$SCRATCH/release/boxwood-fuzz"
# The Swift runtime's backtracer would read memory ASan has poisoned; libFuzzer prints the stack itself.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

build() {
    # lld, not gold: gold fails ("internal error in format_file_lineno") linking libFuzzer with a Swift main.
    "$SWIFT" build -c release --product boxwood-fuzz --scratch-path "$SCRATCH" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DBOXWOOD_LIBFUZZER -Xswiftc -g \
        -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld
}

all_targets() {
    "$BINARY" --list | cut -f1
}

# run_target TARGET SECONDS WORK_CORPUS ARTIFACTS [KEEP_GOING] -> 0 when no crash
# KEEP_GOING=1 runs libFuzzer in fork mode (one child at a time) that records a crash and goes on fuzzing, so one
# known bug does not end a long run.
run_target() {
    local target=$1 seconds=$2 work=$3 artifacts=$4 keep_going=${5:-0}
    local seeds="$ROOT/Fuzz/Corpus/$target"
    mkdir -p "$work" "$artifacts"
    local log="$artifacts/fuzz-$(date +%Y%m%d-%H%M%S).log"
    touch "$log.start"
    local options
    options=$("$BINARY" "$target" --options)
    echo "== $target: ${seconds}s (log $log)"
    local status=0
    # Relative paths in the target's options (dictionaries) are relative to Fuzz/.
    # shellcheck disable=SC2086
    local fork=()
    [ "$keep_going" = 1 ] && fork=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    (cd "$ROOT/Fuzz" && "$BINARY" "$target" $options "${fork[@]}" -max_total_time="$seconds" -timeout=30 \
        -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "$seeds") >"$log" 2>&1 || status=$?
    local runs='' rate='' cov crashes=0
    if [ "$keep_going" = 1 ]; then
        # Fork mode reports "#<runs>: cov: C ft: F corp: N exec/s R oom/timeout/crash: a/b/c time: Ts ...".
        local last
        last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
        runs=$(echo "$last" | sed -nE 's/^#([0-9]+):.*/\1/p')
        local elapsed
        elapsed=$(echo "$last" | sed -nE 's/.* time: ([0-9]+)s.*/\1/p')
        [ -n "$runs" ] && [ -n "$elapsed" ] && [ "$elapsed" -gt 0 ] && rate=$((runs / elapsed))
        cov=$(echo "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+' || true)
        crashes=$(find "$artifacts" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
            ! -name '*.triage' ! -name '*.log' -newer "$log.start" 2>/dev/null | wc -l)
        [ "$crashes" -gt 0 ] && status=1
    else
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
        rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
        cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || true)
    fi
    local line
    line="$(date -u +%FT%TZ) $target seconds=$seconds executions=${runs:-?} exec/s=${rate:-?} ${cov:-} new-artifacts=$crashes status=$status"
    echo "$line" | tee -a "$SCRATCH/fuzz-summary.txt"
    if [ "$status" -ne 0 ] && [ "$keep_going" != 1 ] && known_crash "$log"; then
        echo "   $target hit a known crash (signature $KNOWN in Fuzz/Corpus/known-crashes.txt); not a failure"
        return 0
    fi
    if [ "$status" -ne 0 ]; then
        if [ "$keep_going" = 1 ]; then
            echo "!! $target: $crashes new artifact(s); triage:"
        else
            echo "!! $target stopped with status $status; the end of its log:"
            grep -E 'ERROR|SUMMARY|Fatal error|#[0-9]+ 0x|Test unit written|precondition|Precondition' "$log" | head -40 || true
        fi
        minimize_new "$target" "$artifacts"
        # A run that only met known crashes passes.
        [ "$UNKNOWN" -gt 0 ] && return 1
        echo "   $target: only known crashes"
    fi
    return 0
}

# known_crash LOG: true when the crash in LOG has a signature listed in Fuzz/Corpus/known-crashes.txt (sets KNOWN).
known_crash() {
    local signature
    KNOWN=""
    while read -r _ signature _; do
        [ -n "$signature" ] || continue
        if grep -q -- "$signature" "$1"; then KNOWN=$signature; return 0; fi
    done < <(grep -v '^[[:space:]]*#' "$ROOT/Fuzz/Corpus/known-crashes.txt" 2>/dev/null || true)
    return 1
}

# Triage of every crash-*/leak-*/timeout-*/oom-* artifact not seen before: replays it; a crash with a known
# signature (Fuzz/Corpus/known-crashes.txt) is only noted; of the others, the first artifact of each crashing
# location (the first Swift frame of its stack) is minimized to minimized-<artifact>.
minimize_new() {
    local target=$1 artifacts=$2 crash replay frame
    local -A seen=()
    UNKNOWN=0
    for crash in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
        [ -e "$crash" ] || continue
        case "$crash" in *.triage | *.log) continue ;; esac
        [ -e "$crash.triage" ] && continue
        replay="$crash.triage"
        # shellcheck disable=SC2046
        (cd "$ROOT/Fuzz" && "$BINARY" "$target" $("$BINARY" "$target" --options) -timeout=30 "$crash") >"$replay" 2>&1 || true
        if known_crash "$replay"; then
            echo "   $(basename "$crash"): known crash ($KNOWN)"
            continue
        fi
        UNKNOWN=$((UNKNOWN + 1))
        # The first frame in a Swift module (`$s<digits><module>...`; `$ss...` is the standard library).
        frame=$(grep -m1 -oE ' in \$s[0-9][A-Za-z0-9_]*' "$replay" | sed 's/^ in //' || true)
        if [ -n "$frame" ] && [ -n "${seen[$frame]:-}" ]; then
            echo "   $(basename "$crash"): same location as ${seen[$frame]} ($frame)"
            continue
        fi
        [ -n "$frame" ] && seen[$frame]=$(basename "$crash")
        local minimized="$artifacts/minimized-$(basename "$crash")"
        minimize "$target" "$crash" "$minimized" || true
        echo "   reproducer: $crash (${frame:-no Swift frame})"
        [ -e "$minimized" ] && echo "   minimized:  $minimized ($(wc -c <"$minimized") bytes)"
    done
}

# minimize TARGET CRASH OUTPUT
minimize() {
    local target=$1 crash output options
    crash=$(realpath -m "$2")
    output=$(realpath -m "$3")
    options=$("$BINARY" "$target" --options)
    # shellcheck disable=SC2086
    (cd "$ROOT/Fuzz" && "$BINARY" "$target" $options -minimize_crash=1 -max_total_time=120 -timeout=30 \
        -exact_artifact_path="$output" "$crash") >"$output.log" 2>&1 || true
}

command=${1:-}
shift || true
case "$command" in
    build)
        build
        ;;
    targets)
        build >/dev/null
        all_targets
        ;;
    smoke)
        seconds=${1:-20}
        shift || true
        mkdir -p "$SCRATCH"
        if ! build >"$SCRATCH/build.log" 2>&1; then
            echo "fuzz-smoke: SKIPPED — the fuzzers do not build with this toolchain (swiftc -sanitize=fuzzer,address);"
            echo "            see $SCRATCH/build.log"
            exit 0
        fi
        targets=("$@")
        [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(all_targets)
        if [ ${#targets[@]} -eq 0 ]; then
            echo "fuzz-smoke: FAILED — $BINARY lists no targets (see $SCRATCH/build.log)"
            exit 1
        fi
        failed=()
        for target in "${targets[@]}"; do
            # A fresh corpus each time: the smoke run starts from the seeds and leaves nothing behind.
            work="$SCRATCH/smoke/$target"
            rm -rf "$work"
            run_target "$target" "$seconds" "$work" "$SCRATCH/smoke-artifacts/$target" || failed+=("$target")
        done
        if [ ${#failed[@]} -gt 0 ]; then
            echo "fuzz-smoke: FAILED — crashes in: ${failed[*]} (artifacts in $SCRATCH/smoke-artifacts/)"
            exit 1
        fi
        echo "fuzz-smoke: ok (${#targets[@]} targets, ${seconds}s each)"
        ;;
    run)
        seconds=${1:-600}
        shift || true
        # FUZZ_BUILD=0 runs the binary already built (long background runs while the sources are being edited).
        [ "${FUZZ_BUILD:-1}" = 0 ] || build
        targets=("$@")
        [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(all_targets)
        if [ ${#targets[@]} -eq 0 ]; then
            echo "fuzz: $BINARY lists no targets (build it: scripts/fuzz.sh build)"
            exit 1
        fi
        failed=()
        for target in "${targets[@]}"; do
            run_target "$target" "$seconds" "$SCRATCH/corpus/$target" "$SCRATCH/artifacts/$target" 1 || failed+=("$target")
        done
        if [ ${#failed[@]} -gt 0 ]; then
            echo "fuzz: crashes in: ${failed[*]} — minimized reproducers are in $SCRATCH/artifacts/<target>/minimized-*;"
            echo "      copy each to Fuzz/Corpus/<target>/crash-<description> (and list it in Fuzz/Corpus/known-crashes.txt until fixed)"
            exit 1
        fi
        ;;
    minimize)
        [ $# -eq 2 ] || { echo "usage: $0 minimize TARGET CRASH" >&2; exit 2; }
        build >/dev/null
        minimize "$1" "$2" "$2.minimized"
        echo "$2.minimized"
        ;;
    *)
        sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
esac
