"""Everything this process shares across commands and threads, in one place.

Per-command memory (warnings given, once-per-command steps) is an ``Invocation``, passed down
(``python_ops.invocation``). What lives here outlives commands: a dbt process runs several
invocations, a test process hundreds, and each of these is right to share, for the reason given:

- ``ARROW_POOL``: Arrow's default memory pool is one per process; ``lean_arrow`` switches it
  for the bodies that run on it and restores it when the last one leaves (a count of users).
- ``DELTA_SQL``: whether a Spark engine has Delta's SQL is a property of the engine, asked once
  (``delta_sql``): the ``DeltaSql`` of each session, the sessions known to have none (the
  embedded Sail engine), the answer per engine and one settings lock per engine.
- ``BOTO3``: one botocore session (a new one reloads the S3 service model, about 100 ms per
  client; from a shared one a client costs a few ms, which matters on the post-hook path).
- ``SAFE_BUCKETS``: the (endpoint, bucket) pairs whose conditional writes were probed
  (``storage.safe_commit``): a store's behaviour does not change between commands.
- ``LOCAL_WRITER``: the local Delta writer process (a JVM, started on first use, stopped at
  exit): starting one costs seconds.
- ``SNAPSHOT_READS``: how many snapshots of each table this process reconstructed (tests count
  them to check that deciding and running maintenance read a log once).
- ``PARQUET_THREADS``: whether footers are decoded on Arrow's threads (a choice made once by a
  process that runs one op and exits).
- ``HEAP_REUSE``: how many Z-order sorts run now with glibc's mmap threshold raised
  (``ops.optimize.sorting.heap_reuse``): the setting is the process's, restored when the last
  leaves.

Each is a ``Shared`` value with its own lock: take ``lock`` around every read-modify-write.
Nothing else in the package keeps state at module level (``tests/unit/test_runtime.py``
enforces it: no module-level lock, no ``global`` statement outside this module).
"""

from __future__ import annotations

import collections
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Shared(Generic[T]):
    """One piece of process-wide state and the lock that guards it.

    Args:
        name: What it is, for messages and ``shared_state``.
        value: Its initial value.
    """

    def __init__(self, name: str, value: T) -> None:
        self.name = name
        self.value = value
        self.lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Shared({self.name!r})"


@dataclass
class ArrowPool:
    """Arrow's default pool as ``lean_arrow`` switches it.

    Attributes:
        users: Bodies inside ``lean_arrow`` now.
        before: The pool to restore when the last leaves.
        mallopt_done: The C library's thresholds were set (once per process).
    """

    users: int = 0
    before: Any = None
    mallopt_done: bool = False


@dataclass
class DeltaSqlAnswers:
    """What the process knows of Spark engines and Delta's SQL.

    Attributes:
        per_session: The ``DeltaSql`` of each Spark session (weakly: a stopped session goes).
        no_delta: Sessions known to have no Delta SQL (the embedded Sail engine).
        answers: Whether Delta's SQL answered, per engine key.
        settings_locks: One lock per engine around session settings and their statement.
    """

    per_session: weakref.WeakKeyDictionary[Any, Any] = field(
        default_factory=weakref.WeakKeyDictionary
    )
    no_delta: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)
    answers: dict[Any, bool] = field(default_factory=dict)
    settings_locks: dict[Any, threading.RLock] = field(default_factory=dict)


ARROW_POOL: Shared[ArrowPool] = Shared("Arrow's default memory pool", ArrowPool())
DELTA_SQL: Shared[DeltaSqlAnswers] = Shared("Delta SQL per Spark engine", DeltaSqlAnswers())
BOTO3: Shared[Any] = Shared("the botocore session", None)
SAFE_BUCKETS: Shared[set[tuple[str | None, str]]] = Shared("buckets probed for safe commits", set())
LOCAL_WRITER: Shared[Any] = Shared("the local Delta writer", None)
SNAPSHOT_READS: Shared[collections.Counter[str]] = Shared(
    "snapshots reconstructed per table", collections.Counter()
)
PARQUET_THREADS: Shared[bool] = Shared("footers decoded on Arrow's threads", False)
HEAP_REUSE: Shared[int] = Shared("sorts with glibc's mmap threshold raised", 0)


def shared_state() -> tuple[Shared[Any], ...]:
    """Every piece of process-wide state, in the order the module documents them."""
    return (
        ARROW_POOL,
        DELTA_SQL,
        BOTO3,
        SAFE_BUCKETS,
        LOCAL_WRITER,
        SNAPSHOT_READS,
        PARQUET_THREADS,
        HEAP_REUSE,
    )
