"""One warning per cause and table per command.

One command meets the same condition several times: VACUUM's retention check runs in the due
check's estimate, in the report's dry run and in the run itself, so a short-retention override
would be warned about two to four times. ``warn_once`` logs the first at WARNING (through the
``logging`` logger given, so that the command line's stderr or dbt's events show it) and the
repeats at DEBUG.

A command is one process (the command line, a ``dbt`` invocation). A process that runs several
calls ``begin_command`` between them: the command line does for each ``main()`` call, the
maintenance runner with the dbt invocation id (a new id starts a new command).
"""

from __future__ import annotations

import logging
import threading

_lock = threading.Lock()
_seen: set[tuple[str, str]] = set()
_command: list[str | None] = [None]


def begin_command(command: str | None = None) -> None:
    """Start a command: every warning may be given once more.

    Args:
        command: The command's id (a dbt invocation id). With an id, nothing is forgotten when
            it is the current command's (callers may say so once per model); None always
            starts a new command.
    """
    with _lock:
        if command is not None and command == _command[0]:
            return
        _command[0] = command
        _seen.clear()


def warn_once(logger: logging.Logger, cause: str, table: str, message: str, *args: object) -> bool:
    """Log ``message`` as a warning the first time ``cause`` is met for ``table`` in this command.

    Args:
        logger: The logger to warn on.
        cause: What the warning is about (a short fixed name, such as ``short retention``).
        table: The table (or model) it concerns.
        message: The ``logging`` format string.
        *args: Its arguments.

    Returns:
        True when it was logged as a warning; False for a repeat (logged at DEBUG).
    """
    key = (cause, table)
    with _lock:
        first = key not in _seen
        _seen.add(key)
    logger.log(logging.WARNING if first else logging.DEBUG, message, *args)
    return first
