"""Per-model maintenance config: flat ``maintenance_*`` keys, one typed object, validated once.

dbt replaces dict-valued configs instead of merging them, so every setting is its own flat key
and project → folder → model inheritance works per key. ``KEYS`` is the single table of keys,
types and defaults; the README's configuration reference is generated from the same table.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.errors import ConfigError
from python_ops.values import MAX_DAYS, MAX_HOURS, checked_number

PREFIX = "maintenance_"
OPS = ("vacuum", "optimize", "cleanup_logs")
ON_ERROR = ("warn", "fail")

# key: (default, type description, meaning)
KEYS: dict[str, tuple[Any, str, str]] = {
    "maintenance_enabled": (True, "bool", "master switch for the model's maintenance"),
    "maintenance_vacuum_enabled": (True, "bool", "run VACUUM when due"),
    "maintenance_optimize_enabled": (True, "bool", "run OPTIMIZE when due"),
    "maintenance_cleanup_logs_enabled": (True, "bool", "run expired-log cleanup when due"),
    "maintenance_vacuum_retention_hours": (
        None,
        "number > 0",
        "VACUUM retention; null: the table's delta.deletedFileRetentionDuration, else 168",
    ),
    "maintenance_vacuum_allow_short_retention": (
        False,
        "bool",
        "allow a retention below the table's minimum (logged as a warning on every use)",
    ),
    "maintenance_vacuum_interval_hours": (24, "number >= 0", "minimum time between VACUUMs"),
    "maintenance_log_retention_days": (
        None,
        "number > 0",
        "log retention; null: the table's delta.logRetentionDuration, else 30",
    ),
    "maintenance_cleanup_logs_interval_hours": (
        24,
        "number >= 0",
        "minimum time between log cleanups",
    ),
    "maintenance_zorder_by": ([], "list of columns", "Z-order columns; empty: compaction only"),
    "maintenance_target_file_size": (
        None,
        "bytes or '128MB'",
        "OPTIMIZE target file size; null: delta.targetFileSize, else 100 MiB",
    ),
    "maintenance_min_small_files": (
        10,
        "integer >= 2",
        "small files a partition needs before compaction is due",
    ),
    "maintenance_optimize_interval_hours": (
        0,
        "number >= 0",
        "minimum time between OPTIMIZEs (0: whenever the threshold is met)",
    ),
    "maintenance_on_error": ("warn", "warn | fail", "a failed op warns (model succeeds) or fails"),
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|kib|mib|gib)?\s*$", re.IGNORECASE)
_UNITS = {
    None: 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}


@dataclass(frozen=True)
class MaintenanceConfig:
    """One model's maintenance settings (see ``KEYS`` for defaults and meaning).

    Attributes:
        model: The model name, for messages.
        enabled: Master switch.
        vacuum_enabled: Run VACUUM when due.
        optimize_enabled: Run OPTIMIZE when due.
        cleanup_logs_enabled: Run log cleanup when due.
        vacuum_retention_hours: VACUUM retention (None: table property or 168 h).
        vacuum_allow_short_retention: Override of the retention check.
        vacuum_interval_hours: Minimum hours between VACUUMs.
        log_retention_days: Log retention (None: table property or 30 days).
        cleanup_logs_interval_hours: Minimum hours between log cleanups.
        zorder_by: Z-order columns (empty: compaction).
        target_file_size_bytes: OPTIMIZE target size (None: table property or 100 MiB).
        min_small_files: Small files in a partition before compaction is due.
        optimize_interval_hours: Minimum hours between OPTIMIZEs.
        on_error: ``warn`` or ``fail``.
    """

    model: str
    enabled: bool = True
    vacuum_enabled: bool = True
    optimize_enabled: bool = True
    cleanup_logs_enabled: bool = True
    vacuum_retention_hours: float | None = None
    vacuum_allow_short_retention: bool = False
    vacuum_interval_hours: float = 24
    log_retention_days: float | None = None
    cleanup_logs_interval_hours: float = 24
    zorder_by: tuple[str, ...] = ()
    target_file_size_bytes: int | None = None
    min_small_files: int = 10
    optimize_interval_hours: float = 0
    on_error: str = "warn"

    def op_enabled(self, op: str) -> bool:
        """Whether ``op`` may run for this model."""
        return self.enabled and bool(getattr(self, f"{op}_enabled"))

    def interval_hours(self, op: str) -> float:
        """The minimum hours between two runs of ``op``."""
        return float(getattr(self, f"{op}_interval_hours"))


def _bool(model: str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(setting=key, value=value, fix="Use true or false.", model=model)


def _number(model: str, key: str, value: Any, *, positive: bool) -> float:
    maximum = MAX_DAYS if key.endswith("_days") else MAX_HOURS
    return checked_number(value, setting=key, model=model, above_minimum=positive, maximum=maximum)


def parse_size(model: str, key: str, value: Any) -> int:
    """Bytes from an integer or a string like ``128MB`` / ``1GiB``.

    Raises:
        ConfigError: For anything else or a size of 0.
    """
    match = _SIZE.match(str(value)) if not isinstance(value, bool) else None
    if match is None:
        raise ConfigError(
            setting=key,
            value=value,
            fix="Use bytes (134217728) or a size like '128MB' or '1GiB'.",
            model=model,
        )
    size = int(float(match.group(1)) * _UNITS[(match.group(2) or "b").lower()])
    if size <= 0:
        raise ConfigError(setting=key, value=value, fix="Use a size above 0.", model=model)
    return size


def _columns(model: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [c for c in value.split(",") if c.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) for c in value):
        raise ConfigError(setting=key, value=value, fix="Use a list of column names.", model=model)
    return tuple(c.strip() for c in value)


def unknown_keys(config: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """``maintenance_*`` keys that are not settings, each with the nearest valid key."""
    out = []
    for key in config:
        if key.startswith(PREFIX) and key not in KEYS:
            near = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.6)
            out.append((key, near[0] if near else None))
    return out


def parse_config(model: str, config: Mapping[str, Any]) -> MaintenanceConfig:
    """Build and validate a model's ``MaintenanceConfig`` from its dbt config.

    Args:
        model: The model name.
        config: The model's resolved dbt config (keys other than ``maintenance_*`` ignored).

    Returns:
        The typed config.

    Raises:
        ConfigError: For a misspelt key (naming the nearest valid one) or a bad value (naming
            the model, key, value and the valid choices).
    """
    for key, near in unknown_keys(config):
        hint = f"Did you mean '{near}'?" if near else f"Valid keys: {', '.join(KEYS)}."
        raise ConfigError(setting=key, value=config[key], fix=f"Unknown key. {hint}", model=model)
    raw = {k: config.get(k) for k in KEYS}
    values: dict[str, Any] = {}
    for key in (
        "maintenance_enabled",
        "maintenance_vacuum_enabled",
        "maintenance_optimize_enabled",
        "maintenance_cleanup_logs_enabled",
        "maintenance_vacuum_allow_short_retention",
    ):
        if raw[key] is not None:
            values[key[len(PREFIX) :]] = _bool(model, key, raw[key])
    for key, positive in (
        ("maintenance_vacuum_retention_hours", True),
        ("maintenance_log_retention_days", True),
        ("maintenance_vacuum_interval_hours", False),
        ("maintenance_cleanup_logs_interval_hours", False),
        ("maintenance_optimize_interval_hours", False),
    ):
        if raw[key] is not None:
            values[key[len(PREFIX) :]] = _number(model, key, raw[key], positive=positive)
    if raw["maintenance_zorder_by"] is not None:
        values["zorder_by"] = _columns(model, "maintenance_zorder_by", raw["maintenance_zorder_by"])
    if raw["maintenance_target_file_size"] is not None:
        values["target_file_size_bytes"] = parse_size(
            model, "maintenance_target_file_size", raw["maintenance_target_file_size"]
        )
    if raw["maintenance_min_small_files"] is not None:
        count = raw["maintenance_min_small_files"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 2:
            raise ConfigError(
                setting="maintenance_min_small_files",
                value=count,
                fix="Use a whole number of 2 or more.",
                model=model,
            )
        values["min_small_files"] = count
    if raw["maintenance_on_error"] is not None:
        if raw["maintenance_on_error"] not in ON_ERROR:
            raise ConfigError(
                setting="maintenance_on_error",
                value=raw["maintenance_on_error"],
                fix=f"Choose one of: {', '.join(ON_ERROR)}.",
                model=model,
            )
        values["on_error"] = raw["maintenance_on_error"]
    return MaintenanceConfig(model=model, **values)


def reference_table() -> str:
    """The README's table of keys, defaults, types and meaning, rendered from ``KEYS``.

    Returns:
        A Markdown table (``tests/test_maintenance_config.py`` checks the README holds it).
    """

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def default(value: Any) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return str(value).lower()
        return str(value)

    lines = ["| key | default | type | meaning |", "|---|---|---|---|"]
    for key, (value, kind, meaning) in KEYS.items():
        lines.append(f"| `{key}` | `{default(value)}` | {cell(kind)} | {cell(meaning)} |")
    return "\n".join(lines)


def check_ops(ops: Any) -> tuple[str, ...]:
    """Validate a list of op names (run-operation and CLI arguments).

    Raises:
        ConfigError: For an unknown op, naming the valid ones.
    """
    names = [ops] if isinstance(ops, str) else list(ops or OPS)
    for op in names:
        if op not in OPS:
            near = difflib.get_close_matches(str(op), OPS, n=1)
            hint = f" Did you mean '{near[0]}'?" if near else ""
            raise ConfigError(setting="ops", value=op, fix=f"Choose from: {', '.join(OPS)}.{hint}")
    return tuple(names)
