// The few C declarations BoxwoodPlatform needs that Swift's system module does not import. Header-only: nothing
// to compile or link. glibc declares pipe2 and posix_spawn_file_actions_addclosefrom_np only under _GNU_SOURCE,
// which Swift's Glibc module is not built with; the prototypes below are glibc's own (2.9 and 2.34), so they
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
#endif

#endif
