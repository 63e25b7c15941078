"""Delta tables written by random interleavings of three writers, and one of our ops held to Delta.

The differential fuzzer (``tests/integration/test_differential_fuzz.py``, and the long campaign
``bench/fuzz_campaign.py``) draws a ``TableSpec``: whether the table is partitioned by ``p`` and
1 to 6 steps, each a write by one of three engines:

- ``delta``: Delta 4.4 on Spark over Spark Connect (the tests' ``delta_spark``): ``INSERT``
  (the first one creates the table, deletion vectors on or off; some without statistics),
  ``DELETE`` after setting ``delta.enableDeletionVectors`` true or false, ``MERGE`` (updates
  that may move a row to another partition, and inserts), ``OPTIMIZE`` (optionally ``ZORDER BY
  (id)``) and a checkpoint (``delta.checkpointInterval`` set to 1 by ``ALTER TABLE``: that
  commit is checkpointed; optionally set back to 100 by a second one);
- ``rs``: delta-rs (``write_deltalake`` append/overwrite, ``DeltaTable.delete``,
  ``optimize.compact``, ``create_checkpoint``);
- ``sail``: Sail (``df.write.format('delta').mode('append'|'overwrite').save(path)``).

Partition values come from a wide alphabet (NFC and NFD ``é``, CJK, emoji, space, ``%``, ``:``,
``+``, ``#``, ``=``, ``/``, trailing spaces and dots, strings that look percent-encoded, the
empty string, null) and combinations of it; each table mostly reuses a palette of 1-3 of them,
so partitions collect several files. One table in four is created by Delta with column mapping
(``delta.columnMapping.mode = 'name'``) and a value column named ``v x``, which only column
mapping allows: its files carry physical column names.

Nothing a writer does is hidden. A known limit is a skip rule: the step is listed with its
reason in ``Applied.skipped`` (delta-rs steps once the table's protocol has the
``deletionVectors`` feature; ``SKIP_REASONS`` says what delta-rs 1.6 does and does not do).
Any other writer error, and a finished table Delta cannot read, raise ``GenerationFailed``
(``StepFailed``, ``TableUnreadable``); when ``KNOWN_WRITER_FAILURES`` explains it (Sail
re-spelling another writer's paths), its ``known`` says why.

``run_op`` runs one of our ops on the generated table (``OpSpec``: VACUUM FULL, LITE or from an
inventory report, compaction, Z-order, log cleanup, statistics, purge) and checks it against Delta:
Delta reads the same rows afterwards (count and checksum; for every op but VACUUM, which
rewrites no file action, also filtered reads that go through partition pruning, data skipping
and the metadata-only ``count(*)``); a refusal (``MaintenanceError``) leaves every file as it
was; our VACUUM's dry run never selects a path Delta's own ``VACUUM ... RETAIN 0 HOURS DRY RUN``
keeps (from an inventory: Delta's ``VACUUM ... USING INVENTORY``), and its real run deletes
what its dry run selected.
"""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.helpers.delta_reads import oracle, table_sql

NFC_E = unicodedata.normalize("NFC", "é")
NFD_E = unicodedata.normalize("NFD", "é")
#: Partition values drawn whole (None is SQL NULL).
PARTITION_ATOMS: tuple[str | None, ...] = (
    "a",
    NFC_E,
    NFD_E,
    "日本",
    "\U0001f600",
    " ",
    "%",
    ":",
    "+",
    "#",
    "=",
    "/",
    "a ",
    "a.",
    "x  ",
    "..",
    "",
    None,
)
#: Pieces joined into longer values (2-3 of them): escapes that look like escapes too.
PARTITION_PIECES = (
    "a",
    NFC_E,
    NFD_E,
    "日本",
    "\U0001f600",
    " ",
    "%",
    ":",
    "+",
    "#",
    "=",
    "/",
    ".",
    "%20",
    "%2F",
    "%C3%A9",
    "p=1",
)
MAX_STEPS = 6
ROWS_PER_WRITE = 4
UPDATE_IDS = 16  # MERGE updates ids drawn below this (existing or not)

DELTA, RS, SAIL = "delta", "rs", "sail"
#: engine -> the actions it runs
ACTIONS = {
    DELTA: ("append", "delete", "merge", "optimize", "checkpoint"),
    RS: ("append", "overwrite", "delete", "compact", "checkpoint"),
    SAIL: ("append", "overwrite"),
}
#: Why a step is skipped (the rule's key is the engine). delta-rs 1.6 refuses to read a table
#: with deletion vectors (``DeltaTable.to_pyarrow_table``: "reader features
#: {'deletionVectors'} ... not yet supported"), so its steps are skipped once the table's
#: protocol has the feature. Measured here with 1.6.6: its ``write_deltalake`` append,
#: ``delete``, ``optimize.compact`` and ``create_checkpoint`` do not refuse such a table (and
#: kept Delta's rows on a table with a deletion vector); ``apply_steps(rs_on_dv=True)`` runs them.
SKIP_REASONS = {
    RS: "delta-rs step on a table whose protocol has deletionVectors (skipped by rule)",
}
#: Steps skipped on a table with column mapping, measured (``apply_steps(others_on_mapped=True)``
#: runs them). delta-rs 1.6's append, overwrite, delete and checkpoint and Sail 0.7's append and
#: overwrite run on such a table and Delta reads it afterwards.
MAPPED_REASONS = {
    (RS, "compact"): "delta-rs compact on a table with column mapping (delta-rs 1.6 refuses: "
    "'Column mapping is not supported for write operation 'OPTIMIZE' yet'; skipped by rule)",
}

VACUUM, COMPACT, ZORDER, LOG_CLEANUP, STATS = "vacuum", "compact", "zorder", "log_cleanup", "stats"
PURGE = "purge"
OPS = (VACUUM, COMPACT, ZORDER, LOG_CLEANUP, STATS, PURGE)
VACUUM_MODES = ("full", "lite", "inventory")
#: The value column of a table with column mapping: a name only column mapping allows
#: (Delta refuses a space in a column name otherwise), so files hold its physical name.
MAPPED_VALUE_COLUMN = "v x"
DAY_MS = 24 * 3600 * 1000
STATS_COLLECT = "spark.databricks.delta.stats.collect"
PROBED_VALUES = 3


@dataclass(frozen=True)
class Step:
    """One write of the table.

    Attributes:
        engine: ``delta``, ``rs`` or ``sail``.
        action: One of ``ACTIONS[engine]``.
        values: Partition values of the rows written (one row each; new ids).
        where: The predicate of a delete (Spark SQL and DataFusion read it alike).
        updates: MERGE: (id, new partition value) of the source rows matched by id.
        dv: ``delta.enableDeletionVectors`` set before a Delta DELETE, or of the table a Delta
            append creates.
        zorder: A Delta OPTIMIZE with ``ZORDER BY (id)``.
        keep: A Delta checkpoint keeps ``delta.checkpointInterval`` at 1 (every later Delta
            commit is checkpointed too) instead of setting it back to 100.
        nostats: A Delta append writes files without statistics
            (``spark.databricks.delta.stats.collect`` false for the statement): work for the
            statistics op.
    """

    engine: str
    action: str
    values: tuple[str | None, ...] = ()
    where: str | None = None
    updates: tuple[tuple[int, str | None], ...] = ()
    dv: bool = False
    zorder: bool = False
    keep: bool = False
    nostats: bool = False

    def __repr__(self) -> str:
        parts = [repr(self.engine), repr(self.action)]
        for name in ("values", "where", "updates", "dv", "zorder", "keep", "nostats"):
            value = getattr(self, name)
            if value:
                parts.append(f"{name}={value!r}")
        return f"Step({', '.join(parts)})"


@dataclass(frozen=True)
class TableSpec:
    """A generated table: partitioned by ``p`` or not, and the steps that write it.

    ``mapped``: Delta creates it with ``delta.columnMapping.mode = 'name'`` and its value column
    is ``MAPPED_VALUE_COLUMN`` (files carry physical column names, not the table's).
    """

    partitioned: bool
    steps: tuple[Step, ...]
    mapped: bool = False


WITH_SESSION = (COMPACT, ZORDER, PURGE)  # ops that may take the Delta session


@dataclass(frozen=True)
class OpSpec:
    """The op run on the generated table.

    Attributes:
        name: ``vacuum``, ``compact``, ``zorder``, ``log_cleanup``, ``stats`` or ``purge``.
        mode: VACUUM's mode: ``full``, ``lite`` or ``inventory`` (FULL from an inventory
            report of every file under the table, as a cloud writes one).
        delta_sql: OPTIMIZE gets the Delta session (``spark=``): Delta's own SQL may run the
            rewrite; otherwise delta-rs or the local Delta writer does.
    """

    name: str
    mode: str = "full"
    delta_sql: bool = False

    def __repr__(self) -> str:
        extra = f", mode={self.mode!r}" if self.name == VACUUM else ""
        extra += ", delta_sql=True" if self.delta_sql and self.name in WITH_SESSION else ""
        return f"OpSpec({self.name!r}{extra})"


# ---------------------------------------------------------------------------------- strategies

partition_values: st.SearchStrategy[str | None] = st.one_of(
    st.sampled_from(PARTITION_ATOMS),
    st.lists(st.sampled_from(PARTITION_PIECES), min_size=2, max_size=3).map("".join),
)


def _predicate(value: str | None) -> str:
    return "p IS NULL" if value is None else f"p = {sql_string(value)}"


def _predicates(values: st.SearchStrategy[str | None]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(st.integers(2, 4), st.integers(0, 3)).map(lambda kr: f"id % {kr[0]} = {kr[1]}"),
        st.integers(1, 12).map(lambda n: f"id < {n}"),
        values.map(_predicate),
    )


@st.composite
def steps(
    draw: st.DrawFn,
    values: st.SearchStrategy[str | None] = partition_values,
    *,
    first: bool = False,
) -> Step:
    """One step writing ``values``; ``first`` draws a write that creates the table."""
    engine = draw(st.sampled_from((DELTA, RS, SAIL)))
    if first:
        action = "append" if engine == DELTA else draw(st.sampled_from(("append", "overwrite")))
    else:
        action = draw(st.sampled_from(ACTIONS[engine]))
    if action in ("append", "overwrite"):
        rows = tuple(draw(st.lists(values, min_size=1, max_size=ROWS_PER_WRITE)))
        if engine != DELTA:
            return Step(engine, action, values=rows)
        nostats = draw(st.booleans())
        return Step(engine, action, values=rows, dv=draw(st.booleans()), nostats=nostats)
    if action == "delete":
        where = draw(_predicates(values))
        return Step(engine, action, where=where, dv=engine == DELTA and draw(st.booleans()))
    if action == "merge":
        ids = draw(st.lists(st.integers(0, UPDATE_IDS - 1), max_size=3, unique=True))
        updates = tuple((i, draw(values)) for i in sorted(ids))
        new = tuple(draw(st.lists(values, max_size=2)))
        return Step(engine, action, values=new, updates=updates)
    if action == "optimize":
        return Step(engine, action, zorder=draw(st.booleans()))
    if action == "checkpoint" and engine == DELTA:
        return Step(engine, action, keep=draw(st.booleans()))
    return Step(engine, action)


@st.composite
def tables(draw: st.DrawFn, *, max_steps: int = MAX_STEPS) -> TableSpec:
    """A table: partitioned (mostly) or not, a creating write, then up to ``max_steps - 1``.

    Rows mostly take their partition value from a palette of 1-3 values drawn for the table
    (so partitions get several small files: work for compaction), sometimes any value.
    """
    palette = draw(st.lists(partition_values, min_size=1, max_size=3, unique=True))
    values = st.one_of(st.sampled_from(palette), st.sampled_from(palette), partition_values)
    first = draw(steps(values, first=True))
    rest = draw(st.lists(steps(values), max_size=max_steps - 1))
    partitioned = draw(st.sampled_from((True, True, True, False)))
    mapped = draw(st.sampled_from((False, False, False, True)))
    if mapped and first.engine != DELTA:  # Delta creates a table with column mapping
        first = Step(DELTA, "append", values=first.values)
    return TableSpec(partitioned, (first, *rest), mapped)


@st.composite
def ops(draw: st.DrawFn, *names: str) -> OpSpec:
    """One of our ops (one of ``names``, or any), with its variant.

    Every op draws the same choices (a name, a VACUUM mode, the Delta session or not), whatever
    it uses: the shape of the draws never depends on the op.
    """
    name = draw(st.sampled_from(names or OPS))
    mode = draw(st.sampled_from(VACUUM_MODES))
    delta_sql = draw(st.booleans())
    if name == VACUUM:
        return OpSpec(name, mode=mode)
    if name in WITH_SESSION:
        return OpSpec(name, delta_sql=delta_sql)
    return OpSpec(name)


def for_op(spec: TableSpec, op: OpSpec) -> TableSpec:
    """The table the op gets: for a purge, one with deletion vectors to purge.

    Drawn tables rarely hold a deletion vector that keeps rows (a campaign's 48 purges changed
    nothing): a purge's table is created by Delta with deletion vectors on, and ends with a
    Delta ``DELETE`` of every third row (a deletion vector on every file keeping rows).
    """
    if op.name != PURGE:
        return spec
    first = spec.steps[0]
    if first.engine != DELTA:
        first = Step(DELTA, "append", values=first.values)
    first = Step(DELTA, "append", values=first.values, dv=True, nostats=first.nostats)
    last = Step(DELTA, "delete", where="id % 3 = 0", dv=True)
    return TableSpec(spec.partitioned, (first, *spec.steps[1:], last), spec.mapped)


# ------------------------------------------------------------------------------------- writing


class GenerationFailed(Exception):
    """The writers did not produce a table Delta reads: a combination of engines that fails."""

    def __init__(self, message: str, err: BaseException):
        self.err = err
        self.known: str | None = None  # why, when ``KNOWN_WRITER_FAILURES`` explains it
        super().__init__(message)


class StepFailed(GenerationFailed):
    """A writer failed at a step no skip rule covers."""

    def __init__(self, index: int, step: Step, err: BaseException):
        self.index = index
        self.step = step
        super().__init__(f"step {index} {step!r} failed: {first_line(err)}", err)


class TableUnreadable(GenerationFailed):
    """Every step was written, but Delta cannot read the table they made."""

    def __init__(self, err: BaseException):
        super().__init__(f"Delta cannot read the generated table: {first_line(err)}", err)


#: Writer failures understood and explained: (the engine that must have written a step, regex
#: on the error text, why). The fuzzer still reports them (``GenerationFailed.known``); CI
#: counts such examples (a hypothesis event) instead of failing.
KNOWN_WRITER_FAILURES = (
    (
        SAIL,
        r"URISyntaxException: Illegal character in path",
        "Sail 0.7 re-spells the paths of files another writer added when it writes them again "
        "(the remove actions of its overwrite, the adds its checkpoints carry over): decoded, "
        "then re-encoded without escaping a space (Delta's 'p=%20/f' becomes 'p= /f', "
        "'p=%2520' becomes 'p= %252520'); Delta 4.4 cannot parse a path with a raw space as a "
        "URI and fails every read of the table",
    ),
)


def known_writer_failure(spec: TableSpec, err: BaseException) -> str | None:
    """Why a writer failure is known (``KNOWN_WRITER_FAILURES``), or None."""
    text = str(err)
    engines = {step.engine for step in spec.steps}
    for engine, pattern, why in KNOWN_WRITER_FAILURES:
        if engine in engines and re.search(pattern, text):
            return why
    return None


@dataclass
class Applied:
    """What applying a spec did: each step's outcome, the steps skip rules skipped, and
    Delta's read of the result (row count, checksum)."""

    done: list[str] = field(default_factory=list)
    skipped: list[tuple[int, Step, str]] = field(default_factory=list)
    rows: tuple[int, int] = (0, 0)


def sql_string(value: str) -> str:
    """A string literal Spark SQL and DataFusion both read as ``value`` (no quote, backslash)."""
    if "'" in value or "\\" in value:
        raise ValueError(f"the alphabet has no quotes or backslashes: {value!r}")
    return f"'{value}'"


def _sql_value(value: str | None) -> str:
    return "NULL" if value is None else sql_string(value)


def first_line(err: BaseException) -> str:
    """An error's first meaningful line (a JVM stack trace dropped), at most 300 characters."""
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    return f"{type(err).__name__}: {(lines[0] if lines else '')[:300]}"


def protocol_features(path: Path) -> set[str]:
    """The writer features of the table's latest protocol, from its JSON commits.

    Generation never cleans the log, so the latest commit with a ``protocol`` action holds the
    table's protocol. Read here, not with ``python_ops``, which is what is under test.
    """
    features: set[str] = set()
    log = path / "_delta_log"
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            if '"protocol"' in line:
                protocol = json.loads(line).get("protocol")
                if protocol is not None:
                    features = set(protocol.get("writerFeatures") or [])
    return features


class _Writer:
    """Applies steps to one table: the sessions, the next id and the schema."""

    def __init__(
        self,
        path: Path,
        spec: TableSpec,
        delta: Any,
        sail: Any,
        *,
        rs_on_dv: bool,
        others_on_mapped: bool = False,
    ) -> None:
        self.rs_on_dv = rs_on_dv
        self.others_on_mapped = others_on_mapped
        self.path = path
        self.partitioned = spec.partitioned
        self.mapped = spec.mapped
        self.value_column = MAPPED_VALUE_COLUMN if spec.mapped else "v"
        self.v = f"`{self.value_column}`"
        self.schema = f"id long, p string, {self.v} string"
        self.delta = delta
        self.sail = sail
        self.next_id = 0
        self.t = table_sql(path)

    def exists(self) -> bool:
        return any((self.path / "_delta_log").glob("*.json"))

    def rows(self, index: int, step: Step) -> list[tuple[int, str | None, str]]:
        out = []
        for value in step.values:
            out.append((self.next_id, value, f"{step.engine}{index}-{self.next_id}"))
            self.next_id += 1
        return out

    def sql(self, statement: str) -> None:
        self.delta.sql(statement).collect()

    def skip_reason(self, step: Step) -> str | None:
        rule = MAPPED_REASONS.get((step.engine, step.action))
        if self.mapped and rule is not None and not self.others_on_mapped:
            return rule
        if (
            step.engine == RS
            and not self.rs_on_dv
            and self.exists()
            and "deletionVectors" in protocol_features(self.path)
        ):
            return SKIP_REASONS[RS]
        return None

    def apply(self, index: int, step: Step) -> str:
        return {DELTA: self.delta_step, RS: self.rs_step, SAIL: self.sail_step}[step.engine](
            index, step
        )

    # Delta on Spark

    def delta_step(self, index: int, step: Step) -> str:
        if step.action == "append":
            created = ""
            if not self.exists():
                by = " PARTITIONED BY (p)" if self.partitioned else ""
                dv = str(step.dv).lower()
                mapping = ", 'delta.columnMapping.mode' = 'name'" if self.mapped else ""
                self.sql(
                    f"CREATE TABLE {self.t} (id BIGINT, p STRING, {self.v} STRING) USING delta"
                    f"{by} TBLPROPERTIES ('delta.enableDeletionVectors' = '{dv}'{mapping})"
                )
                created = f"created (deletion vectors {dv}{', column mapping' * self.mapped}), "
            rows = ", ".join(
                f"({i}, {_sql_value(p)}, {sql_string(v)})" for i, p, v in self.rows(index, step)
            )
            if step.nostats:
                self.delta.conf.set(STATS_COLLECT, "false")
            try:
                self.sql(f"INSERT INTO {self.t} VALUES {rows}")
            finally:
                if step.nostats:
                    self.delta.conf.unset(STATS_COLLECT)
            return f"{created}inserted {len(step.values)}" + (" (no stats)" if step.nostats else "")
        if not self.exists():
            return "no table yet"
        if step.action == "delete":
            dv = str(step.dv).lower()
            self.sql(
                f"ALTER TABLE {self.t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = '{dv}')"
            )
            self.sql(f"DELETE FROM {self.t} WHERE {step.where}")
            return "deleted"
        if step.action == "merge":
            source = [
                f"({i}, {_sql_value(p)}, {sql_string(f'm{index}-{i}')})" for i, p in step.updates
            ]
            source += [
                f"({i}, {_sql_value(p)}, {sql_string(v)})" for i, p, v in self.rows(index, step)
            ]
            if not source:
                return "empty source"
            self.sql(
                f"MERGE INTO {self.t} t USING (SELECT * FROM VALUES {', '.join(source)} "
                f"AS s(id, p, {self.v})) s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            )
            return "merged"
        if step.action == "optimize":
            self.sql(f"OPTIMIZE {self.t}" + (" ZORDER BY (id)" if step.zorder else ""))
            return "optimized"
        if step.action == "checkpoint":
            self.sql(f"ALTER TABLE {self.t} SET TBLPROPERTIES ('delta.checkpointInterval' = '1')")
            if not step.keep:
                self.sql(
                    f"ALTER TABLE {self.t} SET TBLPROPERTIES ('delta.checkpointInterval' = '100')"
                )
            return "checkpointed"
        raise ValueError(step)

    # delta-rs

    def rs_step(self, index: int, step: Step) -> str:
        import pyarrow as pa
        from deltalake import DeltaTable, write_deltalake

        if step.action in ("append", "overwrite"):
            rows = self.rows(index, step)
            data = pa.table(
                {
                    "id": pa.array([r[0] for r in rows], pa.int64()),
                    "p": pa.array([r[1] for r in rows], pa.string()),
                    self.value_column: pa.array([r[2] for r in rows], pa.string()),
                }
            )
            by = ["p"] if self.partitioned else None
            if step.action == "append":
                write_deltalake(str(self.path), data, partition_by=by, mode="append")
            else:
                write_deltalake(str(self.path), data, partition_by=by, mode="overwrite")
            return f"{step.action} {len(rows)}"
        if not self.exists():
            return "no table yet"
        table = DeltaTable(str(self.path))
        if step.action == "delete":
            table.delete(step.where)
            return "deleted"
        if step.action == "compact":
            table.optimize.compact()
            return "compacted"
        if step.action == "checkpoint":
            table.create_checkpoint()
            return "checkpointed"
        raise ValueError(step)

    # Sail

    def sail_step(self, index: int, step: Step) -> str:
        rows = self.rows(index, step)
        writer = self.sail.createDataFrame(rows, self.schema).write.format("delta")
        if self.partitioned:
            writer = writer.partitionBy("p")
        writer.mode(step.action).save(str(self.path))
        return f"{step.action} {len(rows)}"


def apply_steps(
    spec: TableSpec,
    path: Path,
    *,
    delta: Any,
    sail: Any,
    rs_on_dv: bool = False,
    others_on_mapped: bool = False,
) -> Applied:
    """Write the table at ``path`` (a new directory) by the spec's steps, in order.

    Args:
        spec: The table to write.
        path: Where (must not hold a table yet).
        delta: A Spark Connect session on a Delta 4.4 server.
        sail: A Spark session on Sail.
        rs_on_dv: Run delta-rs steps on tables with deletion vectors too (``SKIP_REASONS``).
        others_on_mapped: Run the steps ``MAPPED_REASONS`` skips on tables with column mapping.

    Returns:
        Each step's outcome and the steps skip rules skipped (with the reason).

    Raises:
        StepFailed: A writer failed at a step no skip rule covers.
    """
    writer = _Writer(path, spec, delta, sail, rs_on_dv=rs_on_dv, others_on_mapped=others_on_mapped)
    applied = Applied()
    for index, step in enumerate(spec.steps):
        reason = writer.skip_reason(step)
        if reason is not None:
            applied.skipped.append((index, step, reason))
            applied.done.append(f"{index}: skipped ({reason})")
            continue
        try:
            applied.done.append(f"{index}: {writer.apply(index, step)}")
        except Exception as err:
            failed: GenerationFailed = StepFailed(index, step, err)
            failed.known = known_writer_failure(spec, err)
            raise failed from err
    try:
        applied.rows = oracle(delta, path)
    except Exception as err:
        failed = TableUnreadable(err)
        failed.known = known_writer_failure(spec, err)
        raise failed from err
    return applied


# ---------------------------------------------------------------------------------- the oracle


@dataclass
class Outcome:
    """How the op ended: ``ran`` or ``refused`` (with the refusal), and notes worth counting.

    A failed oracle check raises ``AssertionError`` instead.
    """

    status: str
    refusal: str | None = None
    changed: bool = False  # the op deleted, added or rewrote a file of the table
    notes: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def files(path: Path) -> dict[str, tuple[int, int]]:
    """Every file under the table (``_delta_log`` too): relative path -> (size, mtime ns)."""
    out = {}
    for root, _dirs, names in os.walk(path):
        for name in names:
            full = Path(root) / name
            try:
                stat = full.stat()
            except FileNotFoundError:
                continue
            out[full.relative_to(path).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


def delta_relative(table: Path, printed: str) -> str:
    """A path Delta's VACUUM DRY RUN printed (``file:/abs/...``) relative to ``table``."""
    local = printed.removeprefix("file:")
    while local.startswith("//"):
        local = local[1:]
    for root in (str(table), str(table.resolve())):
        prefix = root.rstrip("/") + "/"
        if local.startswith(prefix):
            return local[len(prefix) :]
    return f"(outside) {printed}"


def delta_vacuum_selection(
    delta: Any, path: Path, *, lite: bool = False, inventory: Path | None = None
) -> set[str]:
    """Delta's own ``VACUUM ... RETAIN 0 HOURS DRY RUN`` (the retention check off): relative.

    ``lite`` runs ``LITE``; ``inventory`` runs ``USING INVENTORY`` on that Parquet report.
    """
    mode = " LITE" if lite else ""
    if inventory is not None:
        mode = f" USING INVENTORY (SELECT * FROM parquet.`{inventory}`)"
    rows = delta.sql(f"VACUUM {table_sql(path)}{mode} RETAIN 0 HOURS DRY RUN").collect()
    return {delta_relative(path, str(row[0])) for row in rows}


def write_inventory(path: Path, report: Path) -> None:
    """An inventory report of every file under the table, as a cloud writes one (Delta's
    schema: ``file:`` URIs of the names as stored, sizes, no directories, times in ms)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    found = [Path(d) / f for d, _, names in os.walk(path) for f in names]
    pq.write_table(
        pa.table(
            {
                "path": pa.array([f"file:{p}" for p in found], pa.string()),
                "length": pa.array([p.stat().st_size for p in found], pa.int64()),
                "isDir": pa.array([False] * len(found), pa.bool_()),
                "modificationTime": pa.array(
                    [p.stat().st_mtime_ns // 1_000_000 for p in found], pa.int64()
                ),
            }
        ),
        report,
    )


def probe_predicates(delta: Any, path: Path) -> list[str]:
    """Predicates for ``probes``, from the table's rows: up to ``PROBED_VALUES`` partition
    values present, the middle id and the ids above it."""
    rows = delta.sql(f"SELECT id, p FROM {table_sql(path)}").collect()
    ids = sorted(int(r["id"]) for r in rows)
    values = sorted({r["p"] for r in rows}, key=lambda v: (v is None, v or ""))
    wheres = [_predicate(v) for v in values[:PROBED_VALUES]]
    if ids:
        middle = ids[len(ids) // 2]
        wheres += [f"id = {middle}", f"id > {middle}"]
    return wheres


def probes(delta: Any, path: Path, wheres: list[str]) -> dict[str, tuple[int, int]]:
    """Delta's filtered reads of the table: count and checksum of the rows of each predicate.

    Delta answers them with partition pruning and data skipping on the files' statistics, so a
    wrong partition value or statistic in a file action changes an answer; ``count(*)`` alone
    is Delta's metadata-only count (from the actions' ``numRecords``).
    """
    t = table_sql(path)
    out: dict[str, tuple[int, int]] = {}
    if wheres:
        union = " UNION ALL ".join(
            f"SELECT {i} AS k, count(*) AS n, coalesce(sum(hash(*)), 0) AS h FROM {t} WHERE {w}"
            for i, w in enumerate(wheres)
        )
        for row in delta.sql(union).collect():
            out[wheres[int(row["k"])]] = (int(row["n"]), int(row["h"]))
    out["count(*)"] = (int(delta.sql(f"SELECT count(*) AS n FROM {t}").first()["n"]), 0)
    return out


def _unchanged(path: Path, before: dict[str, tuple[int, int]], what: str) -> None:
    after = files(path)
    gone = sorted(set(before) - set(after))
    new = sorted(set(after) - set(before))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    changes = {"deleted": gone, "added": new, "rewrote": changed}
    assert not any(changes.values()), f"{what} refused but changed the table: {changes}"


def run_op(
    op: OpSpec,
    path: Path,
    *,
    delta: Any,
    rows_before: tuple[int, int] | None = None,
    now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
) -> Outcome:
    """Run ``op`` on the table and hold it to Delta (module docstring).

    Args:
        op: The op.
        path: The generated table.
        delta: The Delta session (``spark.databricks.delta.retentionDurationCheck.enabled``
            false on it).
        rows_before: Delta's read of the table (``Applied.rows``); None reads it.
        now_ms: The clock (log cleanup runs two days ahead of it: every commit is expired).

    Returns:
        ``ran`` or ``refused`` (a ``MaintenanceError`` that left every file as it was), with
        notes and what the op reported.

    Raises:
        AssertionError: An oracle check failed (the message says which).
        TableUnreadable: Delta cannot read the table before the op.
        Exception: Whatever else our op raised (a crash).
    """
    from python_ops.errors import MaintenanceError

    clock = time.monotonic()
    # VACUUM touches no file action: Delta's count and checksum say all; the other ops rewrite
    # actions (partition values, statistics, checkpoints), which the filtered reads check.
    filtered = op.name != VACUUM
    try:
        if rows_before is None:
            rows_before = oracle(delta, path)
        wheres = probe_predicates(delta, path) if filtered else []
        before = probes(delta, path, wheres) if filtered else {}
    except Exception as err:
        raise TableUnreadable(err) from err
    outcome = Outcome("ran")
    outcome.seconds["read before"] = time.monotonic() - clock
    files_before = files(path)
    try:
        if op.name == VACUUM:
            _vacuum(op, path, delta, outcome)
        else:
            clock = time.monotonic()
            _other(op, path, delta, outcome, now_ms)
            outcome.seconds["op"] = time.monotonic() - clock
    except MaintenanceError as err:
        outcome.status = "refused"
        outcome.refusal = first_line(err)
        _unchanged(path, files_before, op.name)
    outcome.changed = files(path) != files_before
    clock = time.monotonic()
    try:
        rows_after = oracle(delta, path)
        after = probes(delta, path, wheres) if filtered else {}
    except Exception as err:
        raise AssertionError(
            f"Delta cannot read the table after {op!r}: {first_line(err)}"
        ) from err
    outcome.seconds["read after"] = time.monotonic() - clock
    assert rows_after == rows_before, (
        f"Delta reads other rows after {op!r}: (count, checksum) {rows_before} -> {rows_after}"
    )
    differ = {k: (before.get(k), after.get(k)) for k in before if before.get(k) != after.get(k)}
    assert not differ, f"Delta's filtered reads differ after {op!r}: {differ}"
    return outcome


def _lite_note(ours: set[str], lite: set[str], full: set[str] | None) -> str:
    """Why our LITE selection differs from Delta's LITE (ours is within Delta's FULL already)."""
    only_delta = lite - ours
    if not ours - lite and full is not None and not only_delta & full:
        # measured on delta-rs-spelled removes of raw adds: Delta and delta-rs both still read
        # these files, Delta's FULL keeps them, Delta's LITE deletes them and its next read fails
        return "lite: Delta's LITE selects files its own FULL keeps (still read); ours keeps them"
    return "lite: selects other paths than Delta's VACUUM LITE"


def _vacuum(op: OpSpec, path: Path, delta: Any, outcome: Outcome) -> None:
    from python_ops.errors import MaintenanceError
    from python_ops.ops.vacuum.run import vacuum

    clock = time.monotonic()
    report = None
    if op.mode == "inventory":
        report = path.parent / f"{path.name}-inventory.parquet"
        write_inventory(path, report)
    theirs: set[str] | None = None
    try:
        theirs = delta_vacuum_selection(delta, path, inventory=report)
        outcome.detail["delta_selected"] = sorted(theirs)
    except Exception as err:  # Delta's VACUUM fails on a table it reads: noted, not compared
        outcome.notes.append(f"Delta's VACUUM failed: {first_line(err)[:160]}")
    lite_theirs: set[str] | None = None
    if op.mode == "lite":
        try:
            lite_theirs = delta_vacuum_selection(delta, path, lite=True)
        except Exception as err:  # Delta's own LITE may refuse: only noted
            outcome.notes.append(f"Delta's LITE refused: {first_line(err)[:160]}")
    outcome.seconds["delta vacuum dry runs"] = time.monotonic() - clock
    clock = time.monotonic()
    before = files(path)
    args: dict[str, Any] = {
        "retention_hours": 0,
        "allow_short_retention": True,
        "audit": False,
        "mode": "full" if report is not None else op.mode,
        "inventory": None if report is None else str(report),
    }
    if report is not None:  # its cutoff is the report's time: it knows every file before it
        args["now_ms"] = int(report.stat().st_mtime * 1000)
    try:
        dry = vacuum(str(path), dry_run=True, **args)
    finally:
        _unchanged(path, before, "vacuum dry run")  # a dry run deletes nothing, refused or not
    ours = {f.path.rstrip("/") for f in dry.paths}
    outcome.detail["ours_selected"] = sorted(ours)
    if theirs is not None:
        extra = ours - theirs
        assert not extra, (
            f"our VACUUM ({op.mode}) dry run selects paths Delta's VACUUM RETAIN 0 HOURS DRY "
            f"RUN keeps: {sorted(extra)}; Delta selects {sorted(theirs)}"
        )
        if op.mode != "lite" and ours != theirs:
            outcome.notes.append(f"{op.mode}: selects fewer paths than Delta's VACUUM")
            outcome.detail["delta_only"] = sorted(theirs - ours)
    if lite_theirs is not None and ours != lite_theirs:
        outcome.notes.append(_lite_note(ours, lite_theirs, theirs))
        outcome.detail["lite_diff"] = (sorted(ours - lite_theirs), sorted(lite_theirs - ours))
    try:
        real = vacuum(str(path), dry_run=False, **args)
    except MaintenanceError:
        _unchanged(path, before, "vacuum")
        raise
    outcome.seconds["op"] = time.monotonic() - clock
    deleted = {f.path.rstrip("/") for f in real.paths}
    if theirs is not None:
        assert deleted <= theirs, (
            f"our VACUUM ({op.mode}) deleted paths Delta keeps: {sorted(deleted - theirs)}"
        )
    assert deleted == ours, (
        "our VACUUM's real run selected other paths than its dry run: "
        f"only real {sorted(deleted - ours)}, only dry {sorted(ours - deleted)}"
    )
    left = sorted(p for p in deleted if (path / p).is_file())
    assert not left, f"our VACUUM reported deleting files still on disk: {left}"


def _other(op: OpSpec, path: Path, delta: Any, outcome: Outcome, now_ms: Callable[[], int]) -> None:
    spark = delta if op.delta_sql else None
    if op.name == COMPACT:
        from python_ops.ops.optimize.execute import optimize

        result: Any = optimize(str(path), min_small_files=2, audit=False, spark=spark)
        outcome.detail["writer"] = result.writer
        outcome.detail["commits"] = list(result.commits)
    elif op.name == ZORDER:
        from python_ops.ops.optimize.execute import optimize

        result = optimize(str(path), zorder_by=["id"], full=True, audit=False, spark=spark)
        outcome.detail["writer"] = result.writer
        outcome.detail["commits"] = list(result.commits)
    elif op.name == LOG_CLEANUP:
        from python_ops.ops.log_cleanup import cleanup_logs

        result = cleanup_logs(
            str(path), retention_days=0, dry_run=False, audit=False, now_ms=now_ms() + 2 * DAY_MS
        )
        outcome.detail["files_deleted"] = result.files_deleted
        outcome.detail["checkpoint_writer"] = getattr(result, "checkpoint_writer", None)
    elif op.name == STATS:
        from python_ops.ops.stats.run import compute_stats

        result = compute_stats(str(path), audit=False)
        outcome.detail["files_updated"] = result.files_updated
    elif op.name == PURGE:
        from python_ops.ops.purge import purge

        result = purge(str(path), deleted_ratio=0.0, audit=False, spark=spark)
        outcome.detail["writer"] = result.writer
        outcome.detail["files_removed"] = result.files_removed
    else:
        raise ValueError(op)


def describe(spec: TableSpec, op: OpSpec) -> str:
    """The example as Python a reader can paste (the minimal example of a failure)."""
    mapped = ", mapped=True" if spec.mapped else ""
    lines = [f"TableSpec(partitioned={spec.partitioned}{mapped}, steps=("]
    lines += [f"    {step!r}," for step in spec.steps]
    lines.append(f")), {op!r}")
    return "\n".join(lines)
