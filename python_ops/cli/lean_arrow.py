"""Arrow for a command-line process that starts no engine: no pandas, the system allocator.

pyarrow imports pandas the first time it converts Python values (``pa.array``, ``pa.scalar``, a
Python literal in a compute call, a group-by): its Python shim to ask whether a value is a pandas
object, its C++ converter to learn pandas' null sentinels. Nothing an in-process op does hands
pandas objects to Arrow, so the import buys nothing, and it costs 0.2 s of start and about 43 MB
of resident memory on these machines (``import pyarrow`` alone is about 65 MB): a VACUUM dry run
of 100,000 files peaked at 247 MB with it.

``pandas_blocked`` makes ``import pandas`` fail, as if it were not installed, while an op runs.
pyarrow then converts without it (its C++ converter retries the import on each conversion, which
the finder refuses in microseconds). The CLI uses it only for commands that start no engine: a
Spark engine needs pandas, and pyarrow's shim remembers "no pandas" for the rest of the process.

``lean_arrow`` also makes Arrow allocate with the C library's allocator instead of mimalloc, which
keeps pages it has freed: the parquet decode and the hash tables of a VACUUM are transient, and
with mimalloc the process kept about 45 MB more of them resident (100,000 files: 192 vs 142 MB
peak in the same steps).
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType


class _NoPandas(importlib.abc.MetaPathFinder):
    """An import finder under which ``import pandas`` fails as if it were not installed."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ImportError(f"{fullname} is not used by this command", name=fullname)
        return None


@contextmanager
def pandas_blocked() -> Iterator[None]:
    """Run the body with ``import pandas`` failing (unless pandas is already imported).

    Yields:
        Nothing; a process that has imported pandas already is left as it is.
    """
    if "pandas" in sys.modules:
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextmanager
def lean_arrow() -> Iterator[None]:
    """Run the body with pandas blocked and Arrow on the system allocator (see the module).

    Yields:
        Nothing; the allocator stays for the rest of the process.
    """
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    with pandas_blocked():
        yield
