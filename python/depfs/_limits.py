"""Running under a memory limit (``ulimit -v``, a cluster's ``h_vmem``).

glibc gives each thread that allocates its own malloc arena, and each arena reserves
64 MiB of address space up front. A streamed parse has several threads (the model's
loader, the reader, the writer, the parse's), so under an address-space limit it
aborted ("memory allocation of N bytes failed") at limits of up to ~700 MiB while using
~200 MiB. Under a limit, depfs keeps two arenas: the en_ewt arc-eager model then parses
en_ewt train x5 at a limit of 260 MiB (docs/design.md, "Files and resources"). Without
a limit nothing changes: more arenas mean less waiting on malloc's locks."""

from __future__ import annotations

import sys

#: glibc's `mallopt` parameter for the number of arenas (`M_ARENA_MAX` in malloc.h).
_M_ARENA_MAX = -8

#: Arenas kept under a memory limit: the calling thread's and one for the others.
LIMITED_ARENAS = 2


def memory_limit() -> int | None:
    """The smaller of the process's address-space and data limits in bytes (the soft
    ones, which are enforced), or None when neither is set."""
    try:
        import resource  # (POSIX only: elsewhere no limit of this kind)
    except ImportError:
        return None
    limits = [resource.getrlimit(r)[0] for r in (resource.RLIMIT_AS, resource.RLIMIT_DATA)]
    finite = [x for x in limits if x != resource.RLIM_INFINITY]
    return min(finite) if finite else None


def fewer_arenas_under_a_limit() -> bool:
    """Caps glibc's malloc arenas at :data:`LIMITED_ARENAS` when a memory limit is set;
    True when it did. Elsewhere (no limit, not Linux, not glibc) it does nothing."""
    if not sys.platform.startswith("linux") or memory_limit() is None:
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # musl has the function and ignores it (returns 0): it has no arenas to cap.
    return bool(mallopt(_M_ARENA_MAX, LIMITED_ARENAS))
