"""What one command remembers while it runs: one object, passed down, never a global.

A command is a dbt invocation (its post-hooks on parallel threads, a run-operation) or one
``python -m python_ops`` run. It meets the same conditions many times: VACUUM's retention check
runs in the due check's estimate, in the report's dry run and in the run itself, so a
short-retention override would be warned about two to four times; every model's post-hook
would start the history's own upkeep. An ``Invocation`` remembers, for the command only:

- which warnings it gave (``warn_once``: the first at WARNING, repeats at DEBUG);
- which once-per-command steps were claimed (``first_time``: the history's upkeep);
- small caches valid for the command only (``memo``: a schema's location in the catalog), and
  values computed once per command even when parallel threads ask at once (``once``: the dbt
  history macro's answer, which costs a template's compilation).

The front end makes one per command and passes it down (the adapter keeps one per dbt
invocation id, ``Invocations``; the command line one per ``main()`` call). An op called from
Python without one warns every time, which is what a single call should do. What is shared by
every command of the process (engines, the Arrow pool) lives in ``python_ops.runtime``.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Invocation:
    """One command's memory (thread-safe: post-hooks run on parallel threads).

    Args:
        invocation_id: The command's id (dbt's invocation id); None makes one (``cli-<uuid>``).
    """

    def __init__(self, invocation_id: str | None = None) -> None:
        self.id = str(invocation_id) if invocation_id else f"cli-{uuid.uuid4()}"
        self._lock = threading.Lock()
        self._warned: set[tuple[str, str]] = set()
        self._claimed: set[tuple[str, Hashable]] = set()
        self._memos: dict[str, dict[Hashable, Any]] = {}
        self._once_lock = threading.RLock()  # held while a ``once`` value is computed

    def __repr__(self) -> str:
        return f"Invocation({self.id!r})"

    def warn_once(
        self, logger: logging.Logger, cause: str, table: str, message: str, *args: object
    ) -> bool:
        """Log ``message`` as a warning the first time ``cause`` is met for ``table``.

        Args:
            logger: The logger to warn on (the command line's stderr or dbt's events show it).
            cause: What the warning is about (a short fixed name, such as ``short retention``).
            table: The table (or model) it concerns.
            message: The ``logging`` format string.
            *args: Its arguments.

        Returns:
            True when it was logged as a warning; False for a repeat (logged at DEBUG).
        """
        first = self.first_time("warning: " + cause, table)
        logger.log(logging.WARNING if first else logging.DEBUG, message, *args)
        return first

    def first_time(self, what: str, key: Hashable) -> bool:
        """Claim a once-per-command step: True for the first caller only.

        Args:
            what: The step (e.g. ``history upkeep``).
            key: What it is for (e.g. the history's location).

        Returns:
            Whether this call is the first with ``(what, key)`` in this command.
        """
        with self._lock:
            if (what, key) in self._claimed:
                return False
            self._claimed.add((what, key))
            return True

    def memo(self, what: str) -> dict[Hashable, Any]:
        """A cache valid for this command only (one per ``what``).

        Reads and single assignments of a dict are atomic in CPython; a caller that computes a
        value twice on two threads stores the same answer twice, which is harmless for the
        look-ups kept here.

        Args:
            what: What the cache holds (e.g. ``schema locations``).

        Returns:
            The cache, the same object for every call with ``what`` in this command.
        """
        with self._lock:
            return self._memos.setdefault(what, {})

    def once(self, what: str, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``'s value for ``(what, key)``, computed once in this command.

        Threads asking while it is computed wait for that value instead of computing it too
        (``memo`` alone would let each compute it); a value already known is one dict read.
        ``compute`` may itself call ``once`` on the same thread; an exception it raises is not
        kept (the next caller computes again).

        Args:
            what: What the values are (e.g. ``history nodes``).
            key: Which one (e.g. a dbt package).
            compute: Makes the value.

        Returns:
            The value, the same object for every call with ``(what, key)`` in this command.
        """
        known = self.memo(what)
        if key in known:
            found: T = known[key]
            return found
        with self._once_lock:
            if key not in known:
                known[key] = compute()
            value: T = known[key]
            return value


def warn(
    invocation: Invocation | None,
    logger: logging.Logger,
    cause: str,
    table: str,
    message: str,
    *args: object,
) -> None:
    """``invocation.warn_once``; without an invocation (a single call from Python), warn.

    Args:
        invocation: The command, if the caller runs in one.
        logger: The logger to warn on.
        cause: What the warning is about.
        table: The table it concerns.
        message: The ``logging`` format string.
        *args: Its arguments.
    """
    if invocation is None:
        logger.warning(message, *args)
    else:
        invocation.warn_once(logger, cause, table, message, *args)


class Invocations:
    """The current command of a long-lived front end (the adapter across dbt invocations).

    dbt's programmatic runner may run several invocations in one process with one adapter: a new
    invocation id starts a new ``Invocation`` (so its warnings are given again), the same id
    returns the same object (every post-hook of one ``dbt build``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: Invocation | None = None

    def get(self, invocation_id: str | None) -> Invocation:
        """The invocation with this id: the current one, or a new one that becomes current.

        Args:
            invocation_id: dbt's invocation id (None or '': a new command each call).

        Returns:
            The ``Invocation``.
        """
        with self._lock:
            current = self._current
            if invocation_id and current is not None and current.id == str(invocation_id):
                return current
            self._current = Invocation(invocation_id or None)
            return self._current
