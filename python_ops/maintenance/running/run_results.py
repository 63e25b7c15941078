"""What a maintenance run did: one outcome per (model, op), and the run's table of them.

``OpOutcome`` is one op's outcome for one model (ran or not, counts, reason, how it ran);
``MaintenanceRun`` is a whole run's, with the per-model table the CLI and the run-operations
print. The runner (``runner``) makes them; the history, the report and the front ends read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from python_ops.maintenance.decisions.due import Decision
from python_ops.maintenance.records.outcomes import NOTHING_DONE, OpCounts, Reason, Status
from python_ops.maintenance.rules.wording import did_text, size_text
from python_ops.maintenance.selection.targets import ModelTarget


@dataclass(frozen=True)
class OpOutcome:
    """One op on one model.

    Attributes:
        model: The model.
        op: The op.
        status: What happened.
        reason: Why it ran or not.
        detail: The reason in words; the error for failures.
        dry_run: Report-only run.
        counts: What it did: files and bytes removed and added, versions (None after: unknown),
            and how it ran (``note``: VACUUM's mode and why, directories it kept); the same
            object the history recorded.
        duration_s: Seconds.
        on_error: The model's ``on_error`` setting.
    """

    model: str
    op: str
    status: Status
    reason: Reason
    detail: str
    dry_run: bool = False
    counts: OpCounts = NOTHING_DONE
    duration_s: float = 0.0
    on_error: str = "warn"

    @property
    def ran(self) -> bool:
        """True when the op was attempted (succeeded or failed)."""
        return self.status in (Status.SUCCEEDED, Status.FAILED)

    @property
    def did(self) -> str:
        """What the op did (or would do, dry run) with files and bytes; '' when it did not run."""
        if self.status is Status.FAILED:
            return "failed"
        if self.status is not Status.SUCCEEDED:
            return ""
        c = self.counts
        return did_text(
            self.op,
            dry_run=self.dry_run,
            files_removed=c.files_removed,
            bytes_removed=c.bytes_removed,
            files_added=c.files_added,
            bytes_added=c.bytes_added,
        )

    @property
    def note(self) -> str:
        """How it ran (VACUUM's mode and why, directories it kept); '' when nothing to say."""
        return self.counts.note

    @property
    def summary(self) -> str:
        """``did`` and, where it matters, how (VACUUM's mode and why, directories it kept)."""
        return f"{self.did}; {self.note}" if self.note and self.did else self.did

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain data, the counters flat beside the rest."""
        return {
            "model": self.model,
            "op": self.op,
            "status": self.status,
            "reason": self.reason,
            "detail": self.detail,
            "dry_run": self.dry_run,
            **self.counts.columns(),
            "note": self.note,
            "duration_s": self.duration_s,
            "on_error": self.on_error,
        }


@dataclass(frozen=True)
class MaintenanceRun:
    """What a maintenance run did.

    Attributes:
        outcomes: One per (model, op) considered.
        models_started: Models started before the time budget ran out.
        models_not_started: Models not started because of the time budget.
        duration_s: Wall time.
    """

    outcomes: tuple[OpOutcome, ...]
    models_started: int
    models_not_started: tuple[str, ...]
    duration_s: float

    @property
    def failed(self) -> tuple[OpOutcome, ...]:
        """Failed ops whose model says ``on_error: fail``."""
        return tuple(o for o in self.outcomes if o.status is Status.FAILED and o.on_error == "fail")

    def to_dict(self) -> dict[str, Any]:
        """The run as plain data."""
        return {
            "outcomes": [o.to_dict() for o in self.outcomes],
            "models_started": self.models_started,
            "models_not_started": list(self.models_not_started),
            "duration_s": self.duration_s,
            "failed": len(self.failed),
            "ops_failed": sum(1 for o in self.outcomes if o.status is Status.FAILED),
        }

    def table(self) -> str:
        """A per-model table with a labelled totals row; sizes in scaled units (B, KB, MB, GB).

        A dry run's rows say what would be done; each reason starts with what the op did.
        """
        head = f"{'model':<28} {'op':<13} {'status':<10} {'files -':>8} {'size -':>9} "
        head += f"{'files +':>8} {'size +':>9} {'s':>6}  reason"
        lines = [head]
        if any(o.dry_run for o in self.outcomes):
            lines.insert(0, "dry run: nothing was deleted or written")
        for o in self.outcomes:
            dry = o.dry_run and o.status is Status.SUCCEEDED
            status = "dry run" if dry else str(o.status)
            # the outcome first, then why it ran: a reason never contradicts what happened
            detail = f"{o.did}; {o.detail}" if o.status is Status.SUCCEEDED else o.detail
            if o.status is Status.SUCCEEDED and o.note:
                detail += f"; {o.note}"  # then how it ran (VACUUM's mode, kept directories)
            lines.append(
                f"{o.model:<28} {o.op:<13} {status:<10} {o.counts.files_removed:>8} "
                f"{size_text(o.counts.bytes_removed):>9} {o.counts.files_added:>8} "
                f"{size_text(o.counts.bytes_added):>9} {o.duration_s:>6.2f}  {detail}"
            )
        ran = [o for o in self.outcomes if o.ran]
        models = len({o.model for o in self.outcomes})
        failed = sum(1 for o in ran if o.status is Status.FAILED)
        lines.append(
            f"{f'total ({models} model' + ('s' if models != 1 else '') + ')':<28} "
            f"{f'{len(ran)} op(s) ran':<13} {f'{failed} failed':<10} "
            f"{sum(o.counts.files_removed for o in ran):>8} "
            f"{size_text(sum(o.counts.bytes_removed for o in ran)):>9} "
            f"{sum(o.counts.files_added for o in ran):>8} "
            f"{size_text(sum(o.counts.bytes_added for o in ran)):>9} {self.duration_s:>6.2f}"
            + (
                f"  not started (time budget): {', '.join(self.models_not_started)}"
                if self.models_not_started
                else ""
            )
        )
        return "\n".join(lines)


def not_due_outcomes(target: ModelTarget, decisions: Sequence[Decision]) -> list[OpOutcome]:
    """The outcomes of decisions none of which is due (nothing ran)."""
    c = target.config
    return [
        OpOutcome(c.model, d.op, Status.NOT_DUE, d.reason, d.detail, on_error=c.on_error)
        for d in decisions
    ]
