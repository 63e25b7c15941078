"""The command line's logging: progress and warnings on stderr, audit records where asked.

Every op writes one audit record (a JSON line on the ``python_ops.ops.audit`` logger, level
INFO). On the command line those lines are not printed by default:
``--verbose`` prints them on stderr with everything else logged at INFO or above, and
``--audit-log FILE`` appends them to a file, one JSON object per line, for a scheduler to keep.
Progress and warnings of the ops (``python_ops.*`` at INFO and above) always go to stderr.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from python_ops.ops.audit import log as audit_log

PACKAGE_LOGGER = "python_ops"


class _Plain(logging.Formatter):
    """``message`` for INFO, ``warning: message`` (``error: ...``) above it."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.levelno > logging.INFO:
            return f"{record.levelname.lower()}: {text}"
        return text


def _not_audit(record: logging.LogRecord) -> bool:
    return record.name != audit_log.name


def configure_logging(*, verbose: bool, audit_file: str | None) -> Callable[[], None]:
    """Route ``python_ops`` logging for one command line run.

    Args:
        verbose: Also print audit records (and DEBUG messages) on stderr.
        audit_file: Append audit records to this file, if given.

    Returns:
        A function that undoes it (``main`` calls it on return, so in-process callers such as
        tests keep their own logging).
    """
    package = logging.getLogger(PACKAGE_LOGGER)
    saved = (package.level, audit_log.level)
    handlers: list[tuple[logging.Logger, logging.Handler]] = []

    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(_Plain())
    if not verbose:
        stderr.addFilter(_not_audit)
    package.addHandler(stderr)
    handlers.append((package, stderr))
    if audit_file:
        to_file = logging.FileHandler(audit_file, encoding="utf-8")
        to_file.setFormatter(logging.Formatter("%(message)s"))
        audit_log.addHandler(to_file)
        handlers.append((audit_log, to_file))
    package.setLevel(logging.DEBUG if verbose else logging.INFO)
    audit_log.setLevel(logging.INFO)

    def undo() -> None:
        for logger, handler in handlers:
            logger.removeHandler(handler)
            handler.close()
        package.setLevel(saved[0])
        audit_log.setLevel(saved[1])

    return undo
