"""Per-model maintenance config: flat ``maintenance_*`` keys, one typed object, validated once.

dbt replaces dict-valued configs instead of merging them, so every setting is its own flat key
and project → folder → model inheritance works per key. ``MaintenanceConfig`` is the one
declaration of the settings: each field carries its dbt key, default, type, meaning, parser and
the op it belongs to. ``SETTINGS`` (and from it the adapter's accepted keys, ``parse_config`` and
the configuration table of docs/configuration.md) is read from those fields.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from python_ops.delta.table.recorded_retentions import interval_literal
from python_ops.errors import ConfigError, ConfigErrors
from python_ops.ops.optimize.planning.plan import DEFAULT_MIN_SMALL_FILES
from python_ops.ops.optimize.sorting.memory_budget import DEFAULT_MEMORY_BUDGET
from python_ops.ops.purge.options import DEFAULT_DELETED_RATIO
from python_ops.ops.stats.mode import StatsMode
from python_ops.ops.vacuum_modes import VacuumMode
from python_ops.values import MAX_DAYS, MAX_HOURS, checked_number

PREFIX = "maintenance_"
ON_ERROR = ("warn", "fail")
VACUUM_MODES = tuple(VacuumMode)
STATS_MODES = tuple(StatsMode)
# The default OPTIMIZE interval of a model with Z-order columns: a Z-order rewrites every changed
# partition whole, so without one each incremental build would rewrite them all again.
ZORDER_INTERVAL_HOURS = 24.0

Parser = Callable[[str, str, Any], Any]  # (model, key, raw value) -> typed value


def _bool(model: str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(setting=key, value=value, fix="Use true or false.", model=model)


def _retention(model: str, key: str, value: Any) -> float:
    days = key.endswith("_days")
    number = checked_number(
        value, setting=key, above_minimum=True, maximum=MAX_DAYS if days else MAX_HOURS
    )
    try:  # recorded as a table property: it must be an interval literal every engine reads
        interval_literal(number, "days" if days else "hours", setting=key)
    except ConfigError as err:
        raise ConfigError(setting=key, value=value, fix=err.fix, model=model) from err
    return number


def _interval(model: str, key: str, value: Any) -> float:
    return checked_number(value, setting=key, maximum=MAX_HOURS)


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
    if isinstance(value, str):
        value = [c for c in value.split(",") if c.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) for c in value):
        raise ConfigError(setting=key, value=value, fix="Use a list of column names.", model=model)
    return tuple(c.strip() for c in value)


def _min_small_files(model: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise ConfigError(
            setting=key, value=value, fix="Use a whole number of 2 or more.", model=model
        )
    return int(value)


def _min_files_written(model: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(
            setting=key,
            value=value,
            fix="Use a whole number of 0 or more (0: maintain after every build).",
            model=model,
        )
    return int(value)


def _vacuum_mode(model: str, key: str, value: Any) -> VacuumMode:
    if not isinstance(value, str) or value.strip().lower() not in VACUUM_MODES:
        raise ConfigError(
            setting=key,
            value=value,
            fix=f"Choose one of: {', '.join(VACUUM_MODES)} (auto: LITE from the log, FULL when "
            "LITE cannot be complete and every maintenance_vacuum_full_interval_days).",
            model=model,
        )
    return VacuumMode(value.strip().lower())


def _stats_mode(model: str, key: str, value: Any) -> StatsMode:
    if not isinstance(value, str) or value.strip().lower() not in STATS_MODES:
        raise ConfigError(
            setting=key,
            value=value,
            fix="Choose one of: auto, off (auto: fill in missing file statistics for the watched "
            "columns and the table's indexed columns).",
            model=model,
        )
    return StatsMode(value.strip().lower())


def _ratio(model: str, key: str, value: Any) -> float:
    return checked_number(value, setting=key, maximum=1)


def _days(model: str, key: str, value: Any) -> float:
    return checked_number(value, setting=key, maximum=MAX_DAYS)


def _on_error(model: str, key: str, value: Any) -> str:
    if value not in ON_ERROR:
        raise ConfigError(
            setting=key, value=value, fix=f"Choose one of: {', '.join(ON_ERROR)}.", model=model
        )
    return str(value)


def _setting(
    kind: str,
    meaning: str,
    parse: Parser,
    *,
    op: str | None = None,
    key: str = "",
    param: str | None = None,
) -> Any:
    """Field metadata of one setting (see ``Setting``)."""
    return {"kind": kind, "meaning": meaning, "parse": parse, "op": op, "key": key, "param": param}


AUTO = "auto"  # maintenance_zorder_by / maintenance_cluster_by: columns from the advisor


@dataclass(frozen=True)
class AutoChoice:
    """The advisor's columns for a model with ``auto`` clustering, as chosen for this run.

    Attributes:
        columns: The chosen columns (empty: the readers filter on nothing that can cluster).
        previous: The columns the last OPTIMIZE recorded (None: none recorded).
        evidence: Per column, the readers and predicate kinds (JSON text for the history).
        admitted_before: Files admitted per lookup per column before OPTIMIZE.
        note: What the advisor could not resolve, or why nothing was chosen ('' when clean).
    """

    columns: tuple[str, ...]
    previous: tuple[str, ...] | None
    evidence: str = "{}"
    admitted_before: dict[str, float] = field(default_factory=dict)
    note: str = ""

    @property
    def changed(self) -> bool:
        """True when the choice differs from the last recorded one: re-cluster, once."""
        return bool(self.columns) and self.columns != self.previous


@dataclass(frozen=True)
class MaintenanceConfig:
    """One model's maintenance settings; docs/configuration.md lists keys, defaults and meaning.

    Attributes:
        model: The model name, for messages.
        enabled: Master switch.
        vacuum_enabled: Run VACUUM when due.
        optimize_enabled: Run OPTIMIZE when due.
        cleanup_logs_enabled: Run log cleanup when due.
        vacuum_retention_hours: VACUUM retention (None: table property or 168 h).
        vacuum_allow_short_retention: Override of the retention check.
        vacuum_record_short_retention: Record a retention below Delta's 168 h default as the
            table's ``delta.deletedFileRetentionDuration`` too.
        vacuum_interval_hours: Minimum hours between VACUUMs.
        vacuum_mode: ``auto``, ``full`` or ``lite``.
        vacuum_full_interval_days: ``auto``: days between FULL VACUUMs.
        log_retention_days: Log retention (None: table property or 30 days).
        cleanup_logs_interval_hours: Minimum hours between log cleanups.
        zorder_by: Z-order columns (empty: compaction).
        cluster_by: Liquid clustering columns (empty: not clustered by the project).
        target_file_size_bytes: OPTIMIZE target size (None: table property or 100 MiB).
        min_small_files: Small files in a partition before compaction is due.
        memory_budget_bytes: Memory our Z-order's sort may hold per partition.
        optimize_interval_hours: Minimum hours between OPTIMIZEs (None: 24 with Z-order, else
            0; see ``interval_hours``).
        purge_enabled: Run the deletion-vector purge when due.
        purge_deleted_ratio: A partition's deleted-row share above which it is purged.
        purge_interval_hours: Minimum hours between purges.
        stats: ``auto`` keeps file statistics for the watched columns, ``off`` does not.
        stats_columns: Columns to watch besides the table's indexed ones (and the Z-order or
            clustering columns).
        stats_interval_hours: Minimum hours between statistics upkeep runs.
        on_error: ``warn`` or ``fail``.
        min_files_written: The post-hook maintains a model only when its build wrote at least
            this many files (``build_writes``); 0: after every build.
        post_hook_jvm: The post-hook may start Delta's local writer (a JVM); false defers the
            ops that need it to ``maintain_all``.
    """

    model: str
    enabled: bool = field(
        default=True, metadata=_setting("bool", "master switch for the model's maintenance", _bool)
    )
    vacuum_enabled: bool = field(
        default=True, metadata=_setting("bool", "run VACUUM when due", _bool, op="vacuum")
    )
    optimize_enabled: bool = field(
        default=True, metadata=_setting("bool", "run OPTIMIZE when due", _bool, op="optimize")
    )
    cleanup_logs_enabled: bool = field(
        default=True,
        metadata=_setting("bool", "run expired-log cleanup when due", _bool, op="cleanup_logs"),
    )
    vacuum_retention_hours: float | None = field(
        default=None,
        metadata=_setting(
            "number > 0",
            "VACUUM retention; null: the table's delta.deletedFileRetentionDuration, else 168",
            _retention,
            op="vacuum",
            param="retention_hours",
        ),
    )
    vacuum_allow_short_retention: bool = field(
        default=False,
        metadata=_setting(
            "bool",
            "allow a retention below the table's minimum (logged as a warning, once per table "
            "and command)",
            _bool,
            op="vacuum",
            param="allow_short_retention",
        ),
    )
    vacuum_record_short_retention: bool = field(
        default=False,
        metadata=_setting(
            "bool",
            "record a maintenance_vacuum_retention_hours below Delta's 168 h default as the "
            "table's delta.deletedFileRetentionDuration too (log cleanup records the model's "
            "retentions for other engines): a plain VACUUM of any engine then uses it and passes "
            "Delta's safety check. false: such a retention is the package's VACUUM's only; "
            "the table keeps a value someone else set, and one the package recorded goes back "
            "to 168 hours",
            _bool,
            op="vacuum",
        ),
    )
    vacuum_interval_hours: float = field(
        default=24,
        metadata=_setting("number >= 0", "minimum time between VACUUMs", _interval, op="vacuum"),
    )
    vacuum_mode: VacuumMode = field(
        default=VacuumMode.AUTO,
        metadata=_setting(
            "auto | full | lite",
            "full lists storage (finds untracked files too); lite reads the removed files from "
            "the log since the last VACUUM (_delta_log/_last_vacuum_info, as Delta's VACUUM "
            "LITE); auto: lite when it can be complete, full when it cannot and every "
            "maintenance_vacuum_full_interval_days",
            _vacuum_mode,
            op="vacuum",
        ),
    )
    vacuum_full_interval_days: float = field(
        default=7,
        metadata=_setting(
            "number >= 0",
            "auto mode: days between FULL VACUUMs (from the last FULL run recorded in "
            "_delta_log/_last_vacuum_info; 0: always full)",
            _days,
            op="vacuum",
        ),
    )
    log_retention_days: float | None = field(
        default=None,
        metadata=_setting(
            "number > 0",
            "log retention; null: the table's delta.logRetentionDuration, else 30",
            _retention,
            op="cleanup_logs",
            param="retention_days",
        ),
    )
    cleanup_logs_interval_hours: float = field(
        default=24,
        metadata=_setting(
            "number >= 0", "minimum time between log cleanups", _interval, op="cleanup_logs"
        ),
    )
    zorder_by: tuple[str, ...] = field(
        default=(),
        metadata=_setting(
            "list of columns | auto",
            "Z-order columns; empty: compaction only; auto: the advisor's columns (what the "
            "project's SQL filters and joins on, docs/advisor.md), re-clustered once when the "
            "choice changes. A build that replaces every file (a table model, a full refresh) "
            "is re-clustered by its post-hook whatever the interval",
            _columns,
            param="zorder_by",
            op="optimize",
        ),
    )
    cluster_by: tuple[str, ...] = field(
        default=(),
        metadata=_setting(
            "list of columns | auto",
            "liquid clustering columns (alias: dbt-databricks' liquid_clustered_by): on engines "
            "with Delta the table is created, or altered when they change, with CLUSTER BY, and "
            "OPTIMIZE is Delta's clustering OPTIMIZE (OPTIMIZE FULL once after a change; at once "
            "after a build that replaced every file, which Delta writes unclustered); the "
            "embedded engine cannot cluster and warns. Not with maintenance_zorder_by. auto: the "
            "advisor's columns, applied with ALTER TABLE ... CLUSTER BY on an engine with Delta "
            "(again after a rebuild emptied them)",
            _columns,
            op="optimize",
        ),
    )
    target_file_size_bytes: int | None = field(
        default=None,
        metadata=_setting(
            "bytes or '128MB'",
            "OPTIMIZE target file size; null: delta.targetFileSize, else 100 MiB",
            parse_size,
            op="optimize",
            param="target_size_bytes",
            key="maintenance_target_file_size",
        ),
    )
    min_small_files: int = field(
        default=DEFAULT_MIN_SMALL_FILES,
        metadata=_setting(
            "integer >= 2",
            "small files a partition needs before it is compacted (also the OPTIMIZE default)",
            _min_small_files,
            op="optimize",
            param="min_small_files",
        ),
    )
    memory_budget_bytes: int = field(
        default=DEFAULT_MEMORY_BUDGET,
        metadata=_setting(
            "bytes or '1GiB'",
            "memory the package's own Z-order may hold for one partition's rows (1 GiB by "
            "default); a larger partition is sorted in runs spilled as Arrow IPC files to the OS "
            "temp directory and merged (Delta's OPTIMIZE, where it runs, manages its own memory)",
            parse_size,
            op="optimize",
            param="memory_budget_bytes",
            key="maintenance_memory_budget",
        ),
    )
    optimize_interval_hours: float | None = field(
        default=None,
        metadata=_setting(
            "number >= 0",
            "minimum time between OPTIMIZEs; null: 24 with maintenance_zorder_by (a Z-order "
            "rewrites each changed partition whole), else 0 (compaction: whenever the threshold "
            "is met). Not waited for when a write replaced every file of a Z-ordered table "
            "since its last OPTIMIZE: the Z-order went with them",
            _interval,
            op="optimize",
        ),
    )
    purge_enabled: bool = field(
        default=True,
        metadata=_setting(
            "bool",
            "purge soft-deleted rows (REORG TABLE ... APPLY (PURGE), Delta's writer) when due",
            _bool,
            op="purge",
        ),
    )
    purge_deleted_ratio: float = field(
        default=DEFAULT_DELETED_RATIO,
        metadata=_setting(
            "number 0..1",
            "purge a partition when the rows its deletion vectors delete are more than this "
            "share of its rows (the default is Delta's OPTIMIZE maxDeletedRowsRatio)",
            _ratio,
            op="purge",
            param="deleted_ratio",
        ),
    )
    purge_interval_hours: float = field(
        default=24,
        metadata=_setting("number >= 0", "minimum time between purges", _interval, op="purge"),
    )
    stats: StatsMode = field(
        default=StatsMode.OFF,
        metadata=_setting(
            "auto | off",
            "statistics upkeep (docs/stats.md): auto fills in the file statistics data skipping "
            "needs for the watched columns (maintenance_stats_columns, the Z-order or clustering "
            "columns, the table's indexed columns), from Parquet footers or the rows, in one "
            "COMPUTE STATS commit that rewrites no data file; it sets "
            "delta.dataSkippingStatsColumns when a watched column is not indexed",
            _stats_mode,
            op="stats",
        ),
    )
    stats_columns: tuple[str, ...] = field(
        default=(),
        metadata=_setting(
            "list of columns",
            "columns whose file statistics maintenance_stats: auto keeps, besides the table's "
            "indexed columns and the Z-order or clustering columns",
            _columns,
            op="stats",
            param="columns",
        ),
    )
    stats_interval_hours: float = field(
        default=0,
        metadata=_setting(
            "number >= 0",
            "minimum time between statistics upkeep runs (0: whenever files lack statistics)",
            _interval,
            op="stats",
        ),
    )
    on_error: str = field(
        default="warn",
        metadata=_setting("warn | fail", "a failed op warns (model succeeds) or fails", _on_error),
    )
    min_files_written: int = field(
        default=1,
        metadata=_setting(
            "integer >= 0",
            "the post-hook maintains the model only when its build wrote at least this many "
            "files (read from the build's own commits); below it, maintenance is skipped with "
            "the reason in the dbt log and the history. 0: after every build. Run-operations "
            "and the CLI are not affected",
            _min_files_written,
        ),
    )
    post_hook_jvm: bool = field(
        default=False,
        metadata=_setting(
            "bool",
            "whether the post-hook may start a JVM (Delta's own writer on a local Spark, 4-45 s) "
            "for an op only Delta can write on this table (a checkpoint of a deletion-vector "
            "table, a rewrite of a column-mapping table, ...). false: such an op is deferred, "
            "recorded as 'deferred' with the reason in the history and the report, and runs in "
            "the next maintain_all or CLI run, which may start one. Engines with Delta of their "
            "own (Spark, Thrift, Connect) start nothing and are not affected",
            _bool,
        ),
    )
    # not settings: maintenance_zorder_by / maintenance_cluster_by given as 'auto', and the
    # advisor's choice once the runner resolved it (``python_ops.maintenance.runs.auto_columns``)
    zorder_auto: bool = False
    cluster_auto: bool = False
    auto_choice: AutoChoice | None = None

    def op_enabled(self, op: str) -> bool:
        """Whether ``op`` may run for this model."""
        return self.enabled and bool(getattr(self, f"{op}_enabled"))

    def switched_off_by(self, op: str) -> str:
        """The key that switches ``op`` off for this model (for messages; ``op`` is off)."""
        if not self.enabled:
            return "maintenance_enabled"
        return "maintenance_stats" if op == "stats" else f"maintenance_{op}_enabled"

    @property
    def stats_enabled(self) -> bool:
        """Statistics upkeep runs when due (``maintenance_stats: auto``)."""
        return self.stats == StatsMode.AUTO

    @property
    def stats_watched_columns(self) -> tuple[str, ...]:
        """The columns statistics upkeep watches besides the table's indexed ones."""
        return tuple(dict.fromkeys((*self.stats_columns, *self.zorder_by, *self.cluster_by)))

    def interval_hours(self, op: str) -> float:
        """The minimum hours between two runs of ``op`` (an unset OPTIMIZE interval resolved)."""
        hours = getattr(self, f"{op}_interval_hours")
        if hours is None:  # only the OPTIMIZE interval may be unset
            return ZORDER_INTERVAL_HOURS if self.zorder_by or self.zorder_auto else 0.0
        return float(hours)


@dataclass(frozen=True)
class Setting:
    """One maintenance setting, read from its ``MaintenanceConfig`` field.

    Attributes:
        key: The dbt config key (``maintenance_<name>`` unless the field says otherwise).
        name: The ``MaintenanceConfig`` attribute.
        default: The default value.
        kind: The accepted values, for people.
        meaning: What it does.
        parse: Validates a raw value and returns the typed one (raises ``ConfigError``).
        op: The op whose behaviour it sets; None for settings of the whole model.
        param: The op's parameter it is passed as (``retention_hours``), if it is one.
    """

    key: str
    name: str
    default: Any
    kind: str
    meaning: str
    parse: Parser
    op: str | None
    param: str | None = None


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(
        key=f.metadata["key"] or PREFIX + f.name,
        name=f.name,
        default=f.default,
        kind=f.metadata["kind"],
        meaning=f.metadata["meaning"],
        parse=f.metadata["parse"],
        op=f.metadata["op"],
        param=f.metadata["param"],
    )
    for f in fields(MaintenanceConfig)
    if f.metadata
)
KEYS: dict[str, Setting] = {s.key: s for s in SETTINGS}


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
            the model, key, value and the valid choices); ``ConfigErrors`` (a ``ConfigError``)
            listing each of them when the model has more than one.
    """
    errors: list[ConfigError] = []
    for key, near in unknown_keys(config):
        hint = f"Did you mean '{near}'?" if near else f"Valid keys: {', '.join(KEYS)}."
        errors.append(
            ConfigError(setting=key, value=config[key], fix=f"Unknown key. {hint}", model=model)
        )
    values: dict[str, Any] = {}
    for s in SETTINGS:
        if config.get(s.key) is None:
            continue
        if s.name in ("zorder_by", "cluster_by") and _is_auto(config[s.key]):
            values[s.name.replace("_by", "_auto")] = True
            continue
        try:
            values[s.name] = s.parse(model, s.key, config[s.key])
        except ConfigError as err:
            errors.append(err.attributed(model=model))  # a number's check names no model
    if (values.get("zorder_by") or values.get("zorder_auto")) and (
        values.get("cluster_by") or values.get("cluster_auto")
    ):
        errors.append(
            ConfigError(
                setting="maintenance_zorder_by",
                value=list(values["zorder_by"]),
                fix="the model also sets maintenance_cluster_by: a liquid-clustered table is "
                "optimized by clustering and Delta refuses ZORDER BY on it. Keep one of the two.",
                model=model,
            )
        )
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ConfigErrors(errors)
    return MaintenanceConfig(model=model, **values)


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == AUTO


def reference_table() -> str:
    """docs/configuration.md's table of keys, defaults, types and meaning, from ``SETTINGS``.

    Returns:
        A Markdown table (``tests/unit/test_config.py`` checks docs/configuration.md holds it).
    """

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def default(value: Any) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, tuple):
            return str(list(value))
        return str(value)

    lines = ["| key | default | type | meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        lines.append(f"| `{s.key}` | `{default(s.default)}` | {cell(s.kind)} | {cell(s.meaning)} |")
    return "\n".join(lines)
