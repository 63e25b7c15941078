"""Keep a sort's large numpy temporaries on the heap, so each pass reuses pages, not new ones.

glibc serves an allocation above its mmap threshold (at most 32 MB) with fresh pages from the
kernel and returns them when it is freed. Each radix pass of a run's sort (``stable_order``)
allocates several arrays of a run's length, so each pass faulted its memory in again
(measured, 5.5M keys, 10 sorts: 1.8 s of system time and 237,000 page faults; 0.15 s and
30,000 with the threshold raised, peak RSS +32 MB). While a Z-order sorts, ``heap_reuse``
raises the threshold (and the trim threshold) so freed arrays are reused; ``trim_heap`` gives
the heap's free pages back between runs (as ``release_unused`` does for Arrow's pool), and when
the last sort of the process leaves (Z-orders run on parallel threads in ``maintain_all``;
``runtime.HEAP_REUSE`` counts them) the thresholds the process had are restored: glibc's
defaults, or ``lean_arrow``'s when it set them. Without glibc both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from python_ops import runtime

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_DEFAULT_THRESHOLD = 128 * 1024  # glibc's default for both
_REUSE_THRESHOLD = 1 << 30


@lru_cache(maxsize=1)
def _glibc() -> ctypes.CDLL | None:
    """The C library, when it is glibc (the only one whose ``mallopt`` this knows)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name)
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc only)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


@contextmanager
def heap_reuse() -> Iterator[None]:
    """While inside, large allocations come from (and return to) the heap (glibc only).

    Re-entrant and thread-safe: the first sort to enter raises the thresholds, the last to
    leave restores them.
    """
    libc = _glibc()
    if libc is None:
        yield
        return
    shared = runtime.HEAP_REUSE
    with shared.lock:
        if shared.value == 0:
            libc.mallopt(_M_MMAP_THRESHOLD, _REUSE_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _REUSE_THRESHOLD)
        shared.value += 1
    try:
        yield
    finally:
        with shared.lock:
            shared.value -= 1
            if shared.value == 0:
                lean = runtime.ARROW_POOL.value.mallopt_done  # lean_arrow's, for the process
                libc.mallopt(_M_MMAP_THRESHOLD, _DEFAULT_THRESHOLD)
                libc.mallopt(
                    _M_TRIM_THRESHOLD, 2 * _DEFAULT_THRESHOLD if lean else _DEFAULT_THRESHOLD
                )
                libc.malloc_trim(0)
