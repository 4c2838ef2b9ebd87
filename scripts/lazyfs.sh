#!/usr/bin/env bash
# LazyFS for Boxwood's power-loss tests (Tests/BoxwoodCrashTests/LazyFSTests.swift, docs/crash-safety.md).
#
# LazyFS (github.com/dsrhaslab/lazyfs, MIT) is a FUSE file system with a page cache of its own: a write stays in
# that cache until the file is fsynced, `lazyfs::clear-cache` drops everything unsynced (a power cut), and
# torn-op / torn-seq faults from its config persist only some parts of a write (or some writes of a sequence)
# and then kill LazyFS. Its source stays out of this repository: it is found in $LAZYFS_SRC, else
# /work/shared/tools/lazyfs or ../shared/tools/lazyfs beside the repository (a build.sh wrapper that builds the
# upstream source against Debian packages), else cloned from GitHub at commit a47a5ba when the network allows.
# It is built once into .build-lazyfs/ (BOXWOOD_LAZYFS_CACHE overrides).
#
# usage: scripts/lazyfs.sh <command> ...
#   check                       prerequisites, build, and a trial mount that must lose an unsynced write and keep a
#                               synced one; prints "ok <binary>". Also unmounts mounts of this script whose owner died.
#   build                       builds LazyFS if needed; prints the binary's path
#   mount <dir> [faults.toml]   mounts LazyFS at <dir>/mnt over <dir>/root; the optional file's [[injection]]
#                               entries are appended to the config, with @ROOT@ replaced by <dir>/root (LazyFS
#                               names files by their path under the root); prints <dir>/mnt
#   umount <dir>                unmounts (lazily when busy) and ends that LazyFS process; no-op when not mounted
#   clear-cache <dir>           sends lazyfs::clear-cache and waits until LazyFS reports the cache cleared
#   send <dir> <command>        sends one fault command (e.g. lazyfs::crash::timing=before::op=fsync::from_rgx=wal)
#   alive <dir>                 exit 0 while that LazyFS process runs, 1 once it ended (a torn fault kills it)
#
# When LazyFS cannot run here (not Linux, no /dev/fuse, not root, no source, build failed, FUSE mount refused), the
# commands that need it print one line "skipped: <reason>" on stdout and exit 77; other failures exit 1.
set -eEuo pipefail
trap 'echo "lazyfs.sh: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR

readonly SKIP=77
readonly COMMIT=a47a5ba
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${BOXWOOD_LAZYFS_CACHE:-$repo/.build-lazyfs}
bin="$cache/out/lazyfs/build/lazyfs"

skip() { echo "skipped: $*"; exit "$SKIP"; }
die() { echo "lazyfs.sh: $*" >&2; exit 1; }

require_fuse() {
    [ "$(uname -s)" = Linux ] || skip "LazyFS needs Linux (FUSE 3), this is $(uname -s)"
    [ -c /dev/fuse ] || skip "/dev/fuse is missing"
    [ "$(id -u)" = 0 ] || skip "not root (mounting LazyFS needs root)"
}

# --- Finding and building LazyFS --------------------------------------------------------------------------------

# Prints "wrapper <dir>" (a directory with build.sh and the upstream source in src/) or "upstream <dir>" (the
# upstream source itself); returns 1 when none is found and cloning is not possible.
find_source() {
    local candidate
    if [ -n "${LAZYFS_SRC:-}" ]; then
        [ -d "$LAZYFS_SRC" ] || { echo "none LAZYFS_SRC=$LAZYFS_SRC is not a directory"; return 0; }
        candidate=$(cd "$LAZYFS_SRC" && pwd)
        if [ -f "$candidate/build.sh" ] && [ -d "$candidate/src/lazyfs" ]; then echo "wrapper $candidate"; return 0; fi
        if [ -f "$candidate/lazyfs/CMakeLists.txt" ] && [ -d "$candidate/libs/libpcache" ]; then echo "upstream $candidate"; return 0; fi
        echo "none LAZYFS_SRC=$LAZYFS_SRC holds no LazyFS source"
        return 0
    fi
    for candidate in /work/shared/tools/lazyfs "$repo/../shared/tools/lazyfs"; do
        if [ -f "$candidate/build.sh" ] && [ -d "$candidate/src/lazyfs" ]; then
            echo "wrapper $(cd "$candidate" && pwd)"
            return 0
        fi
    done
    if [ -f "$cache/src/lazyfs/CMakeLists.txt" ]; then echo "upstream $cache/src"; return 0; fi
    command -v git >/dev/null 2>&1 || { echo "none no LazyFS source found and git is missing"; return 0; }
    rm -rf "$cache/src.partial"
    if GIT_TERMINAL_PROMPT=0 timeout 120 git clone -q https://github.com/dsrhaslab/lazyfs "$cache/src.partial" \
        >>"$cache/build.log" 2>&1 && git -C "$cache/src.partial" checkout -q "$COMMIT" >>"$cache/build.log" 2>&1; then
        mv "$cache/src.partial" "$cache/src"
        echo "upstream $cache/src"
    else
        rm -rf "$cache/src.partial"
        echo "none no LazyFS source found and cloning github.com/dsrhaslab/lazyfs failed (offline?)"
    fi
}

# The upstream CMake files download toml11 and spdlog; use Debian's packages instead (the same change as the
# wrapper's debian-deps.patch). Fails when the files are not the expected ones.
use_debian_packages() {
    local out=$1
    perl -0pi -e 's/include\(FetchContent\).*?FetchContent_MakeAvailable\(spdlog\)\s*\n/find_package(toml11 REQUIRED)\nfind_package(spdlog REQUIRED)\n/s;
                  s/set_target_properties\(spdlog [^\n]*\n//;
                  s/target_link_libraries\(pcache toml11::toml11 spdlog\)/target_link_libraries(pcache toml11::toml11 spdlog::spdlog)/' \
        "$out/libs/libpcache/CMakeLists.txt"
    perl -0pi -e 's/(find_package\(Threads REQUIRED\)\n)/$1find_package(spdlog REQUIRED)\nfind_package(toml11 REQUIRED)\n/;
                  s/(target_link_libraries\(\$\{CMAKE_PROJECT_NAME\} fuse3 Threads::Threads libpcache\.so)\)/$1 spdlog::spdlog toml11::toml11)/' \
        "$out/lazyfs/CMakeLists.txt"
    ! grep -q FetchContent "$out/libs/libpcache/CMakeLists.txt" \
        && grep -q 'spdlog::spdlog toml11::toml11' "$out/lazyfs/CMakeLists.txt"
}

build_upstream() {
    local src=$1 out=$2 need missing p
    need="libfuse3-dev fuse3 cmake g++ pkg-config libtoml11-dev libspdlog-dev perl"
    missing=$(for p in $need; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
    if [ -n "$missing" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    fi
    rm -rf "$out"; mkdir -p "$out"; cp -r "$src/." "$out/"
    use_debian_packages "$out" || { echo "the LazyFS CMake files are not the expected ones (commit $COMMIT)"; return 1; }
    (cd "$out/libs/libpcache" && sh build.sh) && (cd "$out/lazyfs" && sh build.sh)
}

# Builds LazyFS into $cache/out once (serialized by a lock); prints the binary, or skips.
build() {
    if [ -x "$bin" ]; then echo "$bin"; return 0; fi
    mkdir -p "$cache"
    exec 9>"$cache/lock"
    flock 9
    if [ ! -x "$bin" ]; then
        local found kind src
        found=$(find_source)
        kind=${found%% *}
        src=${found#* }
        [ "$kind" != none ] || skip "$src"
        echo "building LazyFS from $src ($kind)" >"$cache/build.log"
        if [ "$kind" = wrapper ]; then
            bash "$src/build.sh" "$cache/out" >>"$cache/build.log" 2>&1 || true
        else
            build_upstream "$src" "$cache/out" >>"$cache/build.log" 2>&1 || true
        fi
        [ -x "$bin" ] || skip "the LazyFS build failed (log: $cache/build.log)"
        echo "$kind $src" >"$cache/source"
    fi
    exec 9>&-
    echo "$bin"
}

# --- Mounts -----------------------------------------------------------------------------------------------------

# True when $1 is the pid of a running (not zombie) LazyFS process.
lazyfs_running() {
    local pid=$1 state
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ "$state" != Z ] && [ "$state" != X ] || return 1
    # The command line tells LazyFS from a later process that reused the pid. It reads as empty while the process
    # is between fork and exec or inside execve (a window a loaded machine stretches to tens of milliseconds):
    # that is still the process just started, not a sign it ended.
    local cmdline
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [ -z "$cmdline" ] || [[ $cmdline == *lazyfs* ]]
}

# True when $1 is a mount point in /proc/self/mounts (also a dead FUSE mount, which stat-based tools miss).
is_mounted() {
    awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts
}

# Appends a timestamped line to <dir>/lazyfs-script.log (what this script did to that mount, for failures).
trace() {
    local dir=$1
    shift
    echo "$(date +%T.%N) [$$] $*" >>"$dir/lazyfs-script.log" 2>/dev/null || true
}

absolute_dir() {
    mkdir -p "$1"
    (cd "$1" && pwd -P)
}

cmd_mount() {
    [ $# -ge 1 ] || die "usage: mount <dir> [faults.toml]"
    require_fuse
    local lazyfs dir mnt root config injections=${2:-} pid status=0
    lazyfs=$(build) || { status=$?; echo "$lazyfs"; exit "$status"; }
    dir=$(absolute_dir "$1") || exit 1
    case "$dir" in *,* | *" "*) die "LazyFS's mount options cannot name a path with a comma or a space: $dir" ;; esac
    # LazyFS ignores a config path containing "-o" (any case) and looks for config/default.toml instead.
    case "$dir" in *-[oO]*) die "LazyFS cannot take a config path containing '-o': $dir" ;; esac
    mnt=$dir/mnt
    root=$dir/root
    ! is_mounted "$mnt" || die "$mnt is mounted already"
    mkdir -p "$mnt" "$root"
    [ -z "$injections" ] || [ -f "$injections" ] || die "no such fault file: $injections"
    config=$dir/lazyfs.toml
    cat >"$config" <<EOF
[faults]
fifo_path="$dir/faults.fifo"

[cache]
apply_eviction=false

[cache.simple]
custom_size="${BOXWOOD_LAZYFS_CACHE_SIZE:-64mb}"
blocks_per_page=1

[filesystem]
log_all_operations=${BOXWOOD_LAZYFS_LOG_ALL:-false}
logfile="$dir/lazyfs.log"
EOF
    if [ -n "$injections" ]; then
        echo >>"$config"
        sed "s|@ROOT@|$root|g" "$injections" >>"$config"
    fi
    # Earlier mounts' logs are kept (the log is truncated by LazyFS at start).
    if [ -f "$dir/lazyfs.log" ]; then cat "$dir/lazyfs.log" >>"$dir/lazyfs-earlier.log"; fi
    : >"$dir/lazyfs.log"
    touch "$dir/.boxwood-lazyfs"
    echo "$PPID" >"$dir/owner.pid"
    setsid "$lazyfs" "$mnt" --config-path "$config" -o modules=subdir -o "subdir=$root" -f \
        </dev/null >"$dir/lazyfs.out" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/lazyfs.pid"
    trace "$dir" "mount: started LazyFS $pid${injections:+ with faults from $injections}"
    local i
    for i in $(seq 200); do
        if is_mounted "$mnt" && grep -q "waiting for fault commands" "$dir/lazyfs.log" 2>/dev/null; then
            trace "$dir" "mount: mounted"
            echo "$mnt"
            return 0
        fi
        if ! lazyfs_running "$pid"; then
            local reason
            reason=$(grep -v '^\s*$' "$dir/lazyfs.out" | tail -n 1 || true)
            if grep -qiE "fuse: (device not found|failed to open /dev/fuse)|mount.*(permission denied|operation not permitted)" "$dir/lazyfs.out"; then
                skip "FUSE mounts are refused here: $reason"
            fi
            die "LazyFS ended while mounting $mnt: $reason"
        fi
        sleep 0.05
    done
    (cmd_umount "$dir") >&2 || true
    die "LazyFS did not mount $mnt within 10 s (mounted: $(is_mounted "$mnt" && echo yes || echo no); see $dir/lazyfs.out)"
}

cmd_umount() {
    [ $# -eq 1 ] || die "usage: umount <dir>"
    local dir mnt pid i
    [ -d "$1" ] || return 0
    dir=$(cd "$1" && pwd -P)
    mnt=$dir/mnt
    pid=$(cat "$dir/lazyfs.pid" 2>/dev/null || true)
    trace "$dir" "umount: LazyFS $pid $(lazyfs_running "$pid" && echo running || echo ended), $(is_mounted "$mnt" && echo mounted || echo not mounted)"
    if is_mounted "$mnt"; then
        fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null || {
            echo "lazyfs.sh: $mnt is busy; unmounting lazily" >&2
            fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt"
        }
    fi
    # LazyFS exits once its mount is gone (with "terminate called without an active exception": harmless).
    for i in $(seq 100); do lazyfs_running "$pid" || break; sleep 0.05; done
    if lazyfs_running "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 40); do lazyfs_running "$pid" || break; sleep 0.05; done
        if lazyfs_running "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    trace "$dir" "umount: done, LazyFS $pid $(lazyfs_running "$pid" && echo running || echo ended), $(is_mounted "$mnt" && echo mounted || echo not mounted)"
    ! is_mounted "$mnt" || die "$mnt is still mounted"
}

fifo_of() {
    local dir
    dir=$(cd "$1" && pwd -P) || die "no such directory: $1"
    [ -p "$dir/faults.fifo" ] || die "$dir holds no LazyFS FIFO"
    lazyfs_running "$(cat "$dir/lazyfs.pid" 2>/dev/null || true)" || die "LazyFS of $dir is not running"
    echo "$dir/faults.fifo"
}

cmd_send() {
    [ $# -eq 2 ] || die "usage: send <dir> <command>"
    local fifo
    fifo=$(fifo_of "$1") || exit 1
    # LazyFS reads a command with one read of at most 100 bytes, newline included.
    [ ${#2} -le 98 ] || die "LazyFS cuts commands longer than 99 bytes: $2"
    timeout 5 bash -c 'printf "%s\n" "$1" >"$2"' _ "$2" "$fifo" || die "could not write to $fifo"
}

cmd_clear_cache() {
    [ $# -eq 1 ] || die "usage: clear-cache <dir>"
    local dir before i
    dir=$(cd "$1" && pwd -P)
    before=$(grep -c "cache is cleared" "$dir/lazyfs.log" || true)
    cmd_send "$dir" "lazyfs::clear-cache"
    for i in $(seq 400); do
        [ "$(grep -c "cache is cleared" "$dir/lazyfs.log" || true)" -le "$before" ] || return 0
        lazyfs_running "$(cat "$dir/lazyfs.pid")" || die "LazyFS ended before clearing its cache"
        sleep 0.025
    done
    die "LazyFS did not report its cache cleared within 10 s"
}

cmd_alive() {
    [ $# -eq 1 ] || die "usage: alive <dir>"
    lazyfs_running "$(cat "$1/lazyfs.pid" 2>/dev/null || true)" || exit 1
}

# Unmounts this script's mounts whose owner (the process that ran `mount`) is gone, e.g. a test process that
# crashed before its cleanup.
sweep() {
    local mnt dir owner
    awk '$3 == "fuse.lazyfs" { print $2 }' /proc/self/mounts | while read -r mnt; do
        dir=${mnt%/mnt}
        [ "$dir" != "$mnt" ] && [ -f "$dir/.boxwood-lazyfs" ] || continue
        owner=$(cat "$dir/owner.pid" 2>/dev/null || true)
        if [ -z "$owner" ] || ! kill -0 "$owner" 2>/dev/null; then
            echo "lazyfs.sh: unmounting $mnt (its owner $owner is gone)" >&2
            cmd_umount "$dir" || true
        fi
    done
}

trial=""
cmd_check() {
    require_fuse
    local lazyfs status=0 out
    lazyfs=$(build) || { status=$?; echo "$lazyfs"; exit "$status"; }
    sweep
    trial=$(mktemp -d "${TMPDIR:-/tmp}/boxwood-lazyfs-check.XXXXXX")
    trap 'if [ -n "$trial" ]; then cmd_umount "$trial" >/dev/null 2>&1 || true; rm -rf "$trial"; fi' EXIT
    out=$(cmd_mount "$trial") || { status=$?; echo "$out"; exit "$status"; }
    printf 'synced' >"$trial/mnt/synced"
    dd if=/dev/null of="$trial/mnt/synced" conv=notrunc,fsync status=none
    printf 'unsynced' >"$trial/mnt/unsynced"
    cmd_clear_cache "$trial"
    [ "$(cat "$trial/mnt/synced")" = synced ] || die "trial mount: a synced write was lost by clear-cache"
    [ ! -s "$trial/mnt/unsynced" ] || die "trial mount: an unsynced write survived clear-cache"
    cmd_umount "$trial"
    echo "ok $lazyfs"
}

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
    check) cmd_check "$@" ;;
    build) require_fuse; build ;;
    mount) cmd_mount "$@" ;;
    umount) cmd_umount "$@" ;;
    clear-cache) cmd_clear_cache "$@" ;;
    send) cmd_send "$@" ;;
    alive) cmd_alive "$@" ;;
    *) sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
