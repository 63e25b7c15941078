"""A table built where nothing existed: one fact, kept once, that bounds two decisions.

When a build began at ``B`` and the front end found no file, directory or link at the table's
location (``BuildFacts.location_was_empty``), every file there was written at ``B`` or later.
Two of the post-hook's decisions follow from that without reading anything:

- VACUUM's: no untracked file passes a retention ``R`` before ``B + R``, whatever ``R`` is
  (``untracked_bound.bound_from_empty_location``);
- log cleanup's and VACUUM's tombstone count: no removed file and no commit file of the table
  created there is older than ``B`` (``log_bounds.bounds_from_empty_location``).

The post-hook of that build keeps the fact as one history row (op ``created_empty``, deferred
to the command's one history commit), and the later decisions of both rules read it back:
one proof per created table, where each rule kept its own before. The untracked bound holds
for any table later at the same location (each file there is still younger than ``B``); the
log bounds hold for the table created then only (its ``table_id``), as a recorded
``log_bounds`` row does.

What this can miss is what each bound's own module says (a file copied in with an older
modification time, a writer whose clock is behind): found when the bound runs out, or by any
run-operation, which always lists and reads the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from python_ops.maintenance.records.history import HistoryStore, defer_proof, recorded_proof
from python_ops.maintenance.selection.targets import ModelTarget

ORIGIN_OP = "created_empty"  # the history's op of a build that created its table where nothing was


@dataclass(frozen=True)
class EmptyOrigin:
    """A table created at a location that was empty when its build began.

    Attributes:
        table_id: The table the build created (its ``metaData`` id).
        empty_at_ms: When nothing existed at the location (the build's start).
    """

    table_id: str
    empty_at_ms: int


def recorded_origin(history: HistoryStore | None, target: ModelTarget) -> EmptyOrigin | None:
    """The newest origin the history holds for the model's table (None: none, or elsewhere).

    Args:
        history: The history (None: nothing recorded).
        target: The model (its table's location must be the one recorded).

    Returns:
        The origin, or None when none is recorded or the record cannot be read.
    """
    values = recorded_proof(
        history, model=target.config.model, location=target.location, op=ORIGIN_OP
    )
    if values is None:
        return None
    table_id, empty_at = values.get("table_id"), values.get("empty_at_ms")
    if not isinstance(table_id, str) or isinstance(empty_at, bool) or not isinstance(empty_at, int):
        return None  # a record this version cannot read: the rules list or read the snapshot
    return EmptyOrigin(table_id, empty_at)


def record_origin(
    history: HistoryStore, target: ModelTarget, origin: EmptyOrigin, *, invocation_id: str
) -> None:
    """Keep the origin in the history (deferred: written with the command's history commit).

    Args:
        history: The history.
        target: The model.
        origin: What the build proved.
        invocation_id: The command whose build created the table.
    """
    defer_proof(
        history,
        invocation_id=invocation_id,
        model=target.config.model,
        location=target.location,
        op=ORIGIN_OP,
        parameters={"table_id": origin.table_id, "empty_at_ms": origin.empty_at_ms},
        at_ms=origin.empty_at_ms,
        reason="the build created the table where nothing existed",
    )
