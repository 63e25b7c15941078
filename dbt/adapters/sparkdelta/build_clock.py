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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.sparkdelta.locator import TableLocator
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    BuildFacts,
    LogStamp,
    MaintenanceConfig,
    VersionChecksum,
    builds_maintained_table,
    checksum_at,
    head_still,
    head_version,
    holding_look,
    is_remote,
    location_is_empty,
    log_stamp,
    log_unchanged,
    node_value,
    normalize_location,
)

if TYPE_CHECKING:
    from dbt.adapters.sparkdelta.looks_kept import LooksKept


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
        checksum_before: The checksum of ``version_before``, when the command's first start
            read it with every other table's (None: not read).
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
    checksum_before: VersionChecksum | None = None

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
            checksum_before=self.checksum_before if here else None,
        )


def has_post_hook(node: Any) -> bool:
    """Whether the node runs any post-hook (the maintenance post-hook may be among them)."""
    config = node_value(node, "config") or {}
    if type(config) is dict or isinstance(config, Mapping):
        return bool(config.get("post-hook"))
    return bool(getattr(config, "post_hook", None))


@dataclass(frozen=True)
class _Seen:
    """One model's table as a command's first build start saw it (``BuildClock``).

    Attributes:
        location: Where the adapter places the table (as ``BuildClock._location``).
        version: Its latest commit version then (None: none).
        empty: Nothing existed at the location then.
        checksum: The checksum file of ``version`` (None: none, or no version).
        stamp: Its log directory as one ``lstat`` saw it before the version was read (None:
            not trusted to show a change, ``log_stamp``).
    """

    location: str
    version: int | None
    empty: bool
    checksum: VersionChecksum | None = None
    stamp: LogStamp | None = None


def _still(seen: _Seen) -> bool:
    """Whether a table is still as ``seen`` (its latest version, or nothing there).

    A log directory whose stamp holds has the same names (one ``lstat``); else two names are
    asked (``head_still``).
    """
    if seen.version is not None:
        if seen.stamp is not None and log_unchanged(seen.stamp):
            return True
        return head_still(seen.location, seen.version)
    return seen.empty and location_is_empty(seen.location)


def _maintained_with_hook(node: Any) -> bool:
    """A node whose build may start the clock: a maintained Delta table, and a post-hook."""
    config = node_value(node, "config")
    return config is not None and builds_maintained_table(node, config) and has_post_hook(node)


class BuildClock:
    """The build facts of the models being built in this dbt process (thread-safe).

    The first build start of a dbt command reads every selected maintained model's table at
    once (its latest version and that version's checksum, or, one ``lstat`` first, that nothing
    is there: no log to stamp or list), on local
    disks: one after the other, the same
    reads cost about a tenth of what each costs between two models' builds, where the thread
    comes to them cold (``docs/benchmarks.md``, BUILD-AHEAD). Each later start only checks
    that its table is still as seen (its log directory's stamp, one ``lstat``, where
    ``log_stamp`` trusts it; else ``head_still``: two names asked; or still nothing there),
    and reads it again when it is not; so every start records what it would have read
    itself.

    Between commands, the looks the previous command's post-hooks left (``looks_kept``: each
    table's version and state, and its log directory's stamp as that command ended) stand in
    for the first start's reads where the stamp still holds: one ``lstat`` a table.

    Args:
        locator: Where models' tables are (placement and dbt's relation cache only).
        nodes: The nodes the command selected (none: each start reads its own table).
        looks: The looks kept between commands (None: none).
    """

    def __init__(
        self,
        locator: TableLocator,
        nodes: Callable[[], Iterable[Any]] = tuple,
        looks: LooksKept | None = None,
    ) -> None:
        self._locator = locator
        self._nodes = nodes
        self.looks = looks
        self._started: dict[str, StartedBuild] = {}
        self._lock = threading.Lock()
        self._seen_lock = threading.Lock()
        self._seen: tuple[str, dict[str, _Seen]] | None = None  # (invocation, by unique_id)

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

    def _seen_first(self, key: str) -> _Seen | None:
        """What the command's first start saw of ``key``'s table (it looks, if this is it)."""
        invocation = get_invocation_id()
        with self._seen_lock:
            if self._seen is None or self._seen[0] != invocation:
                self._seen = (invocation, self._look_ahead())
            return self._seen[1].pop(key, None)  # a second start of a node looks itself

    def _look_ahead(self) -> dict[str, _Seen]:
        seen: dict[str, _Seen] = {}
        try:
            nodes = list(self._nodes())
        except DbtRuntimeError:
            return seen
        looks = self.looks if nodes else None
        if looks is not None:
            looks.load()
        for node in nodes:
            try:
                if not _maintained_with_hook(node):
                    continue
                location = self._location(node)
                if location is None or is_remote(location):
                    continue  # the metastore's place, or an object store's: each start looks
                key = str(node_value(node, "unique_id"))
                entry = looks.take(normalize_location(location)) if looks is not None else None
                look = holding_look(entry) if entry is not None else None
                if look is not None:  # as the last command left it
                    seen[key] = _Seen(location, look.version, False, look.state, look.stamp)
                    continue
                if location_is_empty(location):  # a first build's: no log to stamp or list
                    seen[key] = _Seen(location, None, True)
                    continue
                stamp = log_stamp(location)  # before the version: a commit after it shows
                version, empty = self._look(location)
                # read here, where reads come cheap: the post-hook derives the table after the
                # build from it (``BuildFacts.checksum_before``) instead of reading it cold
                checksum = checksum_at(location, version) if version is not None else None
            # a node that cannot be looked at here is looked at by its own start, which says
            # what is wrong with it (on its own model): never another model's build's error
            except (
                MaintenanceError,
                DbtRuntimeError,
                OSError,
                AttributeError,
                TypeError,
                ValueError,
            ):
                continue
            seen[key] = _Seen(
                location, version, empty, checksum, stamp if version is not None else None
            )
        return seen

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
        seen = self._seen_first(key)
        location: str | None
        checksum = None
        if seen is not None and _still(seen):
            location, version, empty = seen.location, seen.version, seen.empty
            checksum = seen.checksum
        else:
            location = seen.location if seen is not None else self._location(node)
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
            checksum_before=checksum,
        )
        with self._lock:
            self._started[key] = record

    def take(self, node: Any) -> StartedBuild | None:
        """The facts of ``node``'s build (None: its start was not recorded), forgotten after."""
        key = str(node_value(node, "unique_id") or "")
        with self._lock:
            return self._started.pop(key, None)
