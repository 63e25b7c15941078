"""When each model's build started, and its table's version then: the post-hook's build facts.

The materializations call ``adapter.validate_maintenance_config(model)`` first thing; the
adapter then records, per node, the wall clock and the table's latest commit version
(``python_ops.maintenance.build_writes.head_version``: one listing of its log, at the location
the adapter places the table), and, when it has none, whether anything exists there at all
(``location_is_empty``: one ``lstat``). Never a catalog query: where the cluster's metastore
places the table, the version is not known and the build's commits are those timestamped from
its start.
The post-hook takes the facts back as plain values (``BuildFacts``), so python_ops reads the
build's own commits without knowing dbt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from dbt.adapters.sparkdelta.locator import TableLocator
from python_ops.maintenance import BuildFacts, head_version, location_is_empty


def _get(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, Mapping) else getattr(node, key, None)


def _config(node: Any) -> Mapping[str, Any]:
    config = _get(node, "config") or {}
    if isinstance(config, Mapping):
        return config
    return dict(config.to_dict()) if hasattr(config, "to_dict") else {}


class BuildClock:
    """The build facts of the models being built in this dbt process (thread-safe).

    Args:
        locator: Where models' tables are (placement and dbt's relation cache only).
    """

    def __init__(self, locator: TableLocator) -> None:
        self._locator = locator
        self._started: dict[str, tuple[int, float, int | None, bool]] = {}
        self._lock = threading.Lock()

    def _location(self, node: Any) -> str | None:
        schema = str(_get(node, "schema"))
        alias = str(_get(node, "alias") or _get(node, "name"))
        # None when the cluster's metastore places it: the build's commits are then those
        # timestamped from its start (``build_writes``); no catalog query here
        return self._locator.model_location(schema, alias, _config(node).get("location_root"))

    def start(self, node: Any) -> None:
        """Record that ``node``'s build starts now, with its table's latest version."""
        key = str(_get(node, "unique_id") or "")
        if not key:
            return
        started_ms, started = time.time_ns() // 1_000_000, time.perf_counter()
        location = self._location(node)
        version = head_version(location) if location is not None else None
        # nothing there yet (a first build): VACUUM's due check needs no listing of it
        empty = version is None and location is not None and location_is_empty(location)
        with self._lock:
            self._started[key] = (started_ms, started, version, empty)

    def take(self, node: Any) -> BuildFacts | None:
        """The facts of ``node``'s build (None: its start was not recorded), forgotten after."""
        key = str(_get(node, "unique_id") or "")
        with self._lock:
            started = self._started.pop(key, None)
        if started is None:
            return None
        started_ms, clock, version, empty = started
        return BuildFacts(
            started_at_ms=started_ms,
            version_before=version,
            build_s=time.perf_counter() - clock,
            location_was_empty=empty,
        )
