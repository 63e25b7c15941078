"""Checks of a ``type: sparkdelta`` profile target, made when dbt loads the profile.

dbt ignores keys a credentials class does not declare, so a misspelt ``warehous: wh`` silently
built into the default ``warehouse/`` with a catalog journal of its own. Every key of a target
must be a setting dbt-spark or this adapter declares (dbt itself takes ``type`` and ``threads``
out before the credentials see the target); an unknown one is refused naming the nearest valid
key. Values the engine would only reject later with a message that does not name the setting
are checked here too.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from python_ops.errors import ConfigError
from python_ops.maintenance import EngineMode, checked_number

MAX_PORT = 65535


def check_profile_keys(data: Mapping[str, Any], valid: Iterable[str]) -> None:
    """Refuse keys of a profile target that no setting of the adapter declares.

    Args:
        data: The target as dbt passes it to the credentials (aliases translated).
        valid: Every setting the credentials declare.

    Raises:
        DbtRuntimeError: Naming the unknown key, the nearest valid one and the fix.
    """
    known = sorted(set(valid))
    unknown = sorted(str(key) for key in data if str(key) not in known)
    if not unknown:
        return
    lines = []
    for key in unknown:
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        hint = f"Did you mean '{near[0]}'? Rename it." if near else "Remove it."
        lines.append(f"profile setting '{key}' is not a setting of the sparkdelta adapter. {hint}")
    raise DbtRuntimeError(
        " ".join(lines) + " (dbt would ignore it silently.) Valid settings: " + ", ".join(known)
    )


def check_engine_port(port: Any) -> None:
    """Refuse an ``engine_port`` that is no TCP port.

    Args:
        port: The profile's ``engine_port``.

    Raises:
        DbtRuntimeError: Naming ``engine_port``, the value and the valid range.
    """
    try:
        checked_number(port, setting="engine_port", minimum=0, maximum=MAX_PORT, whole=True)
    except ConfigError as err:
        raise DbtRuntimeError(
            f"profile setting 'engine_port' has bad value {port!r}. Use a TCP port from 1 to "
            f"{MAX_PORT}, or 0 to pick a free one."
        ) from err


def ignored_connect_url(method: str, mode: str, connect_url: str | None) -> str | None:
    """The warning for a ``connect_url`` the target does not use, or None when it is used.

    Args:
        method: The profile's ``method``.
        mode: The profile's ``mode``.
        connect_url: The profile's ``connect_url``.

    Returns:
        A message naming ``connect_url`` and what to set, or None.
    """
    if not connect_url:
        return None
    if method != "session":
        return (
            f"profile setting 'connect_url' ({connect_url}) is ignored with 'method: {method}'; "
            "to use a Spark Connect server set 'method: session' and 'mode: attach', else "
            "remove connect_url."
        )
    if mode != EngineMode.ATTACH:
        return (
            f"profile setting 'connect_url' ({connect_url}) is ignored with 'mode: {mode}': "
            f"dbt runs on the {mode} engine. Set 'mode: attach' to use that Spark Connect "
            "server, or remove connect_url."
        )
    return None
