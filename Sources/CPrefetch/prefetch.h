// A read prefetch hint for BoxwoodStore's range walks (Swift has no prefetch intrinsic). Header-only: the
// function is inlined into its Swift callers; it changes no state and never faults.
#ifndef BOXWOOD_PREFETCH_H
#define BOXWOOD_PREFETCH_H

static inline __attribute__((always_inline)) void boxwood_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
