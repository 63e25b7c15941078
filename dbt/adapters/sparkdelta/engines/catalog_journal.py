"""A persistent record of the embedded engine's catalog, so tables outlive the dbt process.

Sail keeps its catalog in memory for one Spark session: a new ``dbt`` process would start with no
tables and silently rebuild incremental models from scratch. The journal fixes that. Every DDL
statement that succeeds through the embedded engine is observed here and recorded: schemas,
tables (name -> Delta location) and views (name -> the statement that created them). A new
engine registers a table or view of the journal when a statement first needs it
(``engines/embedded.py``): tables at their locations *without* a column list (their schema is
always read from the Delta log, so it can never go stale), views after what they read.

On disk (``python_ops.maintenance.selection.catalog_file``): a snapshot
``_sparkdelta_catalog.json`` and an append-only log ``_sparkdelta_catalog.log``. A change is one
short ``O_APPEND`` write of one JSON line (atomic on a local file system, so threads and processes
never interleave records and need no lock for it); the whole catalog is rewritten only by a
compaction (temp file, fsync, rename), when a new engine finds the log longer than the snapshot.
Each engine holds a shared ``flock``
on ``_sparkdelta_catalog.lock`` while it lives; a compaction needs it exclusively and is skipped
(left to a later start) while another process has the warehouse open. Appends are not fsynced:
a machine crash can lose the last records (those tables are then rebuilt by the next run), never
corrupt the journal (a torn last line is skipped).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from python_ops.maintenance import JOURNAL_NAME, LOG_NAME, Catalog, read_catalog

_IDENT = r"(?:`[^`]+`|[A-Za-z0-9_]+)"
_NAME = rf"(?P<name>{_IDENT}(?:\s*\.\s*{_IDENT}){{0,2}})"
_CREATE_VIEW = re.compile(
    rf"^create\s+(?:or\s+replace\s+)?(?P<temp>(?:global\s+)?temp(?:orary)?\s+)?view\s+"
    rf"(?:if\s+not\s+exists\s+)?{_NAME}",
    re.IGNORECASE,
)
_CREATE_TABLE = re.compile(
    rf"^(?:create\s+(?:or\s+replace\s+)?|replace\s+)(?:external\s+)?table\s+"
    rf"(?:if\s+not\s+exists\s+)?{_NAME}",
    re.IGNORECASE,
)
_DROP = re.compile(rf"^drop\s+(?P<kind>table|view)\s+(?:if\s+exists\s+)?{_NAME}", re.IGNORECASE)
_RENAME = re.compile(
    rf"^alter\s+(?:table|view)\s+{_NAME}\s+rename\s+to\s+(?P<new>{_IDENT}(?:\s*\.\s*{_IDENT})?)",
    re.IGNORECASE,
)
_CREATE_SCHEMA = re.compile(
    rf"^create\s+(?:schema|database|namespace)\s+(?:if\s+not\s+exists\s+)?{_NAME}", re.IGNORECASE
)
_DROP_SCHEMA = re.compile(
    rf"^drop\s+(?:schema|database|namespace)\s+(?:if\s+exists\s+)?{_NAME}(?P<cascade>\s+cascade)?",
    re.IGNORECASE,
)
# where the query of CREATE TABLE ... AS starts (``as select``, ``as with``, ``as (``)
_QUERY_START = re.compile(r"\bas\s*(?:\(|select\b|with\b|from\b|values\b)", re.IGNORECASE)
_LOCATION_CLAUSE = re.compile(r"\blocation\s+'((?:[^'\\]|\\.)*)'", re.IGNORECASE)
_LEADING_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*", re.DOTALL)


def strip_leading_comments(sql: str) -> str:
    """Remove leading ``/* */`` and ``--`` comments (dbt prefixes every query with one)."""
    return _LEADING_COMMENTS.sub("", sql, count=1).strip()


def declared_location(statement: str) -> str | None:
    """The ``LOCATION '...'`` a CREATE TABLE statement gives its table (None: it gives none).

    Only the statement's header counts (before ``AS <query>``), so a string literal in the
    query is never taken for the location.
    """
    query = _QUERY_START.search(statement)
    header = statement[: query.start()] if query else statement
    found = _LOCATION_CLAUSE.search(header)
    return found[1].replace("\\'", "'") if found else None


def _unquote_name(name: str, default_schema: str) -> tuple[str, str]:
    parts = [
        p.strip().strip("`").lower() for p in re.split(r"\s*\.\s*(?=(?:[^`]*`[^`]*`)*[^`]*$)", name)
    ]
    if len(parts) == 1:
        return default_schema, parts[0]
    return parts[-2], parts[-1]


@dataclass(frozen=True)
class DdlEvent:
    """What a successful statement changed in the catalog.

    Attributes:
        action: ``create_table``, ``create_view``, ``drop``, ``rename``, ``create_schema`` or
            ``drop_schema``.
        schema: The schema of the affected relation (or the schema itself).
        name: The relation name ("" for schema events).
        statement: The statement without leading comments (kept for views).
        new_schema: For renames, the new schema.
        new_name: For renames, the new name.
        cascade: For schema drops, whether CASCADE was given.
    """

    action: str
    schema: str
    name: str
    statement: str = ""
    new_schema: str = ""
    new_name: str = ""
    cascade: bool = False


def parse_ddl(sql: str, *, default_schema: str = "default") -> DdlEvent | None:
    """Recognise a catalog-changing statement.

    Args:
        sql: The statement as executed.
        default_schema: Schema of unqualified names.

    Returns:
        The event, or None for statements that do not change persistent catalog entries
        (queries, DML, temporary views).
    """
    body = strip_leading_comments(sql)
    if m := _CREATE_VIEW.match(body):
        if m["temp"]:
            return None
        schema, name = _unquote_name(m["name"], default_schema)
        return DdlEvent("create_view", schema, name, statement=body)
    if m := _CREATE_TABLE.match(body):
        schema, name = _unquote_name(m["name"], default_schema)
        return DdlEvent("create_table", schema, name, statement=body)
    if m := _DROP.match(body):
        schema, name = _unquote_name(m["name"], default_schema)
        return DdlEvent("drop", schema, name)
    if m := _RENAME.match(body):
        schema, name = _unquote_name(m["name"], default_schema)
        new_schema, new_name = _unquote_name(m["new"], schema)
        return DdlEvent("rename", schema, name, new_schema=new_schema, new_name=new_name)
    if m := _CREATE_SCHEMA.match(body):
        return DdlEvent("create_schema", m["name"].strip("`").lower(), "")
    if m := _DROP_SCHEMA.match(body):
        return DdlEvent("drop_schema", m["name"].strip("`").lower(), "", cascade=bool(m["cascade"]))
    return None


class CatalogJournal:
    """The persisted catalog of one warehouse directory, and its copy in memory.

    Args:
        warehouse: The warehouse directory (must exist).

    Attributes:
        appends: Records this object appended (one per catalog change).
        compactions: Times it rewrote the snapshot.
    """

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse
        self.path = os.path.join(warehouse, JOURNAL_NAME)
        self.log_path = os.path.join(warehouse, LOG_NAME)
        self._lock = threading.Lock()  # the copy in memory only: held for microseconds, no I/O
        self._lock_fd = os.open(self.path.removesuffix(".json") + ".lock", os.O_RDWR | os.O_CREAT)
        self.appends = 0
        self.compactions = 0
        self._log_fd: int | None = None
        self._catalog, records = read_catalog(warehouse)
        if records > max(64, len(self._catalog.relations)):
            self.compact()
        fcntl.flock(self._lock_fd, fcntl.LOCK_SH)  # this process uses the journal: no compaction

    def compact(self) -> bool:
        """Rewrite the snapshot with the log applied and empty the log, unless another holds it.

        Returns:
            Whether it compacted (False: another process has the warehouse open).
        """
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            catalog, _ = read_catalog(self.warehouse)
            fd, tmp = tempfile.mkstemp(dir=self.warehouse, prefix=".catalog-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(catalog.to_json(), fh, indent=1, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            if os.path.exists(self.log_path):
                os.truncate(self.log_path, 0)
            with self._lock:
                self._catalog = catalog
            self.compactions += 1
            return True
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_SH)

    def close(self) -> None:
        """Release the files (the engine stops)."""
        for fd in (self._log_fd, self._lock_fd):
            if fd is not None and fd >= 0:
                os.close(fd)
        self._log_fd, self._lock_fd = None, -1

    def load(self) -> dict[str, Any]:
        """The catalog as this process knows it, in the snapshot's JSON form."""
        with self._lock:
            return self._catalog.to_json()

    def catalog(self) -> Catalog:
        """A copy of the catalog as this process knows it."""
        with self._lock:
            return Catalog(dict(self._catalog.schemas), dict(self._catalog.relations))

    def _append(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """Apply a record in memory and, when it changed anything, append it to the log."""
        with self._lock:
            key = (str(record.get("schema")), str(record.get("name")))
            before = self._catalog.relations.get(key)
            known_schema = record.get("schema") in self._catalog.schemas
            removed = self._catalog.apply(record)
        entry = record.get("entry")
        unchanged = (record["op"] == "schema" and known_schema) or (
            entry is not None and before == entry and known_schema
        )
        if unchanged or (record["op"] in ("forget", "rename") and before is None):
            return removed
        line = (json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
        if self._log_fd is None:
            self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._log_fd, line)  # one write of one line: atomic with O_APPEND
        self.appends += 1
        return removed

    def record_schema(self, schema: str) -> None:
        """Remember that a schema exists."""
        self._append({"op": "schema", "schema": schema})

    def record_table(self, schema: str, name: str, location: str) -> None:
        """Remember a table and its Delta location (replacing any entry of that name)."""
        entry = {"kind": "table", "schema": schema, "name": name, "location": location}
        self._append({"op": "put", "schema": schema, "name": name, "entry": entry})

    def record_view(self, schema: str, name: str, statement: str) -> None:
        """Remember a view and the statement that created it."""
        entry = {"kind": "view", "schema": schema, "name": name, "statement": statement}
        self._append({"op": "put", "schema": schema, "name": name, "entry": entry})

    def forget(self, schema: str, name: str) -> dict[str, Any] | None:
        """Drop a relation's entry; return the removed entry, if there was one."""
        removed = self._append({"op": "forget", "schema": schema, "name": name})
        return removed[0] if removed else None

    def rename(self, schema: str, name: str, new_schema: str, new_name: str) -> None:
        """Move an entry to a new name (views keep their defining query)."""
        record = {"op": "rename", "schema": schema, "name": name}
        self._append({**record, "new_schema": new_schema, "new_name": new_name})

    def forget_schema(self, schema: str) -> list[dict[str, Any]]:
        """Drop a schema and every relation in it; return the removed relation entries."""
        return self._append({"op": "forget_schema", "schema": schema})

    def entry(self, schema: str, name: str) -> dict[str, Any] | None:
        """The recorded entry of a relation, if any (a dict lookup, no I/O)."""
        with self._lock:
            return self._catalog.relations.get((schema, name))

    def location(self, schema: str, name: str) -> str | None:
        """The recorded location of a table (case-insensitive names), if any."""
        entry = self.entry(schema.lower(), name.lower())
        if entry is None or entry.get("kind") != "table":
            return None
        return str(entry["location"])
