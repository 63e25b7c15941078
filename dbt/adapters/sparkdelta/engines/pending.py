"""The journal's relations a new embedded session has not registered yet, registered on demand.

A new process's Sail session starts with an empty catalog. Registering every table of the
journal up front costs one statement per table (4-5 ms each) before dbt's first query, also for
a run-operation that touches 5 of 1,000 models. Instead a relation is registered right before
the first statement that names it runs: a word of the statement (lower case) equal to its name
(a column of that name registers it too: harmless), or a listing of its schema (``SHOW TABLES``,
``SHOW TABLE EXTENDED ... LIKE '*'``: dbt's cache before a build). A view is registered after
the relations its statement names. A relation that cannot be registered (a table whose Delta log
cannot be read) is left out with a warning naming it and the fix: only the statements that read
it fail.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from dbt.adapters.sparkdelta.common import maintenance_events
from dbt.adapters.sparkdelta.engines.catalog_journal import strip_leading_comments

log = logging.getLogger(__name__)

Key = tuple[str, str]

_WORD = re.compile(r"[a-z0-9_]+")
# a statement that lists relations of a schema (dbt's cache: SHOW TABLE EXTENDED ... LIKE '*')
_LISTING = re.compile(
    r"^show\s+(?:tables|views|table\s+extended)(?:\s+(?:in|from)\s+`?(?P<schema>\w+)`?)?"
    r"(?:\s+like\s+'(?P<pattern>[^']*)')?",
    re.IGNORECASE,
)


def statement_kind(statement: str) -> str:
    """What ``EmbeddedEngine.statements`` counts a statement that is not DDL as.

    ``list_schema`` (a listing of a schema's relations), ``show_table`` (one table's), else
    ``other``.
    """
    listing = _LISTING.match(strip_leading_comments(statement))
    if listing is None:
        return "other"
    return "show_table" if _WORD.fullmatch((listing["pattern"] or "*").lower()) else "list_schema"


class PendingRelations:
    """Journal entries to register in the session when a statement first needs them.

    Args:
        run: Runs one statement on the session (not through the engine's own ``sql``).
        statements: The engine's statement counts (``replay_table``, ``replay_view``).
    """

    def __init__(self, run: Callable[[str], Any], statements: Counter[str]) -> None:
        self._run = run
        self._statements = statements
        self._pending: dict[Key, dict[str, Any]] = {}
        self._by_name: dict[str, list[Key]] = {}
        self._lock = threading.RLock()
        self._in_progress: set[Key] = set()  # being registered (a view's own name in its body)

    def __bool__(self) -> bool:
        return bool(self._pending)

    def add(self, key: Key, entry: dict[str, Any]) -> None:
        """Note a journal entry as not registered yet."""
        with self._lock:
            self._pending[key] = entry
            self._by_name.setdefault(key[1], []).append(key)

    def register_for(self, statement: str) -> None:
        """Register the pending relations a statement names (all of a schema it lists)."""
        with self._lock:
            if statement_kind(statement) == "list_schema":
                listing = _LISTING.match(strip_leading_comments(statement))
                schema = ((listing["schema"] if listing else None) or "").lower()
                keys = [k for k in self._pending if not schema or k[0] == schema]
            else:
                words = set(_WORD.findall(statement.lower())) & self._by_name.keys()
                keys = [key for word in words for key in self._by_name[word]]
            for key in keys:
                self._register(key)

    def _register(self, key: Key) -> None:
        """Register one relation: a table at its location, a view after what it reads.

        It stays pending until its statement has run, so another thread never finds nothing
        pending while the relation is not there yet.
        """
        rel = self._pending.get(key)
        if rel is None or key in self._in_progress:
            return
        self._in_progress.add(key)
        schema, name = key
        try:
            if rel["kind"] == "view":
                self.register_for(rel["statement"])
                self._statements["replay_view"] += 1
                self._run(rel["statement"])
            else:
                self._statements["replay_table"] += 1
                # No column list: Sail then reads the schema from the Delta log on every query.
                self._run(
                    f"create table if not exists `{schema}`.`{name}` "
                    f"using delta location '{rel['location']}'"
                )
        except Exception as err:  # the statement that needs it fails with the engine's reason
            where = f" (at {rel['location']})" if rel["kind"] == "table" else ""
            maintenance_events.notice(
                f"{rel['kind']} {schema}.{name}{where} cannot be registered in this session, so "
                "statements that read it fail; repair or restore its Delta log (or drop it and "
                f"rebuild the model): {err}"
            )
        finally:
            self._in_progress.discard(key)
            self._pending.pop(key, None)
            same_name = self._by_name.get(name, [])
            if key in same_name:
                same_name.remove(key)
            if not same_name:
                self._by_name.pop(name, None)
