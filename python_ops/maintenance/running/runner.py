"""Maintain many models: run ops (all, or only what is due), record history, report.

Used by the dbt post-hook (one model, what is due), the run-operations (``vacuum_all`` and its
siblings) and ``python -m python_ops maintain``. Models run on a thread pool; after the time
budget no new model is started. A failed op is recorded and, with ``on_error: warn``, only
logged; with ``fail`` the run reports failure.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from python_ops.delta.state.file_paths import FilePaths, read_file_paths
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta_sql import DeltaSql
from python_ops.errors import JvmDeferredError, MaintenanceError, RetentionTooShortError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.policy import effective_snapshot
from python_ops.maintenance.decisions.build_decisions import decide_from_log
from python_ops.maintenance.decisions.due import Decision, decide
from python_ops.maintenance.facts.build_writes import BuildWrites
from python_ops.maintenance.records.history import HistoryRecord, HistoryStore, parameters_json
from python_ops.maintenance.records.outcomes import OpCounts, Reason, Status
from python_ops.maintenance.rules.empty_origin import EmptyOrigin, record_origin
from python_ops.maintenance.rules.log_bounds import bounds_from_snapshot, keep_bounds
from python_ops.maintenance.running.run_results import MaintenanceRun, OpOutcome, not_due_outcomes
from python_ops.maintenance.runs.auto_columns import AdviceFor, resolve_auto
from python_ops.maintenance.runs.op_runs import RunContext
from python_ops.maintenance.runs.registry import OPS, op_spec
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.lean_arrow import lean_arrow
from python_ops.ops.vacuum import vacuum_retention
from python_ops.ops.vacuum.candidates import ListingEvidence
from python_ops.ops.vacuum.rule.retention import delta_round_hours
from python_ops.ops.vacuum_modes import VacuumEngine
from python_ops.values import retention_text

log = logging.getLogger("python_ops.maintenance.running.runner")


@dataclass
class Maintainer:
    """Runs ops for models and records every run in the history.

    Args:
        spark: A Spark session (VACUUM selects files with the DataFrame API).
        history: Where to record runs; None records nothing.
        invocation: The command it runs in (a dbt invocation, a CLI run): its id is recorded
            with each run; its warnings are given once (``python_ops.invocation``).
        on_progress: Called with (models done, models total, model name).
        sql: Where Delta's own SQL would run (OPTIMIZE goes there when it has Delta); None:
            delta-rs in this process.
        vacuum_engine: Where VACUUM's selection runs: ``SPARK`` (on ``spark``, e.g. a cluster
            the caller attached to) or ``AUTO`` (in this process unless Spark is needed).
        on_model: Called with (models done, models total, model name, its outcomes) after each
            model, e.g. for progress lines that say what was done.
        log_failures: Log each failed op as a warning (False when the caller reports them).
        advice_for: The advisor, for models with ``auto`` clustering columns
            (``auto_columns.resolve_auto``); None: ``auto`` resolves to no columns.
        build: After a build (the post-hook): what it wrote, recorded beside each op's run;
            a build that began where nothing existed also bounds VACUUM's untracked files.
        trust_listing_bounds: VACUUM's due check skips its listing while the history's bound
            holds (``untracked_bound``): the post-hook's, after every build; run-operations
            list (thorough on a schedule).
    """

    spark: Any
    history: HistoryStore | None
    invocation: Invocation
    on_progress: Callable[[int, int, str], None] | None = None
    sql: DeltaSql | None = None
    vacuum_engine: VacuumEngine = VacuumEngine.AUTO
    on_model: Callable[[int, int, str, list[OpOutcome]], None] | None = None
    log_failures: bool = True
    advice_for: AdviceFor | None = None
    build: BuildWrites | None = None
    trust_listing_bounds: bool = False
    _done: int = field(default=0, repr=False)
    _batched: bool = field(default=False, repr=False)

    @property
    def invocation_id(self) -> str:
        """The command's id, recorded with each run."""
        return self.invocation.id

    def _empty_at_ms(self) -> int | None:
        """When the built table's location was empty (its build began there), if it was."""
        facts = self.build.facts if self.build is not None else None
        return facts.started_at_ms if facts is not None and facts.location_was_empty else None

    def _engine_free(self, op: str) -> bool:
        """Whether ``op`` runs wholly in this process, needing no pandas (``lean_arrow``).

        VACUUM selects on Arrow unless asked to select on Spark; log cleanup never starts an
        engine. Other ops may write through Delta on a Spark engine.
        """
        return op == "cleanup_logs" or (op == "vacuum" and self.vacuum_engine != VacuumEngine.SPARK)

    def _decided_from_log(self, target: ModelTarget) -> list[OpOutcome] | None:
        """A run-operation's outcomes when nothing is due, without the snapshot; None: read it.

        ``build_decisions.decide_from_log``: the checksum, the recorded bounds, a listing.
        """
        try:
            with lean_arrow(block_pandas=True):
                decisions = decide_from_log(
                    target,
                    history=self.history,
                    invocation=self.invocation,
                    now_ms=time.time_ns() // 1_000_000,
                )
        except MaintenanceError:
            return None  # the snapshot's rules report it
        return not_due_outcomes(target, decisions) if decisions is not None else None

    def _keep_log_bounds(self, target: ModelTarget, snapshot: Snapshot) -> None:
        """The bounds the snapshot proves, for later decisions without it (``log_bounds``)."""
        keep_bounds(
            self.history,
            target,
            bounds_from_snapshot(snapshot, now_ms=time.time_ns() // 1_000_000),
            invocation_id=self.invocation_id,
            how="a decision read the table's snapshot",
        )

    def _keep_origin(self, target: ModelTarget, snapshot: Snapshot | FilePaths) -> None:
        """A build that created the table where nothing existed: that fact, for later builds.

        Kept here when the post-hook read the snapshot (``build_decisions`` keeps it when it
        proved nothing due without it: one of the two, once per build).
        """
        empty_at_ms = self._empty_at_ms()
        if empty_at_ms is None or self.history is None:
            return
        head = snapshot.head if isinstance(snapshot, FilePaths) else snapshot
        origin = EmptyOrigin(head.metadata.table_id, empty_at_ms)
        record_origin(self.history, target, origin, invocation_id=self.invocation_id)

    def run_op(
        self,
        target: ModelTarget,
        op: str,
        *,
        snapshot: Snapshot | FilePaths | None = None,
        dry_run: bool = False,
        retention_hours: float | None = None,
        reason: Reason = Reason.REQUESTED,
        detail: str = "requested",
        failure: str | None = None,
        evidence: ListingEvidence | None = None,
    ) -> OpOutcome:
        """Run one op on one model and record it.

        Args:
            target: The model.
            op: A registered op.
            snapshot: The table's snapshot as just read (None: the op reads it); for VACUUM
                alone, the log's paths (``read_file_paths``).
            dry_run: Report only.
            retention_hours: VACUUM retention overriding the model's (still safety-checked).
            reason: Why it runs.
            detail: Why, in words (for the report).
            failure: Record this error instead of running (the decision already failed).
            evidence: What the decision found that the run uses (``Decision.evidence``).

        Returns:
            The outcome; failures are caught, logged and recorded.
        """
        c = target.config
        spec = op_spec(op)
        started_at = dt.datetime.now(dt.UTC)
        started = time.perf_counter()
        counts, error, deferred = OpCounts(), failure, None
        context = RunContext(
            spark=self.spark,
            snapshot=snapshot if isinstance(snapshot, Snapshot) else None,
            paths=snapshot if isinstance(snapshot, FilePaths) else None,
            dry_run=dry_run,
            retention_hours=retention_hours,
            sql=self.sql,
            vacuum_engine=self.vacuum_engine,
            evidence=evidence,
            invocation=self.invocation,
        )
        if failure is None:
            counts, error, deferred = self._run_spec(spec, target, context, op)
        duration = time.perf_counter() - started
        status = Status.FAILED if error else Status.DEFERRED if deferred else Status.SUCCEEDED
        if deferred:
            reason, detail = Reason.NEEDS_JVM, deferred
        if error:  # the settings it was called with, as a success records them
            params = counts.parameters or spec.parameters(target, context)
            counts = dataclasses.replace(counts.failed(), parameters=params)
        if error and self.log_failures:
            log.warning("maintenance %s of model %s failed: %s", op, c.model, error)
        if self.history is not None:
            record = HistoryRecord(
                invocation_id=self.invocation_id,
                model=c.model,
                table_location=target.location,
                op=op,
                parameters=parameters_json(counts.parameters),
                dry_run=dry_run,
                status=status,
                error=error,
                started_at=started_at,
                duration_s=duration,
                reason=detail,
                **counts.columns(),
                **(self.build.history_columns() if self.build is not None else {}),
            )
            self._keep_row(record, changed=bool(error) or (not dry_run and counts.changed()))
        return OpOutcome(
            model=c.model,
            op=op,
            status=status,
            reason=Reason.ERROR if error else reason,
            detail=error or detail,
            dry_run=dry_run,
            counts=counts,
            duration_s=duration,
            on_error=c.on_error,
        )

    def _keep_row(self, record: HistoryRecord, *, changed: bool) -> None:
        """Record an op's run: now when it changed the table (or failed), else with the batch.

        Within ``maintain`` a run that changed nothing (nothing to rewrite or delete, a dry
        run) waits for the run's one commit at its end (``_write_rows``): a commit per model
        cost a nothing-to-do model 50 to 300 ms, 20 times the op (issue 65 item 3). A change
        is recorded as it happens, with the rows waiting so far.
        """
        assert self.history is not None
        if self._batched and not changed:
            self.history.defer([record])
            return
        try:
            self.history.append([record])
        except MaintenanceError as err:
            log.warning("model %s: %s", record.model, err)

    def _write_rows(self) -> None:
        """Write the rows ``_keep_row`` kept for the end of the run (one commit)."""
        if self.history is None:
            return
        try:
            self.history.append([])
        except MaintenanceError as err:
            log.warning("maintenance history: %s", err)

    def _run_spec(
        self, spec: Any, target: ModelTarget, context: RunContext, op: str
    ) -> tuple[OpCounts, str | None, str | None]:
        """Run one registered op: (its counts, the error it failed with, why it was deferred)."""
        try:
            with lean_arrow(block_pandas=self._engine_free(op)):
                return spec.run(target, context), None, None
        except JvmDeferredError as err:  # nothing changed; still due for maintain_all
            return OpCounts(), None, str(err)
        except MaintenanceError as err:
            return OpCounts(), str(err), None
        except Exception as err:  # an engine or writer failure must not abort other models
            return OpCounts(), f"{type(err).__name__}: {err}", None

    def maintain_model(
        self,
        target: ModelTarget,
        *,
        ops: tuple[str, ...] = OPS,
        only_due: bool = True,
        dry_run: bool = False,
        retention_hours: float | None = None,
    ) -> list[OpOutcome]:
        """Run ``ops`` on one model: only those due, or all enabled ones.

        The table's log is read once: the snapshot that decides what is due is handed to the
        ops. After an op commits (OPTIMIZE, a purge), the log is read again, and what is due
        next is decided on the new snapshot (an OPTIMIZE that rewrote the files with deletion
        vectors leaves no purge due). When VACUUM is the only enabled op (``vacuum_all``, a
        model that maintains nothing else), the log's paths are read instead
        (``read_file_paths``: the checkpoint's files stay Arrow columns, no object per file),
        as the command line's VACUUM reads them.

        Returns:
            One outcome per op.
        """
        target = resolve_auto(target, self.advice_for or (lambda _t: None), self.history)
        c = target.config
        if only_due and not dry_run and ops == OPS and self.build is None:
            quick = self._decided_from_log(target)
            if quick is not None:  # a run-operation: nothing due, the snapshot not read
                return quick
        outcomes = []
        paths_only = [op for op in ops if c.op_enabled(op)] == ["vacuum"]
        read: Callable[[str], Snapshot | FilePaths] = (
            read_file_paths if paths_only else read_snapshot
        )
        try:
            with lean_arrow():  # reading the log needs neither pandas nor an engine
                snapshot = read(target.location)
        except MaintenanceError as err:  # no table, unreadable log: every enabled op fails
            return self._unread(target, ops, err, dry_run=dry_run, only_due=only_due)
        if isinstance(snapshot, Snapshot) and not dry_run:
            self._keep_log_bounds(target, snapshot)
        if not dry_run:
            self._keep_origin(target, snapshot)
        current: Snapshot | FilePaths | None = snapshot
        for op in ops:
            if current is None:  # the previous op committed: decide on the new snapshot
                try:
                    with lean_arrow():
                        current = read(target.location)
                except MaintenanceError as err:
                    outcomes.append(
                        self._undecided(target, op, err, dry_run=dry_run, only_due=only_due)
                    )
                    continue
            try:  # one op's bad setting (a Z-order column) fails that op only
                d = self._decide_one(target, current, op)
            except MaintenanceError as err:
                outcomes.append(
                    self._undecided(target, op, err, dry_run=dry_run, only_due=only_due, due=True)
                )
                continue
            if d.reason is Reason.DISABLED or (only_due and not d.due):
                outcomes.append(
                    OpOutcome(
                        c.model, d.op, Status.NOT_DUE, d.reason, d.detail, on_error=c.on_error
                    )
                )
                continue
            outcome = self.run_op(
                target,
                d.op,
                snapshot=current,
                dry_run=dry_run,
                retention_hours=retention_hours,
                reason=d.reason if d.due else Reason.REQUESTED,
                detail=d.detail if d.due else f"requested (not due: {d.detail})",
                evidence=d.evidence,  # the decision's listing: the run does not list again
            )
            outcomes.append(outcome)
            version = current.head.version if isinstance(current, FilePaths) else current.version
            if outcome.counts.version_after != version:
                current = None  # the op committed (or failed): the next op reads the log again
        return outcomes

    def _unread(
        self,
        target: ModelTarget,
        ops: tuple[str, ...],
        err: MaintenanceError,
        *,
        dry_run: bool,
        only_due: bool,
    ) -> list[OpOutcome]:
        """The outcomes when the table's log cannot be read: every enabled op failed."""
        c = target.config
        return [
            self._undecided(target, op, err, dry_run=dry_run, only_due=only_due)
            if c.op_enabled(op)
            else OpOutcome(
                c.model,
                op,
                Status.NOT_DUE,
                Reason.DISABLED,
                f"disabled by {c.switched_off_by(op)}",
                on_error=c.on_error,
            )
            for op in ops
        ]

    def _decide_one(self, target: ModelTarget, snapshot: Snapshot | FilePaths, op: str) -> Decision:
        """Whether ``op`` is due on ``snapshot``.

        Raises:
            MaintenanceError: For a setting the check refuses (a Z-order column).
        """
        with lean_arrow(block_pandas=self._engine_free(op)):  # VACUUM's estimate
            return decide(
                target,
                snapshot,
                ops=(op,),
                history=self.history,
                invocation=self.invocation,
                trust_bounds=self.trust_listing_bounds,
                empty_at_ms=self._empty_at_ms(),
            )[0]

    def _undecided(
        self,
        target: ModelTarget,
        op: str,
        err: MaintenanceError,
        *,
        dry_run: bool,
        only_due: bool,
        due: bool = False,
    ) -> OpOutcome:
        """An op that failed before it was decided (no readable log, a failed due check).

        The history's reason says why it was to run: ``requested`` when every enabled op runs,
        else which step failed, so that it could not be decided whether it is due.

        Args:
            target: The model.
            op: The op.
            err: The error.
            dry_run: Report only.
            only_due: Only what is due runs (a post-hook, ``maintain_all``).
            due: The due check failed (else reading the table's log did).

        Returns:
            The failed outcome, recorded.
        """
        if not only_due:
            reason, detail = Reason.REQUESTED, "requested"
        else:
            step = "its due check" if due else "reading the table's log"
            reason, detail = Reason.ERROR, f"not decided: {step} failed"
        return self.run_op(
            target, op, dry_run=dry_run, failure=str(err), reason=reason, detail=detail
        )

    def maintain(
        self, targets: Sequence[ModelTarget], options: RunOptions | None = None
    ) -> MaintenanceRun:
        """Maintain every target on ``options.threads`` workers within a time budget.

        Args:
            targets: The models.
            options: What to run and how (validated when they were built: ``RunOptions``);
                None: every op, what is due, one thread, no budget.

        Returns:
            The run.

        Raises:
            RetentionTooShortError: Once, naming every model whose table's minimum is above
                ``options.retention_hours`` (before any model).
        """
        options = options or RunOptions()
        ops, only_due, dry_run = options.ops, options.only_due, options.dry_run
        retention_hours, time_budget_s = options.retention_hours, options.time_budget_s
        if "vacuum" in ops:
            check_retention_argument(targets, retention_hours)
        started = time.perf_counter()
        not_started: list[str] = []
        total = len(targets)

        def one(target: ModelTarget) -> list[OpOutcome]:
            if time_budget_s is not None and time.perf_counter() - started > time_budget_s:
                not_started.append(target.name)
                return [
                    OpOutcome(
                        target.name, op, Status.SKIPPED, Reason.TIME_BUDGET, "time budget used up"
                    )
                    for op in ops
                ]
            result = self.maintain_model(
                target, ops=ops, only_due=only_due, dry_run=dry_run, retention_hours=retention_hours
            )
            self._done += 1
            if self.on_progress is not None:
                self.on_progress(self._done, total, target.name)
            if self.on_model is not None:
                self.on_model(self._done, total, target.name, result)
            return result

        self._batched = True
        try:
            with ThreadPoolExecutor(max_workers=options.threads) as pool:
                per_model = list(pool.map(one, targets))
        finally:
            self._batched = False
            self._write_rows()
        return MaintenanceRun(
            outcomes=tuple(o for outcomes in per_model for o in outcomes),
            models_started=total - len(not_started),
            models_not_started=tuple(sorted(not_started)),
            duration_s=time.perf_counter() - started,
        )


def check_retention_argument(targets: Sequence[ModelTarget], retention_hours: float | None) -> None:
    """Refuse a caller's VACUUM retention below some table's minimum once, before any op runs.

    The argument belongs to the run, not to a model: one error naming every model it is too short
    for (and their minimums) replaces one failed VACUUM per model. Models that allow short
    retention (``maintenance_vacuum_allow_short_retention``) or have VACUUM switched off are
    not checked; a table that cannot be read is left to the op to report.

    Args:
        targets: The models of the run.
        retention_hours: The caller's retention (None: each model's own, nothing to check).

    Raises:
        RetentionTooShortError: When the retention is below one or more tables' minimum.
    """
    if retention_hours is None:
        return
    hours = float(delta_round_hours(float(retention_hours)))  # as VACUUM rounds it: half up
    short: list[tuple[str, float]] = []
    for target in targets:
        c = target.config
        if not c.op_enabled("vacuum") or c.vacuum_allow_short_retention:
            continue
        try:
            minimum = vacuum_retention(
                # only the table's properties matter: the log's paths stay columns (no object
                # per file); a retention the package recorded is no floor (``policy``)
                effective_snapshot(read_file_paths(target.location).head),
                None,
                allow_short_retention=False,
            )[0].hours
        except MaintenanceError:
            continue
        if hours < minimum:
            short.append((target.name, minimum))
    if short:
        models = ", ".join(f"{name} ({retention_text(minimum)})" for name, minimum in short)
        raise RetentionTooShortError(
            setting="retention_hours",
            value=retention_hours,
            fix=f"It is below the minimum retention (delta.deletedFileRetentionDuration) of "
            f"{len(short)} model(s): {models}; files of writers that have not committed yet "
            f"could be deleted. Nothing was run. Pass retention_hours of at least "
            f"{max(m for _, m in short):g}, or set "
            "'maintenance_vacuum_allow_short_retention: true' on those models.",
        )
