"""The maintenance history from the adapter's side.

One store per history location per process (each caches its last runs), and whether a project
reads the history as a dbt source.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from python_ops.maintenance.history import HistoryStore

_stores: dict[str, HistoryStore] = {}
_stores_lock = threading.Lock()


def history_store(location: str) -> HistoryStore:
    """One store per history location per process (it caches the last runs)."""
    with _stores_lock:
        if location not in _stores:
            _stores[location] = HistoryStore(location)
        return _stores[location]


def history_is_a_source(sources: Iterable[Any], schema: str, name: str) -> bool:
    """True when one of a manifest's sources is the history table (schema and identifier).

    Args:
        sources: The manifest's source definitions.
        schema: The history's schema.
        name: The history's table name.

    Returns:
        Whether a source names that table (case-insensitive, as Spark's catalog).
    """
    return any(
        str(source.schema).lower() == schema.lower()
        and str(source.identifier).lower() == name.lower()
        for source in sources
    )
