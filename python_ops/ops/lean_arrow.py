"""Arrow for an op that runs in this process with no engine: no pandas, no numpy, lean allocation.

What a VACUUM of a big table costs in memory is mostly what the process imported and what the
allocator keeps, not the op's own data (docs/benchmarks.md, VACUUM). Five levers, each measured on
a dry run of 100,000 and 1,000,000 files (``bench/vacuum_bench.py``):

- **pandas.** pyarrow imports pandas the first time it converts Python values (``pa.array``,
  ``pa.scalar``, a Python literal in a compute call): its Python shim asks whether a value is a
  pandas object. No in-process op hands pandas objects to Arrow; the import costs 0.2 s and about
  43 MB. ``pandas_blocked`` makes ``import pandas`` fail while an op runs (unless pandas is
  imported already, as in a dbt process with a Spark engine). pyarrow's shim then remembers "no
  pandas", and would treat pandas objects as plain sequences for the rest of the process; on
  leaving, the shim is healed when pandas is next imported (``_HealShim``), so a process that
  uses pandas with Arrow after the op (a Spark engine, a user's script) sees no difference.
- **numpy.** ``import pyarrow`` imports numpy when it can (about 10 MB and 0.1 s of CPU); pyarrow
  works without it, but decides once, at its own import. ``block_numpy_for_process`` is for the
  start of a process that only runs an engine-free op (``python -m python_ops vacuum``): it must
  run before anything imports pyarrow, and it lasts for the process.
- **Arrow's allocator.** mimalloc, Arrow's default, keeps pages it has freed: the parquet decode
  and hash tables of a VACUUM are transient, and with mimalloc the process kept about 45 MB more
  of them resident (100,000 files: 192 vs 142 MB peak). ``lean_arrow`` switches Arrow's default
  pool to the C library's allocator while the op runs (the previous pool is restored when the
  last op leaves; a buffer always returns to the pool that allocated it). Arrow's C++ code that
  allocates before that switch, or outside the pool Python sets, still reaches mimalloc: a
  process that runs one engine-free op also names the system pool in Arrow's environment before
  pyarrow loads (``system_pool_for_process``: 100,000 files, about 6 MB less after reading the
  checkpoint).
- **glibc's mmap threshold.** glibc serves a large allocation from ``mmap`` (returned to the
  system on ``free``) until the first such block is freed, then raises its threshold to that
  block's size: the next large buffers come from the heap, whose freed space stays resident.
  A fixed threshold (``mallopt(M_MMAP_THRESHOLD, 128 KiB)``, glibc's initial value) keeps large
  transient buffers out of the heap: 1,000,000 files, 405 vs 345 MB peak. It changes every
  allocation of the process, so only a process that runs one engine-free op sets it
  (``fix_mmap_threshold_for_process``, from ``python -m python_ops vacuum``), never a host such as
  dbt with an engine in the same process (the runner); where the C library is not glibc, nothing.
- **Freed pages between phases.** ``release_freed_memory`` (``malloc_trim``) hands back what a
  VACUUM phase freed before the next one allocates; it sets nothing, so a host may call it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

from python_ops import runtime

MMAP_THRESHOLD_BYTES = 128 * 1024
_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD = -3


class _Refused:
    """An import finder under which the named packages fail to import, as if not installed.

    A ``sys.meta_path`` finder needs only ``find_spec`` (no ``importlib.abc`` base: that module
    imports ``importlib.resources``, a cost at every start of the command line).
    """

    def __init__(self, *names: str) -> None:
        self.names = names
        self.refused = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.split(".", 1)[0] in self.names:
            self.refused = True
            raise ImportError(f"{fullname} is not used by this command", name=fullname)
        return None


def _heal_pyarrow_shim() -> None:
    """Make pyarrow's pandas shim import pandas again (it remembered a refused import)."""
    try:
        import pyarrow.lib

        pyarrow.lib._pandas_api.pd  # noqa: B018  (the property retries the import)
    except Exception:  # pyarrow or pandas unusable: nothing to heal
        return


class _HealShim:
    """One-shot: when pandas is next imported, heal pyarrow's shim right after the import."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "pandas":
            return None
        _remove(self)
        spec = importlib.util.find_spec(fullname)  # the real finders, this one removed
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original: Callable[[ModuleType], None] = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            _heal_pyarrow_shim()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _remove(finder: _Refused | _HealShim) -> None:
    with contextlib.suppress(ValueError):  # already removed (another thread, a nested exit)
        sys.meta_path.remove(finder)


@contextmanager
def pandas_blocked() -> Iterator[None]:
    """Run the body with ``import pandas`` failing (unless pandas is already imported).

    Yields:
        Nothing; a process that has imported pandas already is left as it is. When an import
        was refused, pyarrow's shim is healed at the next ``import pandas``.
    """
    if "pandas" in sys.modules:
        yield
        return
    finder = _Refused("pandas")
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        _remove(finder)
        if finder.refused and not any(isinstance(f, _HealShim) for f in sys.meta_path):
            sys.meta_path.insert(0, _HealShim())


def block_numpy_for_process() -> bool:
    """Make ``import numpy`` (and pandas) fail for the rest of the process, before pyarrow loads.

    For a process that runs one engine-free op and exits. pyarrow decides at its import whether
    numpy is there; numpy is never needed by the in-process ops.

    Returns:
        True when blocked; False when pyarrow, numpy or pandas is imported already (too late).
    """
    if any(name in sys.modules for name in ("pyarrow", "numpy", "pandas")):
        return False
    sys.meta_path.insert(0, _Refused("numpy", "pandas"))
    return True


def system_pool_for_process() -> bool:
    """Make the C library's allocator Arrow's default pool for the process, before pyarrow loads.

    For a process that runs one engine-free op and exits (as ``block_numpy_for_process``); a
    pool the environment names already is left alone.

    Returns:
        True when set; False when pyarrow is imported already (too late) or a pool is named.
    """
    if "pyarrow" in sys.modules or "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return False
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
    return True


def fix_mmap_threshold_for_process() -> None:
    """``mallopt(M_MMAP_THRESHOLD / M_TRIM_THRESHOLD)`` once, where the C library is glibc.

    For a process that runs one engine-free op and exits (see the module): the setting holds
    for every allocation of the process.
    """
    with runtime.ARROW_POOL.lock:
        if runtime.ARROW_POOL.value.mallopt_done:
            return
        runtime.ARROW_POOL.value.mallopt_done = True
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only: musl's mallopt does nothing)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD_BYTES)


@contextmanager
def lean_arrow(*, block_pandas: bool = True) -> Iterator[None]:
    """Run the body with Arrow on the system allocator and without pandas.

    Re-entrant and thread-safe: the first body to enter switches Arrow's default pool, the last
    to leave restores the previous one.

    Args:
        block_pandas: Block ``import pandas`` in the body (see the module); False where the body
            may start a Spark engine or otherwise need pandas.

    Yields:
        Nothing.
    """
    import pyarrow as pa

    shared = runtime.ARROW_POOL
    with shared.lock:
        if shared.value.users == 0:
            shared.value.before = pa.default_memory_pool()
            pa.set_memory_pool(pa.system_memory_pool())
        shared.value.users += 1
    try:
        if block_pandas:
            with pandas_blocked():
                yield
        else:
            yield
    finally:
        with shared.lock:
            shared.value.users -= 1
            if shared.value.users == 0 and shared.value.before is not None:
                pa.set_memory_pool(shared.value.before)
                shared.value.before = None


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim``, or None where it is not glibc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only)
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    trim: Callable[[int], int] = fn
    return trim


def release_freed_memory() -> None:
    """Give the whole pages the C library holds free back to the system (glibc's ``malloc_trim``).

    For a VACUUM between its phases (the log read, the listing, the selection), in any process:
    unlike the mmap threshold it changes no setting, it only returns memory already freed, so the
    next phase's allocations do not stack on pages the last one left resident. The post-hook
    path of a 100,000-file dry run: 96.7 -> 94.6 MB peak. Where the C library is not glibc,
    nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
