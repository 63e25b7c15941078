"""The maintenance history: one row per op run (dry or not) in a Delta table.

Appends go through delta-rs (blind appends: concurrent writers never conflict). The last run of
each (model, op) is read once per store and then kept up to date in memory, so deciding what is
due for a model costs no table read after the first.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from python_ops.delta.log.json_text import loads
from python_ops.delta.writing.writer import commit_storage_options, quiet_hooks
from python_ops.errors import StorageError
from python_ops.maintenance.records.history_last import (
    LAST_RUN_COLUMNS,
    LastRun,
    counts,
    last_runs,
    microseconds,
    newer,
)
from python_ops.maintenance.records.history_read import SCHEMA_FIELDS, arrow_schema, read_table
from python_ops.maintenance.records.history_summary import (
    BEFORE_FIRST,
    HeadCommit,
    commit_at,
    head_commit,
    read_summary,
    write_summary,
)
from python_ops.maintenance.records.outcomes import Status
from python_ops.storage import delta_storage_options


@dataclass(frozen=True)
class HistoryRecord:
    """One op run.

    Attributes:
        invocation_id: The dbt invocation (or CLI run) id.
        model: The model name.
        table_location: The table maintained.
        op: ``vacuum``, ``optimize`` or ``cleanup_logs``.
        parameters: The op's parameters as JSON.
        dry_run: True for a report-only run.
        status: ``succeeded`` or ``failed``.
        error: The error message of a failed run.
        started_at: When the op started (UTC).
        duration_s: How long it took.
        files_removed: Files deleted (VACUUM, log cleanup) or compacted away (OPTIMIZE);
            for dry runs, what would be.
        bytes_removed: Their bytes.
        files_added: Files written (OPTIMIZE).
        bytes_added: Their bytes.
        version_before: Table version before the op.
        version_after: Table version after it (None when unknown, e.g. after a failure).
        clustering_columns: OPTIMIZE with ``auto`` clustering: the advisor's columns, comma
            separated ('' when it chose none); None for other runs.
        clustering_evidence: The readers and predicate kinds per column (JSON).
        files_per_lookup_before: Files admitted per lookup per column before (JSON).
        files_per_lookup_after: The same after the op (JSON).
        reason: Why it ran, or (status ``skipped``) why the post-hook maintained nothing.
        build_s: The model's build seconds, up to the post-hook (None: not a post-hook run).
        build_files_written: Files the build wrote (``build_writes``).
        build_rows_written: Rows the build wrote (None: its commits do not say).
        build_versions: The build's own commit versions, as a JSON list.
    """

    invocation_id: str
    model: str
    table_location: str
    op: str
    parameters: str
    dry_run: bool
    status: str
    error: str | None
    started_at: dt.datetime
    duration_s: float
    files_removed: int = 0
    bytes_removed: int = 0
    files_added: int = 0
    bytes_added: int = 0
    version_before: int | None = None
    version_after: int | None = None
    clustering_columns: str | None = None
    clustering_evidence: str | None = None
    files_per_lookup_before: str | None = None
    files_per_lookup_after: str | None = None
    reason: str | None = None
    build_s: float | None = None
    build_files_written: int | None = None
    build_rows_written: int | None = None
    build_versions: str | None = None


# A proof kept for the command's end (``defer_proof``): (invocation_id, model, table_location,
# op, parameters, proved at (ms since the epoch), reason). A tuple, not a ``HistoryRecord``: a
# first build keeps one per model, written by column with the command's other rows.
Proof = tuple[str, str, str, str, str, int, str]
_PROOF_COLUMNS = {
    "invocation_id": 0,
    "model": 1,
    "table_location": 2,
    "op": 3,
    "parameters": 4,
    "reason": 6,
}
# a proof's other columns: those of a succeeded real run that moved nothing (HistoryRecord's
# defaults for the rest; a field added without one fails the first flush, loudly)
_PROOF_CONSTANTS = {
    **{
        f.name: f.default
        for f in dataclasses.fields(HistoryRecord)
        if f.default is not dataclasses.MISSING
    },
    "dry_run": False,
    "status": str(Status.SUCCEEDED),
    "error": None,
    "duration_s": 0.0,
}


def _rows_table(records: list[HistoryRecord], proofs: list[Proof]) -> Any:
    """The rows as the history's Arrow table, by column: the records, then the proofs."""
    import pyarrow as pa

    schema = arrow_schema()
    columns: dict[str, Any] = {}
    for name, _ in SCHEMA_FIELDS:
        if name == "started_at":  # microseconds, one type for both: datetimes and ms
            stamps = [microseconds(r.started_at) for r in records] + [p[5] * 1000 for p in proofs]
            columns[name] = pa.array(stamps, schema.field(name).type)
            continue
        values = [getattr(r, name, None) for r in records]
        at = _PROOF_COLUMNS.get(name)
        if at is None:
            values += [_PROOF_CONSTANTS[name]] * len(proofs)
        else:
            values += [p[at] for p in proofs]
        columns[name] = values
    return pa.Table.from_pydict(columns, schema=schema)


@dataclass
class HistoryStore:
    """The history table at ``location``; thread-safe.

    Args:
        location: Where the Delta table lives (created on the first append).
    """

    location: str
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _last: dict[tuple[str, str], LastRun] | None = field(default=None, repr=False)
    # the commit ``_last`` is exactly the last runs of (None: not known), and the last one a
    # summary was written or read for (``history_summary``)
    _at: HeadCommit | None = field(default=None, repr=False)
    _summarized: HeadCommit | None = field(default=None, repr=False)
    _deferred: list[HistoryRecord] = field(default_factory=list, repr=False)
    _proofs: list[Proof] = field(default_factory=list, repr=False)

    def defer(self, records: list[HistoryRecord]) -> None:
        """Keep records to append with the next ``append`` or ``flush`` (one commit for many).

        For rows nothing decides from (a post-hook's skip): a commit per skipped model would
        cost more than the skip saves. The front end flushes at the end of its command.
        """
        with self._lock:
            self._deferred.extend(records)

    def defer_proofs(self, proofs: list[Proof]) -> None:
        """Keep proofs (``defer_proof``) to append with the next ``append`` or ``flush``."""
        with self._lock:
            self._proofs.extend(proofs)

    def deferred_count(self) -> int:
        """How many rows (records and proofs) wait for the next ``append`` or ``flush``."""
        with self._lock:
            return len(self._deferred) + len(self._proofs)

    def flush(self) -> None:
        """Append the deferred records, if any; then keep the last runs beside the history.

        The summary (``history_summary``) is written when the last runs this store holds are
        exactly those of the history's newest commit, and none was written or read for it.

        Raises:
            StorageError: When the history table cannot be written (the records are dropped).
        """
        self.append([])
        with self._lock:
            at, last = self._at, self._last
            if last is None or at is None or at.version < 0 or at == self._summarized:
                return
            if write_summary(self.location, at, last):
                self._summarized = at

    def append(self, records: list[HistoryRecord]) -> None:
        """Append records, and the deferred ones, in one commit.

        Raises:
            StorageError: When the history table cannot be written.
        """
        with self._lock:
            records, self._deferred = [*self._deferred, *records], []
            proofs, self._proofs = self._proofs, []
        if not records and not proofs:
            return
        from deltalake import write_deltalake

        # by column, each field read as it is (its values are scalars): ``asdict`` copied every
        # value of every row, most of a first build's post-hooks' rows' cost
        table = _rows_table(records, proofs)
        options = commit_storage_options(self.location)
        with self._lock:
            try:
                write_deltalake(
                    self.location,
                    table,
                    mode="append",
                    schema_mode="merge",  # a table from before ADDED_FIELDS gains them
                    storage_options=options,
                    post_commithook_properties=quiet_hooks(checkpoint=True),
                )
            except Exception as err:  # delta-rs raises several types for I/O and schema errors
                raise StorageError(
                    f"cannot append to the maintenance history at {self.location}: {err}"
                ) from err
            if self._last is not None:
                self._remember_appended(self._last, records, proofs)
                self._at = self._followed(self._at)

    def _followed(self, before: HeadCommit | None) -> HeadCommit | None:
        """The commit this store's append made, if it came right after ``before``.

        The last runs held were exactly ``before``'s; with the rows just appended they are
        exactly those of the next version, when that is the newest: this append's commit exists
        and is later than ``before``, so nobody else committed between; and ``before``'s commit
        is still the very file it was (a table deleted and made again since has other ones).
        Else not known.
        """
        if before is None:
            return None
        head = head_commit(self.location)
        if head is None or head.version != before.version + 1:
            return None
        if before.version >= 0 and commit_at(self.location, before.version) != before:
            return None
        return head

    def ensure_table(self) -> bool:
        """Create the history table, empty and with its full schema, unless it exists.

        So that a query of the history (a dbt source) works before maintenance first ran.

        Returns:
            True when this call created it.

        Raises:
            StorageError: When the table cannot be created.
        """
        from deltalake import DeltaTable

        if DeltaTable.is_deltatable(
            self.location, storage_options=delta_storage_options(self.location)
        ):
            return False
        options = commit_storage_options(self.location)
        with self._lock:
            try:
                DeltaTable.create(
                    self.location,
                    schema=arrow_schema(),
                    mode="ignore",  # a concurrent creator may have won: the table is there
                    description="sparkdelta maintenance history: one row per op run",
                    storage_options=options,
                )
            except Exception as err:  # delta-rs raises several types for I/O errors
                raise StorageError(
                    f"cannot create the maintenance history at {self.location}: {err}"
                ) from err
        return True

    @staticmethod
    def _remember_appended(
        last: dict[tuple[str, str], LastRun], records: list[HistoryRecord], proofs: list[Proof]
    ) -> None:
        """Runs appended now become their (model, op)'s last, unless a later one is known."""
        runs = [
            LastRun(
                r.model,
                r.op,
                r.table_location,
                r.parameters or "",
                microseconds(r.started_at),
                r.clustering_columns,
            )
            for r in records
            if counts(r.status, r.dry_run)
        ]
        runs += [LastRun(p[1], p[3], p[2], p[4], p[5] * 1000, None) for p in proofs]  # succeeded
        for run in runs:
            key = (run.model, run.op)
            if key not in last or newer(run, last[key]):
                last[key] = run

    def records(self) -> list[HistoryRecord]:
        """Every record, oldest first (empty when the table does not exist yet)."""
        table = read_table(self.location)
        rows = table.to_pylist() if table is not None else []
        rows.sort(key=lambda r: r["started_at"])
        return [HistoryRecord(**r) for r in rows]

    def last_success(self, model: str, op: str) -> LastRun | None:
        """The newest successful real (not dry) run of ``op`` on ``model``.

        The history is read once per store, by columns (``history_last``); runs this store
        appends after are remembered as they are written.
        """
        known = self._last
        if known is not None:  # one dict read (writers add to it under the lock)
            return known.get((model, op))
        with self._lock:
            if self._last is None:
                self._last = self._read_last()
            return self._last.get((model, op))

    def _read_last(self) -> dict[tuple[str, str], LastRun]:
        """The last runs: from the summary of the newest commit, else read at that commit."""
        head = head_commit(self.location)
        if head is not None:
            summary = read_summary(self.location, head)
            if summary is not None:
                self._at = self._summarized = head
                return summary
        version = head.version if head is not None else None
        table = read_table(self.location, LAST_RUN_COLUMNS, version=version)
        # no commit seen: should a commit of this store's be version 0, what it holds then is
        # the whole table (whatever hid a table from the listing: its rows would be more)
        self._at = head if head is not None else BEFORE_FIRST
        return last_runs(table) if table is not None else {}


def defer_proof(
    history: HistoryStore,
    *,
    invocation_id: str,
    model: str,
    location: str,
    op: str,
    parameters: dict[str, Any],
    at_ms: int,
    reason: str,
) -> None:
    """Keep what a decision proved of a table (a bound) as a history row, deferred.

    Written with the command's one history commit; read back by ``recorded_proof``.

    Args:
        history: The history.
        invocation_id: The command that proved it.
        model: The model.
        location: The table it holds for.
        op: The proof's kind (``vacuum_check``, ``log_bounds``).
        parameters: What was proved.
        at_ms: When it was proved.
        reason: How (the row's reason).
    """
    history.defer_proofs(
        [(invocation_id, model, location, op, parameters_json(parameters), at_ms, reason)]
    )


def recorded_proof(
    history: HistoryStore | None, *, model: str, location: str, op: str
) -> Mapping[str, Any] | None:
    """The parameters of the newest ``op`` proof kept for a model's table at ``location``.

    Returns:
        The proved values; None when there is none, it is another location's, or not JSON.
    """
    if history is None:
        return None
    record = history.last_success(model, op)
    if record is None or record.table_location != location:
        return None
    return _proved_values(record.parameters)


@functools.lru_cache(maxsize=4096)
def _proved_values(parameters: str) -> Mapping[str, Any] | None:
    """A proof's parameters parsed (once per text: each post-hook reads two; never changed)."""
    try:
        values = loads(parameters)
    except ValueError:
        return None
    return MappingProxyType(values) if isinstance(values, dict) else None


# json.dumps(..., sort_keys=True, default=str) makes such an encoder per call: one, made once
_PARAMETERS = json.JSONEncoder(sort_keys=True, default=str)


def parameters_json(parameters: dict[str, Any]) -> str:
    """Parameters as compact, stable JSON (``json.dumps`` with sorted keys, others as text)."""
    return _PARAMETERS.encode(parameters)
