"""A persistent record of the embedded engine's catalog, so tables outlive the dbt process.

Sail keeps its catalog in memory for one Spark session: a new ``dbt`` process would start with no
tables and silently rebuild incremental models from scratch. The journal fixes that. Every DDL
statement that succeeds through the embedded engine is observed here and recorded in
``<warehouse>/_sparkdelta_catalog.json``: schemas, tables (name -> Delta location) and views
(name -> the statement that created them). A new engine replays the journal before dbt runs its
first query: tables are re-registered at their locations *without* a column list (their schema
is always read from the Delta log, so it can never go stale) and views are re-created in the
order they were first created.

Writes are atomic (temp file + rename) and serialised across threads and processes with a file
lock, so two dbt processes sharing a warehouse do not lose each other's entries.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from python_ops.maintenance import JOURNAL_NAME

_FORMAT = 1

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
_LEADING_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*", re.DOTALL)


def strip_leading_comments(sql: str) -> str:
    """Remove leading ``/* */`` and ``--`` comments (dbt prefixes every query with one)."""
    return _LEADING_COMMENTS.sub("", sql, count=1).strip()


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
        return DdlEvent("create_table", schema, name)
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
    """The persisted catalog of one warehouse directory.

    Args:
        warehouse: The warehouse directory (must exist).
    """

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse
        self.path = os.path.join(warehouse, JOURNAL_NAME)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """Hold the thread and file locks, yield the current state, then write it back."""
        with self._lock, open(self.path + ".lock", "a+") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                state = self.load()
                before = json.dumps(state, sort_keys=True)
                yield state
                if json.dumps(state, sort_keys=True) != before:
                    self._write(state)
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)

    def load(self) -> dict[str, Any]:
        """Read the journal; an empty catalog when it does not exist yet."""
        try:
            with open(self.path, encoding="utf-8") as fh:
                state: dict[str, Any] = json.load(fh)
        except FileNotFoundError:
            return {"format": _FORMAT, "schemas": [], "relations": []}
        state.setdefault("schemas", [])
        state.setdefault("relations", [])
        return state

    def _write(self, state: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.warehouse, prefix=".catalog-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=1, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def record_schema(self, schema: str) -> None:
        """Remember that a schema exists."""
        with self._locked() as state:
            if schema not in state["schemas"]:
                state["schemas"].append(schema)

    def record_table(self, schema: str, name: str, location: str) -> None:
        """Remember a table and its Delta location (replacing any entry of that name)."""
        self._record({"kind": "table", "schema": schema, "name": name, "location": location})

    def record_view(self, schema: str, name: str, statement: str) -> None:
        """Remember a view and the statement that created it."""
        self._record({"kind": "view", "schema": schema, "name": name, "statement": statement})

    def _record(self, entry: dict[str, Any]) -> None:
        with self._locked() as state:
            _remove(state, entry["schema"], entry["name"])
            if entry["schema"] not in state["schemas"]:
                state["schemas"].append(entry["schema"])
            state["relations"].append(entry)

    def forget(self, schema: str, name: str) -> dict[str, Any] | None:
        """Drop a relation's entry; return the removed entry, if there was one."""
        with self._locked() as state:
            return _remove(state, schema, name)

    def rename(self, schema: str, name: str, new_schema: str, new_name: str) -> None:
        """Move an entry to a new name (views keep their defining query)."""
        with self._locked() as state:
            entry = _remove(state, schema, name)
            if entry is None:
                return
            entry.update(schema=new_schema, name=new_name)
            if entry["kind"] == "view":
                body = _CREATE_VIEW.sub(
                    f"create or replace view {new_schema}.{new_name}", entry["statement"], count=1
                )
                entry["statement"] = body
            state["relations"].append(entry)

    def forget_schema(self, schema: str) -> list[dict[str, Any]]:
        """Drop a schema and every relation in it; return the removed relation entries."""
        with self._locked() as state:
            removed = [r for r in state["relations"] if r["schema"] == schema]
            state["relations"] = [r for r in state["relations"] if r["schema"] != schema]
            state["schemas"] = [s for s in state["schemas"] if s != schema]
            return removed

    def entry(self, schema: str, name: str) -> dict[str, Any] | None:
        """The recorded entry of a relation, if any."""
        for rel in self.load()["relations"]:
            if rel["schema"] == schema and rel["name"] == name:
                found: dict[str, Any] = rel
                return found
        return None


def _remove(state: dict[str, Any], schema: str, name: str) -> dict[str, Any] | None:
    for i, rel in enumerate(state["relations"]):
        if rel["schema"] == schema and rel["name"] == name:
            removed: dict[str, Any] = state["relations"].pop(i)
            return removed
    return None
