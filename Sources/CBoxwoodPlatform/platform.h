// The few C declarations BoxwoodPlatform needs that Swift's system modules do not import. Header-only: nothing
// to compile or link. glibc declares pipe2, posix_spawn_file_actions_addclosefrom_np and pthread_setname_np only under _GNU_SOURCE,
// which Swift's Glibc module is not built with; the prototypes below are glibc's own (2.9, 2.34 and 2.12), so they
// agree with the headers wherever both are seen. Darwin needs none of this: there posix_spawn takes
// POSIX_SPAWN_CLOEXEC_DEFAULT.
#ifndef BOXWOOD_PLATFORM_H
#define BOXWOOD_PLATFORM_H

#if defined(__linux__)
#include <fcntl.h>
#include <spawn.h>

int pipe2(int pipedes[2], int flags);
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// A pipe whose two descriptors are close-on-exec from the start (no window in which a process spawned by another
/// thread could inherit them).
static inline int boxwood_pipe_cloexec(int pipedes[2]) {
    return pipe2(pipedes, O_CLOEXEC);
}

/// In the child, after the earlier file actions: close every descriptor from `from` up.
static inline int boxwood_spawn_add_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#include <pthread.h>
int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (at most 15 bytes) for debuggers and `ps -L`.
static inline int boxwood_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/// FUTEX_WAIT without FUTEX_PRIVATE_FLAG: a futex other processes mapping the same file can wake. Returns 0 when
/// woken (or spuriously), -1 with errno EAGAIN (the word differs), ETIMEDOUT or EINTR. `syscall` is variadic,
/// which Swift cannot call.
static inline int boxwood_futex_wait_shared(const uint32_t *address, uint32_t expected, const struct timespec *timeout) {
    return (int)syscall(SYS_futex, address, 0 /* FUTEX_WAIT */, expected, timeout, (void *)0, 0);
}

/// FUTEX_WAKE (shared) of up to `count` waiters; returns how many were woken, or -1.
static inline int boxwood_futex_wake_shared(const uint32_t *address, int count) {
    return (int)syscall(SYS_futex, address, 1 /* FUTEX_WAKE */, count, (void *)0, (void *)0, 0);
}
#endif

#if defined(__APPLE__)
// os_sync_wait_on_address (macOS 14.4, iOS 17.4): the shared variant waits on a word in a file mapping.
#include <os/os_sync_wait_on_address.h>
#endif

#endif
