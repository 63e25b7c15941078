"""The op registry: each maintenance op declared once.

An ``OpSpec`` says which settings belong to the op (``settings``, from ``config``), how it
decides it is due from the table's snapshot (``due``: ``due_rules``), how the runner runs it for
a model (``run``: ``op_runs``, returning the ``OpCounts`` that history and reports keep), and how
a direct call with explicit options runs it (``invoke``: the CLI and the adapter). The runner,
``due``, the CLI, the adapter and the report iterate over ``REGISTRY``; nothing else lists the
ops.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.delta.state.snapshot import Snapshot
from python_ops.delta_sql import DeltaSql
from python_ops.errors import ConfigError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import SETTINGS, Setting
from python_ops.maintenance.configuration.op_keys import as_model_setting, model_audit, model_words
from python_ops.maintenance.records.outcomes import OpCounts
from python_ops.maintenance.rules import due_rules
from python_ops.maintenance.runs import op_runs
from python_ops.maintenance.runs.op_runs import RunContext
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.log_cleanup import cleanup_logs
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.rule.retention import OverrideWords

# Keyword arguments that are not options a caller passes: given by ``invoke`` itself, or
# handed between the runner's steps (VACUUM's due check's listing, ``reclaim``).
_NOT_OPTIONS = ("spark", "sql", "evidence", "audit")

DueCheck = Callable[[ModelTarget, Snapshot, int], tuple[bool, str]]
Runner = Callable[[ModelTarget, RunContext], OpCounts]
Parameters = Callable[[ModelTarget, RunContext], dict[str, Any]]


@dataclass(frozen=True)
class OpSpec:
    """One maintenance op, declared once.

    Attributes:
        name: The op's name (settings ``maintenance_<name>_*``, history, ``--ops``).
        title: How people call it.
        due: (model, snapshot, now in ms) to (due, why).
        run: Runs it for a model with its config.
        parameters: The settings it runs with, as ``run`` records them in ``OpCounts``
            (a run that failed before returning them records these).
        load: Returns the op function, for direct calls (``invoke``); imported on first use so
            that a command needing one op does not load the others.
        needs_spark: The op takes a ``spark`` session.
        takes_sql: The op can hand its work to Delta's own SQL (``sql``).
        takes_invocation: The op warns once per command (``invocation``) and words an allowed
            short retention as its caller does (``words``).
    """

    name: str
    title: str
    due: DueCheck
    run: Runner
    parameters: Parameters
    load: Callable[[], Callable[..., Any]]
    needs_spark: bool = False
    takes_sql: bool = False
    takes_invocation: bool = False

    @property
    def settings(self) -> tuple[Setting, ...]:
        """The model settings that belong to this op."""
        return tuple(s for s in SETTINGS if s.op == self.name)

    def invoke(
        self,
        location: str,
        *,
        spark: Any,
        model: str | None,
        sql: DeltaSql | None = None,
        invocation: Invocation | None = None,
        words: OverrideWords | None = None,
        **options: Any,
    ) -> Any:
        """Call the op directly with explicit options (the CLI's and the adapter's calls).

        The op knows the table only: for a model, its errors are re-raised naming the model
        (``op_keys.as_model_setting``; options keep their own names, as the caller gave them),
        its audit record carries the model and its warnings name it.

        Args:
            location: The table.
            spark: A Spark session (used by ops that need one).
            model: The dbt model the op runs for (None: a table path).
            sql: Where Delta's own SQL would run (used by ops that can hand work to it).
            invocation: The command it runs in (used by ops that warn once per command).
            words: How warnings name the table and the override on a table path (a model's
                are the model's name and key).
            **options: The op's keyword arguments.

        Returns:
            The op's result.

        Raises:
            ConfigError: For an option the op does not take.
        """
        function = self.load()
        accepted = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in _NOT_OPTIONS
        ]
        for key in options:
            if key not in accepted:
                raise ConfigError(
                    setting=key,
                    value=options[key],
                    fix=f"{self.name} takes: {', '.join(accepted)}.",
                    model=model,
                )
        if self.needs_spark:
            options["spark"] = spark
        if self.takes_sql:
            options["sql"] = sql
        if self.takes_invocation:
            options["invocation"] = invocation
            options["words"] = model_words(model) if model is not None else words
        if model is not None:
            options["audit"] = model_audit(model)
        with as_model_setting(model):
            return function(location, **options)


REGISTRY: Mapping[str, OpSpec] = {
    spec.name: spec
    for spec in (
        OpSpec(
            "vacuum",
            "VACUUM",
            due_rules.vacuum_is_due,
            op_runs.run_vacuum,
            op_runs.vacuum_parameters,
            lambda: vacuum,
            needs_spark=True,
            takes_invocation=True,
        ),
        OpSpec(
            "optimize",
            "OPTIMIZE",
            due_rules.optimize_is_due,
            op_runs.run_optimize,
            op_runs.optimize_parameters,
            op_runs.load_optimize,
            takes_sql=True,
        ),
        OpSpec(
            "cleanup_logs",
            "expired-log cleanup",
            due_rules.cleanup_logs_is_due,
            op_runs.run_cleanup_logs,
            op_runs.cleanup_logs_parameters,
            lambda: cleanup_logs,
        ),
        OpSpec(
            "purge",
            "deletion-vector purge",
            due_rules.purge_is_due,
            op_runs.run_purge,
            op_runs.purge_parameters,
            op_runs.load_purge,
            takes_sql=True,
        ),
        OpSpec(
            "stats",
            "statistics upkeep",
            due_rules.stats_is_due,
            op_runs.run_stats,
            op_runs.stats_parameters,
            op_runs.load_stats,
        ),
    )
}
OPS: tuple[str, ...] = tuple(REGISTRY)


def op_spec(name: Any) -> OpSpec:
    """The registered op called ``name``.

    Raises:
        ConfigError: For an unknown op, naming the valid ones and the nearest.
    """
    spec = REGISTRY.get(str(name))
    if spec is None:
        near = difflib.get_close_matches(str(name), OPS, n=1)
        hint = f" Did you mean '{near[0]}'?" if near else ""
        raise ConfigError(setting="ops", value=name, fix=f"Choose from: {', '.join(OPS)}.{hint}")
    return spec


def check_ops(ops: Any) -> tuple[str, ...]:
    """Validate a list of op names (run-operation and CLI arguments); None means every op.

    Raises:
        ConfigError: For an unknown op, naming the valid ones.
    """
    names = [ops] if isinstance(ops, str) else list(ops or OPS)
    return tuple(op_spec(op).name for op in names)
