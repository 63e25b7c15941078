"""``_delta_log/_last_vacuum_info``: where VACUUM LITE continues, kept as Delta 4.4 keeps it.

Delta writes one JSON line, ``{"latestCommitVersionOutsideOfRetentionWindow": N}``, after every
real (not dry) VACUUM, and reads it with unknown fields ignored (Jackson,
``FAIL_ON_UNKNOWN_PROPERTIES`` off); a file it cannot parse counts as absent. Delta 4.4's FULL
runs write it without a version (``{}``, delta issue #4162): read here as "no version", so LITE
starts at the earliest commit, or refuses when the log was cleaned.

This package writes the same field with the same meaning (every file removed by the commits up
to ``N`` that VACUUM may delete is gone), plus its own object under ``pythonOps``: when the last
complete FULL run started (``fullVacuumStartedMs``), which ``auto`` mode uses to run FULL every
so many days, and which mode wrote the file. Delta ignores that object and drops it when it
rewrites the file; a missing FULL time makes ``auto`` run FULL (the safe side).

The file is written only after a real run deleted everything it selected, and atomically
(``Storage.replace_file``: a local file is written beside it and renamed over it; an object
store's PUT replaces an object whole), so a run killed at any point leaves the previous, still
true, claim. On a local disk Hadoop's checksum of the file (``._last_vacuum_info.crc``, written
by Delta) is removed first: Hadoop refuses a file that no longer matches its checksum, and Delta
would read it as absent.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log.log_files import LOG_DIR
from python_ops.errors import StorageError
from python_ops.storage import Storage

log = logging.getLogger(__name__)

LAST_VACUUM_INFO = f"{LOG_DIR}/_last_vacuum_info"
VERSION_FIELD = "latestCommitVersionOutsideOfRetentionWindow"
OWN_FIELD = "pythonOps"


@dataclass(frozen=True)
class LastVacuumInfo:
    """What ``_delta_log/_last_vacuum_info`` says.

    Attributes:
        version: ``latestCommitVersionOutsideOfRetentionWindow``: LITE continues after it (None:
            not recorded, e.g. after a Delta 4.4 FULL run).
        full_vacuum_started_ms: When the last complete FULL run of this package started (None:
            not recorded, e.g. the file was last written by Delta).
        mode: The mode of the run that wrote it, when this package wrote it.
        cutoff_ms: That run's cutoff, when this package wrote it: every file the commits up to
            ``version`` removed before it was deleted (a LITE run right after does not list
            them again).
    """

    version: int | None
    full_vacuum_started_ms: int | None = None
    mode: str | None = None
    cutoff_ms: int | None = None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_last_vacuum_info(storage: Storage) -> LastVacuumInfo | None:
    """Read ``_delta_log/_last_vacuum_info`` as Delta reads it (its first line).

    Args:
        storage: The table's storage.

    Returns:
        The info; None when the file is missing or not a JSON object (Delta treats a corrupt
        file as absent).
    """
    try:
        data = storage.read_bytes(LAST_VACUUM_INFO)
    except FileNotFoundError:
        return None
    lines = data.splitlines()
    try:
        parsed = json.loads(lines[0]) if lines else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        parsed = None
    if not isinstance(parsed, dict):
        log.warning("%s/%s is not a JSON object; read as absent", storage.root, LAST_VACUUM_INFO)
        return None
    own = parsed.get(OWN_FIELD)
    own = own if isinstance(own, dict) else {}
    mode = own.get("mode")
    return LastVacuumInfo(
        version=_whole(parsed.get(VERSION_FIELD)),
        full_vacuum_started_ms=_whole(own.get("fullVacuumStartedMs")),
        mode=mode if isinstance(mode, str) else None,
        cutoff_ms=_whole(own.get("cutoffMs")),
    )


def last_vacuum_info_json(info: LastVacuumInfo) -> str:
    """The file's one line: Delta's field (when there is a version), then this package's."""
    payload: dict[str, Any] = {}
    if info.version is not None:
        payload[VERSION_FIELD] = info.version
    own: dict[str, Any] = {}
    if info.full_vacuum_started_ms is not None:
        own["fullVacuumStartedMs"] = info.full_vacuum_started_ms
    if info.mode is not None:
        own["mode"] = info.mode
    if info.cutoff_ms is not None:
        own["cutoffMs"] = info.cutoff_ms
    if own:
        payload[OWN_FIELD] = own
    return json.dumps(payload, separators=(",", ":"))


def write_last_vacuum_info(storage: Storage, info: LastVacuumInfo) -> bool:
    """Replace ``_delta_log/_last_vacuum_info`` atomically.

    As Delta, a failed write is logged, not raised: the previous file (or none) stays, which
    claims no more than was deleted, and the next run repeats some work.

    Args:
        storage: The table's storage.
        info: What to record.

    Returns:
        True when written.
    """
    data = (last_vacuum_info_json(info) + "\n").encode()
    try:
        storage.replace_file(LAST_VACUUM_INFO, data)
    except StorageError as err:  # the claim stays the old one
        log.warning("could not write %s/%s: %s", storage.root, LAST_VACUUM_INFO, err)
        return False
    return True
