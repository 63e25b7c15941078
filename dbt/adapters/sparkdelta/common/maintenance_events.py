"""What maintenance tells the dbt user, through dbt's own event system.

A warning here is dbt's ``JinjaLogWarning`` (the event ``exceptions.warn`` fires in a macro):
it shows in the console and in ``logs/dbt.log`` at warn level, and ``--warn-error`` (or
``--warn-error-options '{"error": ["JinjaLogWarning"]}'``) turns it into an error. dbt's
``WARN=`` count in the run summary counts node results whose status is ``warn``, which only
tests have; a model's post-hook cannot set it, so a failed op under ``on_error: warn`` is a
warning event next to a model that succeeded.

``python_ops`` logs with the standard ``logging`` module; ``python_ops_logs_to_dbt`` sends those
records into dbt's events too (without it Python prints bare ``WARNING:`` lines dbt does not
keep, and drops the INFO progress of a long VACUUM).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dbt.events.types import JinjaLogInfo, JinjaLogWarning
from dbt_common.events.base_types import EventLevel
from dbt_common.events.functions import fire_event, warn_or_error
from dbt_common.events.types import Note
from dbt_common.ui import warning_tag

from dbt.adapters.sparkdelta.common import runtime

_QUIET_LOGGERS = ("python_ops.ops.audit",)  # JSON audit lines: dbt.log only


def warn(message: str, node: Any = None) -> None:
    """Fire a dbt warning (``JinjaLogWarning``); an error under ``--warn-error``.

    Args:
        message: The full warning (shown after dbt's ``[WARNING]:`` tag).
        node: The dbt node it concerns, if any.
    """
    warn_or_error(JinjaLogWarning(msg=warning_tag(message)), node=node)


def notice(message: str) -> None:
    """Show a warning line in dbt's console that never becomes an error (``--warn-error``).

    For what the engine notices about the warehouse (a table whose files are gone), where a
    raised error would stop the engine itself.
    """
    fire_event(JinjaLogWarning(msg=warning_tag(message)), level=EventLevel.WARN)


def info(message: str) -> None:
    """Show a line in dbt's console and ``logs/dbt.log`` (as ``log(..., info=True)`` does)."""
    fire_event(JinjaLogInfo(msg=message))


def debug(message: str) -> None:
    """Write a line to ``logs/dbt.log`` only (dbt's file log is at debug level by default)."""
    fire_event(Note(msg=message), level=EventLevel.DEBUG)


class _DbtEventHandler(logging.Handler):
    """Sends ``python_ops`` log records to dbt's events."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not break the op that logged it
            self.handleError(record)
            return
        if record.levelno >= logging.WARNING:
            fire_event(Note(msg=message), level=EventLevel.WARN)
        elif record.levelno >= logging.INFO and not record.name.startswith(_QUIET_LOGGERS):
            fire_event(Note(msg=message), level=EventLevel.INFO)
        else:
            fire_event(Note(msg=message), level=EventLevel.DEBUG)


_HANDLER = _DbtEventHandler(level=logging.INFO)


def _enter() -> None:
    logger = logging.getLogger("python_ops")
    bridge = runtime.LOG_BRIDGE
    with bridge.lock:
        if bridge.value.users == 0:
            bridge.value.saved = (logger.level, logger.propagate)
            logger.addHandler(_HANDLER)
            if logger.level == logging.NOTSET or logger.level > logging.INFO:
                logger.setLevel(logging.INFO)  # clears every logger's cache: not per call
            logger.propagate = False  # dbt's events are the output: no bare copies via root
        bridge.value.users += 1


def _leave() -> None:
    logger = logging.getLogger("python_ops")
    bridge = runtime.LOG_BRIDGE
    with bridge.lock:
        bridge.value.users -= 1
        if bridge.value.users == 0:
            logger.removeHandler(_HANDLER)
            logger.setLevel(bridge.value.saved[0])
            logger.propagate = bridge.value.saved[1]


@contextmanager
def python_ops_logs_to_dbt() -> Iterator[None]:
    """While maintenance runs, send the ``python_ops`` loggers' INFO and above to dbt's events.

    Only for the duration (threads share one count), so that the process's logging is as it
    was between maintenance calls (a test's log capture, another library's handlers); a dbt
    command whose post-hooks hold the bridge (``hold_python_ops_logs``) keeps it until it ends.
    """
    _enter()
    try:
        yield
    finally:
        _leave()


def hold_python_ops_logs() -> None:
    """Keep the bridge until the dbt command ends (``release_python_ops_logs``).

    For the post-hook: entering and leaving per model set the logger's level twice per model,
    and ``Logger.setLevel`` clears the cache of every logger of the process (dbt has hundreds),
    about 0.3 ms each on the hook's thread.
    """
    bridge = runtime.LOG_BRIDGE
    with bridge.lock:
        if bridge.value.held:
            return
        bridge.value.held = True
    _enter()


def release_python_ops_logs() -> None:
    """The dbt command ended: give the bridge back if a post-hook held it."""
    bridge = runtime.LOG_BRIDGE
    with bridge.lock:
        if not bridge.value.held:
            return
        bridge.value.held = False
    _leave()
