"""``maintenance_zorder_by: auto`` / ``maintenance_cluster_by: auto``: the advisor's columns.

At run time the runner asks ``resolve_auto`` for each model: the advisor's columns
(``python_ops.advise``) replace ``auto`` in the model's config, with the choice
(``AutoChoice``) beside them. The last choice is the one the history's last OPTIMIZE recorded
(``clustering_columns``); a different one makes OPTIMIZE due and rewrites every partition once
(``full``), the same one leaves OPTIMIZE to its usual rules, so a stable choice never
re-clusters on every run. The choice, its evidence and files admitted per lookup before and
after are written in the history (``clustering_fields``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from python_ops.advise.skipping import files_admitted
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import MaintenanceError
from python_ops.maintenance.configuration.config import AutoChoice, parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.selection.targets import ModelTarget

if TYPE_CHECKING:  # the advisor (and sqlglot) is imported when a model asks for auto
    from python_ops.advise.advisor import ModelAdvice, NodeLocator

log = logging.getLogger("python_ops.maintenance.runs.auto_columns")

AdviceFor = Callable[[ModelTarget], "ModelAdvice | None"]


class ProjectAdvice:
    """The advisor over one project, run once (on first use) and kept for the run.

    Args:
        manifest: dbt's manifest as a dict (with the compiled SQL, or ``target/``'s files).
        project_dir: The project directory.
        locate: A model node to its table (None: not built).
        target_path: dbt's target path, relative to ``project_dir`` (or absolute): the compiled
            and run SQL the advisor reads when the manifest has none.
    """

    def __init__(
        self,
        manifest: Mapping[str, Any],
        project_dir: str,
        locate: NodeLocator,
        target_path: str = "target",
    ) -> None:
        self._manifest = manifest
        self._project_dir = project_dir
        self._locate = locate
        self._target_path = target_path
        self._by_id: dict[str, ModelAdvice] | None = None

    def __call__(self, target: ModelTarget) -> ModelAdvice | None:
        """The advice for ``target`` (None: the manifest has no such maintained model)."""
        if self._by_id is None:
            from python_ops.advise.project import advise_project

            advice = advise_project(
                self._manifest,
                self._project_dir,
                locate=self._locate,
                selected=_auto_models(self._manifest) | {target.unique_id},
                measure_skipping=False,
                target_size=_target_size,
                target_path=self._target_path,
            )
            self._by_id = {a.unique_id: a for a in advice}
        found = self._by_id.get(target.unique_id)
        if found is None:
            found = next((a for a in self._by_id.values() if a.model == target.name), None)
        return found


def _auto_models(manifest: Mapping[str, Any]) -> set[str]:
    """The models asking for ``auto`` columns: the only tables whose sample is read for them."""
    found = set()
    for uid, node in (manifest.get("nodes") or {}).items():
        try:
            config = parse_config(str(node.get("name")), dict(node.get("config") or {}))
        except MaintenanceError:
            found.add(uid)  # its config is refused elsewhere; advising it costs one sample
            continue
        if config.zorder_auto or config.cluster_auto:
            found.add(uid)
    return found


def _target_size(node: Mapping[str, Any]) -> int | None:
    """A model's configured OPTIMIZE target size: the files the advisor cuts its sample into."""
    config = dict(node.get("config") or {})
    return parse_config(str(node.get("name")), config).target_file_size_bytes


def _steady(advice: ModelAdvice, previous: tuple[str, ...] | None) -> tuple[str, ...]:
    from python_ops.advise.advisor import steady_columns

    return steady_columns(advice, previous)


def _previous(history: HistoryStore | None, model: str) -> tuple[str, ...] | None:
    last = history.last_success(model, "optimize") if history is not None else None
    if last is None:
        return None
    if last.clustering_columns is not None:
        return tuple(c for c in last.clustering_columns.split(",") if c)
    try:
        return tuple(json.loads(last.parameters or "{}").get("zorder_by") or ())
    except ValueError:
        return None


def resolve_auto(
    target: ModelTarget, advice_for: AdviceFor, history: HistoryStore | None
) -> ModelTarget:
    """``target`` with ``auto`` replaced by the advisor's columns (unchanged without ``auto``).

    Never raises: an advisor that fails leaves no columns (compaction only), its error noted.
    """
    c = target.config
    if not (c.zorder_auto or c.cluster_auto):
        return target
    note = ""
    try:
        advice = advice_for(target)
    except Exception as err:  # an advisor failure leaves compaction, never fails the model
        advice, note = None, f"advisor failed: {err}"
        log.warning("model %s: maintenance_*_by auto: %s; no columns chosen", c.model, note)
    if advice is None and not note:
        note = "the advisor has no advice for this model (not in the compiled manifest)"
    previous = _previous(history, c.model)
    columns = _steady(advice, previous) if advice else ()
    evidence = {
        col.column: [f"{e.node} ({e.kind})" for e in col.uses]
        for col in (advice.candidates if advice else ())
        if col.column in columns
    }
    if advice is not None:
        note = "; ".join(f"unresolved: {u.node}: {u.reason}" for u in advice.unresolved)
    choice = AutoChoice(
        columns=columns,
        previous=previous,
        evidence=json.dumps(evidence, sort_keys=True),
        note=note,
    )
    config = dataclasses.replace(
        c,
        zorder_by=columns if c.zorder_auto else c.zorder_by,
        cluster_by=columns if c.cluster_auto else c.cluster_by,
        auto_choice=choice,
    )
    return dataclasses.replace(target, config=config)


def admitted_per_column(location: str, columns: tuple[str, ...]) -> dict[str, float]:
    """Files admitted per lookup on each column of the table now (empty when unreadable)."""
    if not columns:
        return {}
    try:
        snapshot = read_snapshot(location, with_stats=True)
        return {c: round(files_admitted(snapshot, c).admitted, 2) for c in columns}
    except MaintenanceError:
        return {}


def clustering_fields(
    choice: AutoChoice, before: Mapping[str, float], after: Mapping[str, float]
) -> dict[str, str | None]:
    """The history's clustering columns for an OPTIMIZE with an ``auto`` choice."""
    return {
        "clustering_columns": ",".join(choice.columns),
        "clustering_evidence": choice.evidence,
        "files_per_lookup_before": json.dumps(dict(before), sort_keys=True),
        "files_per_lookup_after": json.dumps(dict(after), sort_keys=True),
    }
