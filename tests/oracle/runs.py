"""Running Delta Lake 4.4 (the oracle) and our ops side by side on copies of one table.

Used by the tests in ``tests/oracle`` and by ``scripts/compatibility.py``: where the tables are
(``_delta_log`` found at any depth under the shared fixtures), how a table is copied and aged so
both sides see the same files and times, Delta's VACUUM through SQL, and what is left on disk
afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.delta_corpus import sql_path
from tests.oracle.recorded import DeltaAnswer

AGE_S = 60 * 86_400
LOG = "_delta_log"


@dataclass(frozen=True)
class Case:
    """One directory the oracle compares on.

    Attributes:
        id: ``<group>/<relative path>`` (e.g. ``golden/data-reader-date-types-Asia/Beirut``).
        path: The original (never modified).
        is_table: False for a fixture directory with no ``_delta_log`` at any depth.
        age: Backdate every file ``AGE_S`` before use (shared fixtures: git keeps no times);
            corpus tables are already aged and planted.
    """

    id: str
    path: Path
    is_table: bool = True
    age: bool = True


def find_cases(group: str, root: Path) -> list[Case]:
    """Every table under ``root``: each directory holding a ``_delta_log``, at any depth.

    A top-level directory with no ``_delta_log`` anywhere below it is one "not a table" case.

    Args:
        group: The id prefix (``golden``, ``delta-tables``).
        root: The fixtures directory.

    Returns:
        The cases, sorted by id.
    """
    cases = []
    if not root.is_dir():
        return cases
    for top in sorted(p for p in root.iterdir() if p.is_dir()):
        found = []
        for dirpath, dirnames, _ in os.walk(top):
            if LOG in dirnames:
                found.append(Path(dirpath))
                dirnames[:] = []  # a table's own directories are not other tables
        if not found:
            cases.append(Case(f"{group}/{top.name}", top, is_table=False))
        for table in sorted(found):
            cases.append(Case(f"{group}/{table.relative_to(root).as_posix()}", table))
    return cases


def age_all(path: Path, age_s: float = AGE_S) -> None:
    """Backdate every file and directory under ``path`` (symbolic links not followed)."""
    when = time.time() - age_s
    for dirpath, dirnames, filenames in os.walk(path):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (when, when), follow_symlinks=False)


def prepare(case: Case, work: Path, *names: str) -> list[Path]:
    """Copies of the case's directory under ``work/<name>/``, identical in content and times.

    Args:
        case: The case.
        work: A scratch directory.
        names: One copy per name.

    Returns:
        The copies' table directories.
    """
    first = work / names[0] / case.path.name
    shutil.copytree(case.path, first, symlinks=True)
    if case.age:
        age_all(first)
    copies = [first]
    for name in names[1:]:
        copy = work / name / case.path.name
        shutil.copytree(first, copy, symlinks=True)  # copy2: file and directory times kept
        copies.append(copy)
    return copies


def tree(table: Path) -> set[str]:
    """Relative paths of every file and directory under ``table`` except ``_delta_log/``'s."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(table):
        here = Path(dirpath)
        if here == table and LOG in dirnames:
            dirnames.remove(LOG)
        for name in filenames:
            out.add((here / name).relative_to(table).as_posix())
        for name in dirnames:
            out.add((here / name).relative_to(table).as_posix() + "/")
    return out


def log_tree(table: Path) -> dict[str, int]:
    """Every file under ``_delta_log`` with its size."""
    log = table / LOG
    return {p.relative_to(log).as_posix(): p.stat().st_size for p in log.rglob("*") if p.is_file()}


def delta_relative(table: Path, path: str) -> str:
    """A path Delta's VACUUM DRY RUN printed (``file:/abs/...``) relative to ``table``."""
    local = Path(path.removeprefix("file:"))
    for root in (table, table.resolve()):
        try:
            return local.relative_to(root).as_posix()
        except ValueError:
            continue
    return f"(outside) {path}"


def delta_vacuum(spark: Any, table: Path, *, zero: bool, dry_run: bool) -> list[str]:
    """Delta's own VACUUM (retention check off in ``spark``); dry run: the paths it lists.

    Delta 4.4's ``DRY RUN`` lists every path it would delete: files and also the directories
    its counting rule selects (``file:/abs/path``, names as on disk).

    Args:
        spark: A Spark Connect session on the Delta server.
        table: The table.
        zero: ``RETAIN 0 HOURS``; else the table's ``delta.deletedFileRetentionDuration``.
        dry_run: ``DRY RUN``.

    Returns:
        For a dry run, the relative paths Delta would delete (directories without a trailing
        slash); else what it returned (the table path).
    """
    sql = f"VACUUM {sql_path(table)}" + (" RETAIN 0 HOURS" if zero else "")
    rows = spark.sql(sql + (" DRY RUN" if dry_run else "")).collect()
    if not dry_run:
        return [str(r[0]) for r in rows]
    return [delta_relative(table, str(r[0])) for r in rows]


def first_line(err: BaseException, table: Path | None = None) -> str:
    """The first meaningful line of an error (Spark's JVM stack trace dropped).

    With ``table``, its path reads ``<table>``: the same refusal reads the same on any copy.
    """
    text = str(err).strip()
    if table is not None:
        text = text.replace(str(table), "<table>")
    lines = text.splitlines()
    return (lines[0] if lines else type(err).__name__)[:300]


@dataclass
class VacuumComparison:
    """Our VACUUM and Delta's on copies of one table.

    Attributes:
        case: The case id.
        is_table: False when the fixture directory has no ``_delta_log``.
        ours_refused: Our ``MaintenanceError`` (class: message), or None.
        delta_refused: Delta's error (first line), or None.
        ours_at_table: Paths (files and directories) our dry run selected at the table's
            retention.
        ours_at_zero: ... at zero retention with the check overridden.
        delta_at_table: Paths Delta's ``VACUUM ... DRY RUN`` listed at the table's retention
            (it lists the directories it selected too).
        delta_at_zero: ... with ``RETAIN 0 HOURS``.
        after_ours: What is left on copy A after our real run at zero (files, ``dir/``).
        after_delta: What is left on copy B after Delta's real run at zero.
        before: What was there before (both copies).
        ours_log_changed: ``_delta_log`` files our real run deleted or rewrote (must be none).
        ours_log_added: ``_delta_log`` files our real run added (``_last_vacuum_info``, as
            Delta's FULL run writes it for VACUUM LITE).
        delta_log_added: ``_delta_log`` files Delta's real run added (its VACUUM START and END
            commits, their checksums, ``_last_vacuum_info``).
        delta_real_run: Delta's real run was compared (otherwise ours is checked against our
            own selection: ``real_run_differences``).
        delta_recorded: Delta's answer came from its recording on the same files
            (``tests.oracle.recorded``), not from Delta in this run.
        seconds: Wall time of the whole comparison.
    """

    case: str
    is_table: bool
    ours_refused: str | None = None
    delta_refused: str | None = None
    ours_at_table: set[str] = field(default_factory=set)
    ours_at_zero: set[str] = field(default_factory=set)
    delta_at_table: set[str] = field(default_factory=set)
    delta_at_zero: set[str] = field(default_factory=set)
    after_ours: set[str] = field(default_factory=set)
    after_delta: set[str] = field(default_factory=set)
    before: set[str] = field(default_factory=set)
    ours_log_changed: list[str] = field(default_factory=list)
    ours_log_added: set[str] = field(default_factory=set)
    delta_log_added: set[str] = field(default_factory=set)
    delta_real_run: bool = True
    delta_recorded: bool = False
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        """``not a table``, ``both refuse``, ``refused``, ``delta refuses``, ``compared``."""
        if not self.is_table:
            return "not a table"
        if self.ours_refused and self.delta_refused:
            return "both refuse"
        if self.ours_refused:
            return "refused"
        if self.delta_refused:
            return "delta refuses"
        return "compared"


def hadoop_checksum(path: str) -> str:
    """The hidden checksum file Hadoop's local file system keeps beside ``path``."""
    head, _, name = path.rpartition("/")
    return f"{head}/.{name}.crc" if head else f".{name}.crc"


def checksum_of(path: str) -> str | None:
    """The file a hidden Hadoop checksum (``.<name>.crc``) belongs to; None for other files."""
    head, _, name = path.rpartition("/")
    if not (name.startswith(".") and name.endswith(".crc")):
        return None
    data = name[1:].removesuffix(".crc")
    return f"{head}/{data}" if head else data


def deleted_by(before: set[str], after: set[str]) -> set[str]:
    """What a real run deleted, as a dry run names it (directories without the slash).

    Hadoop's local file system deletes the hidden ``.<name>.crc`` beside each file it deletes;
    those checksums are not part of what VACUUM selected and are left out.
    """
    gone = before - after
    checksums = {hadoop_checksum(p) for p in gone if not p.endswith("/")}
    return {p.rstrip("/") for p in gone - checksums}


def on_purpose_real_run(c: VacuumComparison) -> tuple[set[str], set[str]]:
    """What is left after each real run, with the one deliberate difference taken out.

    Hadoop's local file system (``ChecksumFileSystem``, what Delta's ``file:`` paths use)
    deletes the hidden ``.<name>.crc`` checksum beside every file it deletes. We never touch
    hidden files (SPEC 1.5) and object stores have no such files, so after our run those
    checksums of the files both runs deleted remain. Exactly those are taken out of our side;
    any other difference counts.

    Returns:
        (left after ours, left after Delta's).
    """
    deleted = c.before - c.after_delta
    leftover = {hadoop_checksum(p) for p in deleted if not p.endswith("/")} & (
        c.after_ours - c.after_delta
    )
    return c.after_ours - leftover, c.after_delta


def vacuum_differences(c: VacuumComparison) -> dict[str, str]:
    """Per comparison (``at table retention``, ``at zero``, ``real run``), how we differ."""
    out = {}
    real_run = on_purpose_real_run(c) if c.delta_real_run else real_run_differences(c)
    for key, ours, delta in (
        ("at table retention", c.ours_at_table, c.delta_at_table),
        ("at zero", c.ours_at_zero, c.delta_at_zero),
        ("real run", *real_run),
    ):
        if ours != delta:
            mine, theirs = sorted(ours - delta)[:3], sorted(delta - ours)[:3]
            out[key] = f"only ours {mine}, only Delta's {theirs}"
    if c.ours_log_changed:
        out["real run"] = f"our VACUUM deleted or rewrote log files {c.ours_log_changed[:3]}"
    elif c.delta_real_run and c.delta_refused is None and not c.ours_log_added <= c.delta_log_added:
        out["real run"] = f"our VACUUM added log files Delta's does not: {c.ours_log_added}"
    return out


def compare_vacuum(
    spark: Any,
    case: Case,
    work: Path,
    *,
    delta_real_run: bool = True,
    recorded: DeltaAnswer | None = None,
    ask_table: bool = False,
) -> VacuumComparison:
    """Run our VACUUM and Delta's on copies of ``case`` and record both answers.

    Copy A: our dry runs (table retention, zero), Delta's dry runs, then our real run at zero.
    Copy B (with ``delta_real_run``): Delta's real run at zero. Each side's refusal is recorded,
    not raised; any other exception from our side propagates (a traceback is never a right
    answer).

    Without ``delta_real_run`` (the shared fixtures: a real run costs Delta half as much again as
    a dry run, for its VACUUM START/END commits) Delta answers with dry runs only; its dry run at
    the table's retention is asked for only when ours differs from ours at zero (otherwise the
    two selections are one). Our real run is then checked against our own selection
    (``real_run_differences``).

    Args:
        spark: A Spark Connect session on the Delta server, retention check off.
        case: The table.
        work: An empty scratch directory.
        delta_real_run: Also run Delta's real run, on copy B.
        recorded: Delta's recorded answer on this case (``tests.oracle.recorded``): Delta is not
            asked (only without ``delta_real_run``).
        ask_table: Ask Delta's dry run at the table's retention even where ours equals ours at
            zero (to record its answer).

    Returns:
        The comparison.
    """
    from python_ops.errors import MaintenanceError
    from python_ops.ops.vacuum import vacuum

    started = time.perf_counter()
    out = VacuumComparison(case.id, case.is_table, delta_real_run=delta_real_run)
    a, b = prepare(case, work, "a", "b") if delta_real_run else (*prepare(case, work, "a"), None)
    out.before = tree(a)
    try:
        at_table = vacuum(str(a), dry_run=True, audit=False)
        at_zero = vacuum(str(a), retention_hours=0, allow_short_retention=True, audit=False)
        out.ours_at_table = {f.path for f in at_table.paths}
        out.ours_at_zero = {f.path for f in at_zero.paths}
    except MaintenanceError as err:
        out.ours_refused = f"{type(err).__name__}: {err}"
    if recorded is not None:
        assert not delta_real_run, "a recorded answer holds dry runs only"
        out.delta_recorded = True
        out.delta_at_zero, out.delta_at_table = set(recorded.at_zero), set(recorded.at_table)
        out.delta_refused = recorded.refused
    else:
        _ask_delta(spark, out, a, b, ask_table=ask_table)
    if out.ours_refused is None:
        log_before = log_tree(a)
        vacuum(str(a), retention_hours=0, allow_short_retention=True, dry_run=False, audit=False)
        out.after_ours = tree(a)
        log_after = log_tree(a)
        out.ours_log_added = set(log_after) - set(log_before)
        out.ours_log_changed = sorted(k for k, v in log_before.items() if log_after.get(k) != v)
    out.seconds = time.perf_counter() - started
    return out


def _ask_delta(
    spark: Any, out: VacuumComparison, a: Path, b: Path | None, *, ask_table: bool
) -> None:
    """Delta's dry runs on copy A and, with copy B, its real run there, into ``out``."""
    try:
        out.delta_at_zero = set(delta_vacuum(spark, a, zero=True, dry_run=True))
        if ask_table or b is not None or out.ours_refused or out.ours_at_table != out.ours_at_zero:
            out.delta_at_table = set(delta_vacuum(spark, a, zero=False, dry_run=True))
        else:  # one selection: Delta's at the table's retention is its selection at zero
            out.delta_at_table = out.delta_at_zero
        if b is not None:
            delta_log_before = log_tree(b)
            delta_vacuum(spark, b, zero=True, dry_run=False)
            out.after_delta = tree(b)
            out.delta_log_added = set(log_tree(b)) - set(delta_log_before)
    except Exception as err:  # Delta's errors come as several pyspark exception types
        out.delta_refused = first_line(err, a)


def real_run_differences(c: VacuumComparison) -> tuple[set[str], set[str]]:
    """Without Delta's real run: what our real run deleted against the selection it printed.

    Our real run must delete exactly the files of its own dry run at zero (which equals
    Delta's: checked apart), and of its directories those it found empty when their turn came:
    a selected directory may only be left where it still holds something (a hidden file).

    Returns:
        (deleted by our real run, what it should have deleted), the kept directories taken
        out of the second.
    """
    deleted = deleted_by(c.before, c.after_ours)
    kept = {d for d in c.ours_at_zero if d + "/" in c.after_ours}
    return deleted, c.ours_at_zero - kept


def log_files(table: Path) -> set[str]:
    """Every file under ``_delta_log`` (relative), hidden ones too."""
    log = table / LOG
    return {p.relative_to(log).as_posix() for p in log.rglob("*") if p.is_file()}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def canonical(expr: str, dtype: Any, depth: int = 0) -> str:
    """A SQL expression of ``expr`` (of Spark type ``dtype``) that renders the same every read.

    ``to_json`` writes a map whose key is an array or a struct with the key object's Java
    ``toString`` (``ColumnarArray@3a7baf5e``): a different string on every read, so a checksum
    over it changes although the rows did not (found on golden ``table-with-columnmapping-mode-
    name``). Maps become their entries sorted, nested types are rebuilt field by field.
    """
    from pyspark.sql.types import ArrayType, MapType, StructType

    x = f"x{depth}"
    if isinstance(dtype, MapType):
        key = canonical(f"{x}.key", dtype.keyType, depth + 1)
        value = canonical(f"{x}.value", dtype.valueType, depth + 1)
        entries = f"transform(map_entries({expr}), {x} -> named_struct('k', {key}, 'v', {value}))"
        return f"array_sort(transform({entries}, {x} -> to_json({x})))"
    if isinstance(dtype, ArrayType):
        return f"transform({expr}, {x} -> {canonical(x, dtype.elementType, depth + 1)})"
    if isinstance(dtype, StructType):
        fields = ", ".join(
            f"'{f.name}', {canonical(f'{expr}.{_quote(f.name)}', f.dataType, depth)}"
            for f in dtype.fields
        )
        return f"if({expr} is null, null, named_struct({fields}))" if fields else expr
    return expr


def read_versions(spark: Any, table: Path, versions: list[int]) -> dict[int, tuple[int, int]]:
    """Delta reads each version (one statement): row count and an order-free checksum.

    The checksum hashes each row as JSON of its ``canonical`` form (Spark refuses to hash maps
    directly, and ``to_json`` of some maps differs from read to read).
    """
    if not versions:
        return {}
    parts = []
    for v in versions:
        source = f"{sql_path(table)} VERSION AS OF {v}"
        schema = _schema_at(spark, table, v, source)
        row = ", ".join(
            f"'{f.name}', {canonical(_quote(f.name), f.dataType)}" for f in schema.fields
        )
        parts.append(
            f"SELECT {v} AS v, count(*) AS n, "
            f"coalesce(sum(pmod(xxhash64(to_json(named_struct({row}))), 1000000007)), 0) AS h "
            f"FROM {source}"
            if row
            else f"SELECT {v} AS v, count(*) AS n, 0 AS h FROM {source}"
        )
    rows = spark.sql(" UNION ALL ".join(parts)).collect()
    return {int(r["v"]): (int(r["n"]), int(r["h"])) for r in rows}


def _schema_at(spark: Any, table: Path, version: int, source: str) -> Any:
    """The table's schema at ``version``, to name the columns of the checksum query.

    Taken from the log's ``metaData.schemaString`` (Spark's own JSON form of the schema) where
    our reader gives one: asking Delta costs one analysis request per version, a snapshot load
    each. A wrong schema here makes Delta's query fail or its checksums differ, never pass.
    """
    from pyspark.sql.types import StructType

    from python_ops.delta.state.snapshot import read_snapshot

    try:
        metadata = read_snapshot(str(table), version=version).metadata
        if not metadata.schema_missing:
            return StructType.fromJson(json.loads(metadata.schema_string))
    except Exception:  # a log our reader refuses: Delta says what the schema is
        pass
    return spark.sql(f"SELECT * FROM {source}").schema


def delta_log_cleanup(spark: Any, table: Path, retention: str) -> None:
    """Delta's own expired-log cleanup, the way Delta runs it: after a checkpoint.

    One ``ALTER TABLE ... SET TBLPROPERTIES`` sets ``delta.logRetentionDuration`` (and
    ``delta.deletedFileRetentionDuration``, which Delta requires not to be longer) to
    ``retention`` and ``delta.checkpointInterval`` to 1, so the ALTER's own commit is
    checkpointed and the cleanup follows it.
    """
    spark.sql(
        f"ALTER TABLE {sql_path(table)} SET TBLPROPERTIES ("
        f"'delta.logRetentionDuration'='{retention}', "
        f"'delta.deletedFileRetentionDuration'='{retention}', "
        "'delta.checkpointInterval'='1')"
    ).collect()


@dataclass
class LogCheck:
    """Our log cleanup on an aged copy of a fixture table, held against Delta's.

    Attributes:
        case: The case id.
        is_table: False when the fixture directory has no ``_delta_log``.
        ours_refused: Our ``MaintenanceError`` (class: message), or None.
        delta_refused: Delta's error cleaning copy B, or None.
        skipped_reason: Why our cleanup deleted nothing, if it said so.
        ours_deleted: Log files our cleanup deleted (relative to ``_delta_log``).
        delta_deleted: Log files Delta's cleanup deleted.
        unreadable: Versions Delta read before our cleanup but not after (from the oldest one
            we kept), or whose rows changed.
    """

    case: str
    is_table: bool
    ours_refused: str | None = None
    delta_refused: str | None = None
    skipped_reason: str | None = None
    ours_deleted: set[str] = field(default_factory=set)
    delta_deleted: set[str] = field(default_factory=set)
    unreadable: list[int] = field(default_factory=list)

    @property
    def wrong(self) -> list[str]:
        """What makes our answer wrong against Delta's (empty when right)."""
        out = []
        beyond = self.ours_deleted - self.delta_deleted
        if beyond and self.delta_refused is None:
            out.append(f"deleted what Delta keeps: {sorted(beyond)[:3]}")
        owners = {p: checksum_of(p) for p in self.ours_deleted}
        orphaned = [p for p, o in owners.items() if o is not None and o not in self.ours_deleted]
        if orphaned:
            out.append(f"deleted the checksum of a kept file: {sorted(orphaned)[:3]}")
        if self.unreadable:
            out.append(f"versions Delta no longer reads the same: {self.unreadable[:5]}")
        return out


def check_log_cleanup(spark: Any, case: Case, work: Path) -> LogCheck:
    """Our ``cleanup_logs`` (default retention, 30 days) on a copy aged 60 days, Delta's on another.

    Every file is aged, so Delta's cleanup after its ALTER's new checkpoint expires everything
    before it; ours keeps its newest checkpoint (writing one first where the Delta writer can),
    so ours must delete a subset of Delta's, and Delta must read every version from the oldest
    we say we kept with the rows it read before.

    Args:
        spark: A Spark Connect session on the Delta server (time-travel retention check off).
        case: The table.
        work: An empty scratch directory.

    Returns:
        The check.
    """
    from python_ops.errors import MaintenanceError
    from python_ops.ops.log_cleanup import cleanup_logs

    out = LogCheck(case.id, case.is_table)
    a, b = prepare(case, work, "a", "b")
    if not case.is_table:
        try:
            cleanup_logs(str(a), dry_run=False)
        except MaintenanceError as err:
            out.ours_refused = f"{type(err).__name__}: {err}"
        out.delta_refused = "not a Delta table"
        return out
    before = log_files(a)
    head = max((int(n[:20]) for n in before if n[:20].isdigit()), default=-1)
    try:
        read_before = read_versions(spark, a, list(range(head + 1)))
    except Exception:  # Delta cannot read every version (e.g. a broken log): no read check
        read_before = {}
    try:
        result = cleanup_logs(str(a), dry_run=False)
        out.skipped_reason = result.skipped_reason
        kept = result.oldest_version_kept
    except MaintenanceError as err:
        out.ours_refused = f"{type(err).__name__}: {err}"
        kept = None
    out.ours_deleted = before - log_files(a)
    if read_before and kept is not None:
        versions = [v for v in read_before if v >= kept]
        try:
            after = read_versions(spark, a, versions)
        except Exception:  # as above: then every kept version counts as unreadable
            after = {}
        out.unreadable = [v for v in versions if after.get(v) != read_before[v]]
    try:
        delta_log_cleanup(spark, b, "interval 30 days")
    except Exception as err:  # Delta's errors come as several pyspark exception types
        out.delta_refused = first_line(err)
    out.delta_deleted = before - log_files(b)
    return out
