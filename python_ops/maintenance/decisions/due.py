"""What maintenance is due for a model: its config, its table's snapshot and the history.

Only the snapshot the runner has already read is used (no data file is listed, the log is not
read again), so deciding costs a few milliseconds and the post-hook is nearly free when nothing
is due. Each op's own rule is its ``due`` in ``registry``; this module applies what every op
shares: the switches and the minimum interval since the op's last successful run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason
from python_ops.maintenance.rules.due_rules import rebuilt_layout, vacuum_decision
from python_ops.maintenance.runs.registry import OPS, op_spec
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum.candidates import ListingEvidence


@dataclass(frozen=True)
class Decision:
    """Whether one op is due for one model, and why.

    Attributes:
        op: The op.
        reason: ``DUE``, ``NOT_DUE``, ``DISABLED`` or ``TOO_SOON``.
        detail: The reason in words, for logs and reports.
        due_in_h: Hours until its minimum interval has passed (``TOO_SOON`` only).
        evidence: What the decision found that the op's run uses (VACUUM: the listing its
            dry run made, ``reclaim``), handed to the run by the runner; None: nothing.
    """

    op: str
    reason: Reason
    detail: str
    due_in_h: float | None = None
    evidence: ListingEvidence | None = field(default=None, repr=False, compare=False)

    @property
    def due(self) -> bool:
        """True when the op should run now."""
        return self.reason is Reason.DUE


def _too_soon(
    target: ModelTarget, op: str, history: HistoryStore | None, now_s: float
) -> Decision | None:
    config = target.config
    last = history.last_success(config.model, op) if history is not None else None
    if last is None:  # never ran: no interval to wait for (most ops of most tables)
        return None
    hours = config.interval_hours(op)
    if hours <= 0:
        return None
    age_h = (now_s - last.started_s) / 3600
    if age_h < hours:
        detail = f"last run {age_h:.1f} h ago, interval {hours:g} h"
        return Decision(op, Reason.TOO_SOON, detail, due_in_h=hours - age_h)
    return None


def _interval_waived(
    target: ModelTarget, settled: Decision, snapshot: Snapshot | FilePaths
) -> bool:
    """Whether OPTIMIZE's interval gives way: a build replaced a Z-ordered table's files."""
    return (
        settled.op == "optimize"
        and settled.reason is Reason.TOO_SOON
        and isinstance(snapshot, Snapshot)
        and rebuilt_layout(target, snapshot) is not None
    )


def decide(
    target: ModelTarget,
    snapshot: Snapshot | FilePaths,
    *,
    ops: tuple[str, ...] = OPS,
    history: HistoryStore | None = None,
    now_s: float | None = None,
    invocation: Invocation | None = None,
    trust_bounds: bool = False,
    empty_at_ms: int | None = None,
) -> list[Decision]:
    """Decide which of ``ops`` are due for a model.

    Args:
        target: The model (its config and table location).
        snapshot: Its table's latest snapshot, as the runner read it; or, when VACUUM is the
            only op to decide, the log's paths (``read_file_paths``).
        ops: Ops to consider.
        history: The maintenance history (for the minimum intervals).
        now_s: The current time (None = now).
        invocation: The command it runs in (a check's warnings once per command).
        trust_bounds: VACUUM skips its listing while a recorded bound holds (the post-hook).
        empty_at_ms: When nothing existed at the table's location (its build began there):
            with ``trust_bounds``, VACUUM's bound without a listing (``untracked_bound``).

    Returns:
        One decision per op, in ``ops`` order.

    Raises:
        ConfigError: For bad settings found against the table (e.g. a Z-order column).
        ValueError: For the log's paths given to decide an op other than VACUUM.
    """
    now = time.time() if now_s is None else now_s
    out = []
    for op in ops:
        settled = decided_without_table(target, op, history, now)
        if settled is not None and not _interval_waived(target, settled, snapshot):
            out.append(settled)
            continue
        if op == "vacuum":  # decided with its evidence: the listing its dry run made
            v = vacuum_decision(
                target,
                snapshot,
                int(now * 1000),
                invocation=invocation,
                history=history,
                trust_bound=trust_bounds,
                empty_at_ms=empty_at_ms,
            )
            reason = Reason.DUE if v.due else Reason.NOT_DUE
            out.append(Decision(op, reason, v.why, evidence=v.evidence))
            continue
        if isinstance(snapshot, FilePaths):  # the paths answer VACUUM's question only
            raise ValueError(f"{op} is decided on a snapshot, not on the log's paths")
        due, why = op_spec(op).due(target, snapshot, int(now * 1000))
        out.append(Decision(op, Reason.DUE if due else Reason.NOT_DUE, why))
    return out


def decided_without_table(
    target: ModelTarget, op: str, history: HistoryStore | None, now_s: float
) -> Decision | None:
    """The decision the config and the history settle alone: switched off, or too soon.

    Args:
        target: The model.
        op: The op.
        history: The maintenance history (for the minimum intervals).
        now_s: The current time.

    Returns:
        ``DISABLED`` or ``TOO_SOON``; None when the table decides.
    """
    config = target.config
    if not config.op_enabled(op):
        return Decision(op, Reason.DISABLED, f"disabled by {config.switched_off_by(op)}")
    choice = config.auto_choice
    if op == "optimize" and choice is not None and choice.changed:
        return None  # the advisor's new columns: due whatever the interval
    return _too_soon(target, op, history, now_s)
