"""The op parameter each model setting is passed as, and errors renamed to the user's key.

An op names its own parameter (``zorder_by``); a dbt user wrote ``maintenance_zorder_by``. The
pairs come from the settings' declarations (``config.SETTINGS``: ``op`` and ``param``), once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from python_ops.errors import ConfigError
from python_ops.maintenance.config import SETTINGS


def op_keys(op: str) -> dict[str, str]:
    """The op's parameters set from model settings, each to its ``maintenance_*`` key.

    Args:
        op: The op's registry name.

    Returns:
        Parameter name to config key (e.g. ``retention_hours`` to
        ``maintenance_vacuum_retention_hours``).
    """
    return {s.param: s.key for s in SETTINGS if s.op == op and s.param}


@contextmanager
def named_as_configured(op: str | None) -> Iterator[None]:
    """Re-raise an op's ``ConfigError`` about a parameter under the config key it came from.

    Args:
        op: The op whose settings were passed; None keeps the op's own names (e.g. a
            run-operation's own ``retention_hours`` argument).
    """
    keys = op_keys(op) if op else {}
    try:
        yield
    except ConfigError as err:
        key = keys.get(err.setting)
        if key is None:
            raise
        raise type(err)(setting=key, value=err.value, fix=err.fix, model=err.model) from err
