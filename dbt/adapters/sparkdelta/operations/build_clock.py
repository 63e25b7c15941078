"""When each model's build started, and its table's version then: the post-hook's build facts.

The materializations call ``adapter.validate_maintenance_config(model, ...)`` first thing. When
the post-hook may maintain the model (the var ``maintenance_post_hook`` on, a post-hook, an op
enabled), the adapter records the wall clock and the table's latest commit version
(``python_ops.maintenance.facts.build_start.head_version``: the names of its log's files, listed at
the location the adapter places the table) and, when it has none, whether anything exists
there at all (``location_is_empty``: one ``lstat``). Never a catalog query: where the
cluster's metastore places the table, the version is not known and the build's commits are
those timestamped from its start. The post-hook takes the facts back as plain values
(``BuildFacts``), so python_ops reads the build's own commits without knowing dbt; the version
holds only where the start looked (the catalog may keep the table elsewhere: then its commits'
times decide). What the recording cost counts as the post-hook's own time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.sparkdelta.bridge.locator import TableLocator
from python_ops.maintenance import (
    BuildFacts,
    MaintenanceConfig,
    head_version,
    location_is_empty,
    node_value,
    normalize_location,
)


@dataclass(frozen=True)
class StartedBuild:
    """A model's build as its start recorded it, taken back by its post-hook.

    Attributes:
        unique_id: The model's node.
        config: The model's maintenance config, as the materialization's check parsed it.
        location: Where the start looked for the table (None: the cluster's metastore
            places it, so nothing was looked at).
        started_at_ms: When the build started (wall clock, ms since the epoch).
        clock: The same moment on ``time.perf_counter``.
        version_before: The table's latest version then (None: none, or not known).
        location_was_empty: Nothing existed at the table's location then.
        own_wall_s: What recording the start took (wall seconds): maintenance's cost, added to
            the post-hook's own time.
        own_cpu_s: The same in the thread's CPU seconds.
    """

    unique_id: str
    config: MaintenanceConfig
    location: str | None
    started_at_ms: int
    clock: float
    version_before: int | None
    location_was_empty: bool
    own_wall_s: float
    own_cpu_s: float

    def looked_at(self, location: str) -> bool:
        """Whether the start looked where the table is (its version and emptiness hold there)."""
        return self.location is not None and self.location == normalize_location(location)

    def facts(self, location: str) -> BuildFacts:
        """What python_ops reads the build's commits of the table at ``location`` from.

        The version and the emptiness the start saw hold only where it looked: a table the
        catalog places elsewhere (an incremental model whose ``location_root`` changed keeps
        its table where it was) has its build's commits found by their timestamps instead.

        Args:
            location: Where the table is (the catalog's location).
        """
        here = self.looked_at(location)
        return BuildFacts(
            started_at_ms=self.started_at_ms,
            version_before=self.version_before if here else None,
            build_s=time.perf_counter() - self.clock,
            location_was_empty=self.location_was_empty and here,
        )


def has_post_hook(node: Any) -> bool:
    """Whether the node runs any post-hook (the maintenance post-hook may be among them)."""
    config = node_value(node, "config") or {}
    if type(config) is dict or isinstance(config, Mapping):
        return bool(config.get("post-hook"))
    return bool(getattr(config, "post_hook", None))


class BuildClock:
    """The build facts of the models being built in this dbt process (thread-safe).

    Each build start reads its own table: its latest version by the names of its log
    (``head_version``), and, when it has none, whether anything is there (one ``lstat``).

    Args:
        locator: Where models' tables are (placement and dbt's relation cache only).
    """

    def __init__(self, locator: TableLocator) -> None:
        self._locator = locator
        self._started: dict[str, StartedBuild] = {}
        self._lock = threading.Lock()

    def _location(self, node: Any) -> str | None:
        schema = str(node_value(node, "schema"))
        alias = str(node_value(node, "alias") or node_value(node, "name"))
        config = node_value(node, "config")  # a dict, or dbt's config (whose get reads it too)
        root = config.get("location_root") if config is not None else None
        # None when the cluster's metastore places it: the build's commits are then those
        # timestamped from its start (``build_writes``); no catalog query here
        return self._locator.model_location(schema, alias, root)

    def _look(self, location: str) -> tuple[int | None, bool]:
        """The table's latest version at ``location``, and whether nothing is there at all."""
        version = head_version(location)
        # nothing there yet (a first build): VACUUM's due check needs no listing of it
        return version, version is None and location_is_empty(location)

    def start(self, node: Any, config: MaintenanceConfig) -> None:
        """Record that ``node``'s build starts now, with its table's latest version.

        Only for a node with a post-hook (the one that takes it back); its own time is kept.

        Args:
            node: The model node.
            config: Its maintenance config (parsed by the check before the build).
        """
        key = str(node_value(node, "unique_id") or "")
        if not key or not has_post_hook(node):
            return
        started_ms, started = time.time_ns() // 1_000_000, time.perf_counter()
        cpu = time.thread_time()
        location = self._location(node)
        version, empty = self._look(location) if location is not None else (None, False)
        record = StartedBuild(
            key,
            config,
            location if location is None else normalize_location(location),
            started_ms,
            started,
            version,
            empty,
            own_wall_s=time.perf_counter() - started,
            own_cpu_s=time.thread_time() - cpu,
        )
        with self._lock:
            self._started[key] = record

    def take(self, node: Any) -> StartedBuild | None:
        """The facts of ``node``'s build (None: its start was not recorded), forgotten after."""
        key = str(node_value(node, "unique_id") or "")
        with self._lock:
            return self._started.pop(key, None)
