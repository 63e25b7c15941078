"""One maintenance history store per history location per process (each caches its last runs)."""

from __future__ import annotations

import threading

from python_ops.maintenance.history import HistoryStore

_stores: dict[str, HistoryStore] = {}
_stores_lock = threading.Lock()


def history_store(location: str) -> HistoryStore:
    """One store per history location per process (it caches the last runs)."""
    with _stores_lock:
        if location not in _stores:
            _stores[location] = HistoryStore(location)
        return _stores[location]
