"""The embedded engine's catalog on disk: a compacted snapshot plus an append-only log.

``<warehouse>/_sparkdelta_catalog.json`` holds the catalog as of its last compaction (schemas,
then relations in the order they were first created); ``<warehouse>/_sparkdelta_catalog.log``
holds one JSON record per change since, appended by the adapter's ``CatalogJournal`` (one short
write per ``CREATE``, no rewrite of the whole file). Reading the catalog is the snapshot with the
log's records applied in order. Every record is idempotent (a table or view replaces its entry,
``forget`` of an absent entry does nothing), so a log replayed on a snapshot that already holds it
(a crash between a compaction's rename and the log's truncation) gives the same catalog.

Plain Python: the CLI reads table locations through ``read_catalog`` without dbt.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

JOURNAL_NAME = "_sparkdelta_catalog.json"
LOG_NAME = "_sparkdelta_catalog.log"
FORMAT = 1

_VIEW_HEAD = re.compile(
    r"^create\s+(?:or\s+replace\s+)?view\s+(?:if\s+not\s+exists\s+)?"
    r"(?:`[^`]+`|[A-Za-z0-9_]+)(?:\s*\.\s*(?:`[^`]+`|[A-Za-z0-9_]+)){0,2}",
    re.IGNORECASE,
)

Key = tuple[str, str]


@dataclass
class Catalog:
    """Schemas and relations of one warehouse, in the order they were first created.

    Attributes:
        schemas: Schema names (a dict used as an ordered set).
        relations: ``(schema, name)`` to its entry: ``{kind: table, schema, name, location}``
            or ``{kind: view, schema, name, statement}``.
    """

    schemas: dict[str, None] = field(default_factory=dict)
    relations: dict[Key, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The snapshot's JSON form (``relations`` a list, as the journal always stored it)."""
        return {
            "format": FORMAT,
            "schemas": list(self.schemas),
            "relations": list(self.relations.values()),
        }

    def tables(self) -> dict[Key, str]:
        """``(schema, name)`` (lower case) to location, for every table."""
        return {
            (str(e["schema"]).lower(), str(e["name"]).lower()): str(e["location"])
            for e in self.relations.values()
            if e.get("kind") == "table" and e.get("location")
        }

    def apply(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """Apply one log record; return the relation entries it removed.

        Records: ``{op: put, entry}``, ``{op: schema, schema}``, ``{op: forget, schema, name}``,
        ``{op: rename, schema, name, new_schema, new_name}``, ``{op: forget_schema, schema}``.
        An unknown op is ignored (a newer writer's record), with a warning.
        """
        op = record.get("op")
        if op == "schema":
            self.schemas.setdefault(str(record["schema"]), None)
        elif op == "put":
            entry = dict(record["entry"])
            removed = self.relations.pop((entry["schema"], entry["name"]), None)
            self.schemas.setdefault(entry["schema"], None)
            self.relations[(entry["schema"], entry["name"])] = entry
            return [removed] if removed is not None and removed != entry else []
        elif op == "forget":
            removed = self.relations.pop((record["schema"], record["name"]), None)
            return [removed] if removed is not None else []
        elif op == "rename":
            return self._rename(record)
        elif op == "forget_schema":
            schema = record["schema"]
            gone = [key for key in self.relations if key[0] == schema]
            self.schemas.pop(schema, None)
            return [self.relations.pop(key) for key in gone]
        else:
            log.warning("catalog journal: unknown record %r ignored", op)
        return []

    def _rename(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        entry = self.relations.pop((record["schema"], record["name"]), None)
        if entry is None:
            return []
        new_schema, new_name = record["new_schema"], record["new_name"]
        entry = {**entry, "schema": new_schema, "name": new_name}
        if entry["kind"] == "view":
            entry["statement"] = _VIEW_HEAD.sub(
                f"create or replace view {new_schema}.{new_name}", entry["statement"], count=1
            )
        self.relations[(new_schema, new_name)] = entry
        return []


def load_snapshot(warehouse: str) -> Catalog:
    """The catalog as of the last compaction (empty when there is no snapshot yet).

    Raises:
        OSError: When the snapshot exists but cannot be read.
        ValueError: When it is not JSON.
    """
    catalog = Catalog()
    try:
        with open(os.path.join(warehouse, JOURNAL_NAME), encoding="utf-8") as handle:
            state: dict[str, Any] = json.load(handle)
    except FileNotFoundError:
        return catalog
    for schema in state.get("schemas", []):
        catalog.schemas.setdefault(str(schema), None)
    for entry in state.get("relations", []):
        catalog.relations[(entry["schema"], entry["name"])] = entry
    return catalog


def read_log(warehouse: str) -> list[dict[str, Any]]:
    """The log's records in order; a line that is not whole JSON (a torn append) is skipped.

    Raises:
        OSError: When the log exists but cannot be read.
    """
    try:
        with open(os.path.join(warehouse, LOG_NAME), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            log.warning("catalog journal: line %d of %s is not whole; skipped", number, LOG_NAME)
    return records


def read_catalog(warehouse: str) -> tuple[Catalog, int]:
    """The warehouse's catalog: the snapshot with the log applied; and the log's record count.

    Raises:
        OSError: When the snapshot or the log exists but cannot be read.
        ValueError: When the snapshot is not JSON.
    """
    catalog = load_snapshot(warehouse)
    records = read_log(warehouse)
    for record in records:
        catalog.apply(record)
    return catalog, len(records)
