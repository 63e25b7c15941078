"""A table's look kept from one dbt command to the next: its version, its state, its log's stamp.

Every build of a maintained model starts from its table's latest version and that version's
checksum (``build_start``), which a command's first build start reads for every table at once:
a listing of each log and a read of each checksum file, about 180 us a table warm, 250 ms of a
1,000-model build. Most of it is known already: the previous command's post-hook ended each
table's build knowing the version it left and the table's state there (``BuildWrites``: the
build's commits replayed or derived from the checksum before them, ``derived_checksum``). So a
command's end keeps, per table, that version and state with its log directory's stamp
(``log_change``), and the next command's first start takes them where the stamp still holds:
one ``lstat`` a table instead of a listing and a read.

What makes a kept look true (``keep_look``, as the command ends):

- the stamp is taken first, and trusted only as ``log_stamp`` trusts one (a local filesystem,
  the directory unchanged for ``RACY_NS`` before the look): a change after it shows as another
  stamp, in this command or any later one;
- then the names prove the version is still the newest (the next commit's name is not there:
  Delta writes N+1 only after N), so a writer that committed after the post-hook is seen and
  nothing is kept;
- and the version's commit is the file the post-hook read (``CommitFile``: the same inode,
  size and times), so a table removed and written again to the same version is seen too.

Kept looks are only ever a shortcut: one that does not hold (any change of the log directory,
a file that does not parse, another schema of it) is ignored, and the table is read as before.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from python_ops.delta.log_files import LOG_DIR
from python_ops.delta.snapshot import TableMetadata
from python_ops.delta.version_checksum import VersionChecksum
from python_ops.maintenance.facts.log_change import LogStamp, Mounts, log_stamp, log_unchanged
from python_ops.storage import is_remote, normalize_location

FORMAT = 1
# kept per file at most (the newest): a project's tables, with room; one entry is about 500 bytes
MAX_LOOKS = 20_000


@dataclass(frozen=True)
class CommitFile:
    """A commit file as one ``lstat`` saw it: which file, not what it says.

    Attributes:
        device: Its filesystem's device.
        inode: Its inode.
        size: Its bytes.
        mtime_ns: Its modification time.
        ctime_ns: Its status-change time.
    """

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


@dataclass(frozen=True)
class KeptLook:
    """A table's latest version and its state there, while its log directory is as stamped.

    Attributes:
        location: The table (normalized).
        version: Its latest version when the stamp was taken.
        state: The table at ``version`` (what its checksum file says, or would).
        stamp: Its log directory then: the look holds while ``entry_holds`` says so.
    """

    location: str
    version: int
    state: VersionChecksum
    stamp: LogStamp


def commit_file(location: str, version: int) -> CommitFile | None:
    """The commit file of ``version`` as it is now (None: remote, missing, or not a file)."""
    if is_remote(location):
        return None
    try:
        st = os.lstat(f"{normalize_location(location)}/{LOG_DIR}/{version:020d}.json")
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return CommitFile(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def keep_look(
    location: str,
    *,
    version: int,
    state: VersionChecksum,
    read: CommitFile | None,
    now_ns: int | None = None,
    mounts: Mounts | None = None,
) -> KeptLook | None:
    """The look to keep for a table a post-hook left at ``version`` in ``state``, if it holds.

    Args:
        location: The table (a local path or ``file:`` URI).
        version: The newest version the post-hook read.
        state: The table at ``version``.
        read: The commit file of ``version`` as the post-hook saw it, after reading it.
        now_ns: The look's time (``time.time_ns()`` when not given).
        mounts: The filesystem types by device (``log_change``'s when not given).

    Returns:
        The kept look; None when the stamp is not trusted (a change within ``RACY_NS``, not a
        local filesystem), a later commit exists, the commit file is not the one read, or the
        state is of another version.
    """
    if read is None or state.version != version:
        return None
    now = time.time_ns() if now_ns is None else now_ns
    options = {} if mounts is None else {"mounts": mounts}
    stamp = log_stamp(location, now_ns=now, **options)  # before the names: a change after shows
    if stamp is None:
        return None
    # the next commit not there (so none later: Delta writes N+1 only after N), and the
    # version's own the file the post-hook read (so the table was not written again to it)
    if os.path.lexists(f"{stamp.path}/{version + 1:020d}.json"):
        return None
    if commit_file(location, version) != read:
        return None
    return KeptLook(normalize_location(location), version, state, stamp)


LookEntry = Mapping[str, Any]  # one look as the file has it (``load_looks``), parsed when used


def load_looks(path: str) -> dict[str, LookEntry]:
    """The looks a file keeps, by location, as it has them (empty: no file, or not the format).

    Only parsed into looks when asked for (``holding_look``): a command builds few or all of
    its tables, and a look whose log has changed is never parsed.

    Args:
        path: The file (``save_looks``'s).
    """
    try:
        with open(path, "rb") as fh:
            raw = json.loads(fh.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        return {}
    entries = raw.get("looks")
    if not isinstance(entries, list):
        return {}
    return {
        e["location"]: e for e in entries if isinstance(e, dict) and type(e.get("location")) is str
    }


def entry_holds(entry: LookEntry, *, now_ns: int | None = None) -> bool:
    """Whether an entry's log directory is still as stamped (one ``lstat``; nothing parsed).

    What the command's end asks of the looks it writes back unused: one whose table changed,
    or is gone (a warehouse wiped), would never hold again, and each command reads the file.

    Args:
        entry: One of ``load_looks``' entries.
        now_ns: The check's time (``time.time_ns()`` when not given).
    """
    stamp = _stamp(entry)
    return stamp is not None and log_unchanged(stamp, now_ns=now_ns)


def holding_look(entry: LookEntry, *, now_ns: int | None = None) -> KeptLook | None:
    """The look an entry keeps, if its log directory is still as stamped (one ``lstat``).

    Args:
        entry: One of ``load_looks``' entries.
        now_ns: The check's time (``time.time_ns()`` when not given).

    Returns:
        The look; None when the stamp no longer holds or the entry is not of the file's shape.
    """
    if not entry_holds(entry, now_ns=now_ns):
        return None
    return read_look(entry)


def read_look(entry: LookEntry) -> KeptLook | None:
    """An entry as a look, whether or not it still holds (None: not of the file's shape)."""
    stamp = _stamp(entry)
    version = _count(entry.get("version"))
    files, size = _count(entry.get("num_files")), _count(entry.get("table_size_bytes"))
    metadata, protocol = entry.get("metadata"), entry.get("protocol")
    if stamp is None or version is None or files is None or size is None:
        return None
    if not isinstance(protocol, dict) or not isinstance(metadata, Mapping):
        return None
    table_metadata = _metadata(metadata)
    if table_metadata is None:
        return None
    state = VersionChecksum(version, files, size, table_metadata, protocol)
    return KeptLook(entry["location"], version, state, stamp)


def save_looks(path: str, looks: Iterable[KeptLook], others: Iterable[LookEntry] = ()) -> None:
    """Write the looks to ``path`` whole, in place at once (a reader sees the old or the new).

    ``looks`` first, then ``others`` (entries as read, of tables whose looks are not new),
    ``MAX_LOOKS`` at most. Errors are not raised: a look is only a shortcut.

    Args:
        path: The file.
        looks: The new looks (a location given twice: the last).
        others: Entries read earlier, written as they are but where a new look replaces them.
    """
    entries = {look.location: _entry(look) for look in looks}
    for entry in others:
        if len(entries) >= MAX_LOOKS:
            break
        entries.setdefault(entry["location"], dict(entry))
    text = json.dumps({"format": FORMAT, "looks": list(entries.values())[:MAX_LOOKS]})
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".kept-looks-", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise
    except OSError:
        return


def _entry(look: KeptLook) -> dict[str, Any]:
    state, stamp = look.state, look.stamp
    metadata = state.metadata
    return {
        "location": look.location,
        "version": look.version,
        "stamp": [stamp.device, stamp.inode, stamp.mtime_ns, stamp.ctime_ns, stamp.looked_ns],
        "num_files": state.num_files,
        "table_size_bytes": state.table_size_bytes,
        "metadata": {
            "table_id": metadata.table_id,
            "schema_string": metadata.schema_string,
            "partition_columns": list(metadata.partition_columns),
            "configuration": metadata.configuration,
            "schema_missing": metadata.schema_missing,
        },
        "protocol": state.protocol,
    }


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _strings(value: Any) -> bool:
    return all(type(v) is str for v in value)


def _stamp(entry: LookEntry) -> LogStamp | None:
    """The entry's stamp (None: not five counts, or no location)."""
    location, stamp = entry.get("location"), entry.get("stamp")
    if type(location) is not str or not isinstance(stamp, list) or len(stamp) != 5:
        return None
    if any(_count(v) is None for v in stamp):
        return None
    device, inode, mtime_ns, ctime_ns, looked_ns = stamp
    return LogStamp(device, inode, mtime_ns, ctime_ns, looked_ns, f"{location}/{LOG_DIR}")


def _metadata(raw: Mapping[str, Any]) -> TableMetadata | None:
    table_id, schema = raw.get("table_id"), raw.get("schema_string")
    columns, configuration = raw.get("partition_columns"), raw.get("configuration")
    missing = raw.get("schema_missing")
    if type(table_id) is not str or type(schema) is not str or type(missing) is not bool:
        return None
    if not isinstance(columns, list) or not _strings(columns):
        return None
    if not isinstance(configuration, dict) or not _strings(configuration.values()):
        return None
    return TableMetadata(table_id, schema, tuple(columns), dict(configuration), missing)
