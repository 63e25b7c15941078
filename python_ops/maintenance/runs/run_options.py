"""What a maintenance run over many models is asked to do, validated once.

The run-operations' arguments (``vacuum_all``, ``maintain_all``...) and the CLI's ``maintain``
flags arrive as text, numbers or None from a scheduler; ``RunOptions`` checks each when it is
built (the only place ``threads``, ``time_budget_s`` and ``retention_hours`` are checked) and the
runner takes it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from python_ops.maintenance.runs.registry import OPS, check_ops
from python_ops.values import MAX_HOURS, checked_number, optional_number


@dataclass(frozen=True)
class RunOptions:
    """A run's arguments, each checked.

    Build it from a caller's raw arguments with ``RunOptions.checked``; the constructor itself
    takes values that are already right (the runner's default, a test's literal).

    Attributes:
        ops: The registered ops to consider, in the registry's order of the caller's list.
        only_due: Run only what is due (``maintain_all``), else every enabled op.
        dry_run: Report only: nothing is deleted or written.
        retention_hours: A VACUUM retention overriding the models' (still safety-checked).
        threads: Models maintained in parallel (1 or more).
        time_budget_s: After this many seconds no new model is started (None: no budget).
    """

    ops: tuple[str, ...] = OPS
    only_due: bool = True
    dry_run: bool = False
    retention_hours: float | None = None
    threads: int = 1
    time_budget_s: float | None = None

    @classmethod
    def checked(
        cls,
        *,
        ops: Any = None,
        only_due: bool = True,
        dry_run: bool = False,
        retention_hours: Any = None,
        threads: Any = 1,
        time_budget_s: Any = None,
    ) -> RunOptions:
        """The options from a caller's raw arguments, each validated.

        Args:
            ops: Op names (a list, one name, or None for every op).
            only_due: Run only what is due.
            dry_run: Report only.
            retention_hours: VACUUM retention in hours, or None.
            threads: Models in parallel; None means 1.
            time_budget_s: Seconds above 0, or None.

        Returns:
            The options.

        Raises:
            ConfigError: For an unknown op or a bad number, naming the setting.
        """
        hours = optional_number(retention_hours, setting="retention_hours", maximum=MAX_HOURS)
        budget = optional_number(time_budget_s, setting="time_budget_s", above_minimum=True)
        workers = checked_number(
            1 if threads is None else threads, setting="threads", minimum=1, whole=True
        )
        return cls(
            ops=check_ops(ops),
            only_due=bool(only_due),
            dry_run=bool(dry_run),
            retention_hours=hours,
            threads=int(workers),
            time_budget_s=budget,
        )
