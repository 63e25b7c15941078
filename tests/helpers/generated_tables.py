"""Delta tables generated on disk for the path proofs: odd names, spellings, links, ages.

See ``tests/integration/test_path_properties.py``: a ``TableSpec`` is what hypothesis draws,
``build`` writes it as a real Delta table (hand-written log, small Parquet files) beside an
outside folder holding a twin of every file (what a followed link would reach).
"""

from __future__ import annotations

import json
import os
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

NOW_MS = 1_800_000_000_000
HOUR_MS = 3_600_000
RETENTION_H = 24
OLD_MS = NOW_MS - 48 * HOUR_MS  # before the cutoff
YOUNG_MS = NOW_MS - 1 * HOUR_MS  # after it
CAFE_NFC = unicodedata.normalize("NFC", "café")
CAFE_NFD = unicodedata.normalize("NFD", "café")
VALUES = ["a", "A", "b c", "dot.", "trail ", "50%", CAFE_NFC, CAFE_NFD, "x+y", "q=1"]
STATES = ("live", "fresh", "expired", "untracked")


@dataclass(frozen=True)
class FileSpec:
    value: str
    name: str
    state: str  # live, fresh (tombstone inside retention), expired (tombstone), untracked
    old: bool  # file mtime before the cutoff
    spelling: int  # how the log spells its path (0: as Delta; 1: '//'; 2: './'; 3: 'x/../')

    @property
    def rel(self) -> str:
        return f"p={self.value}/{self.name}"


@dataclass(frozen=True)
class TableSpec:
    files: tuple[FileSpec, ...]
    linked_values: frozenset[str]  # partition dirs replaced by a link to an outside folder
    linked_files: frozenset[str]  # relative files replaced by a link to an outside file


def _log_spelling(rel: str, how: int) -> str:
    # the URI form (RFC 2396, as the protocol asks): '%', ' ' and non-ASCII bytes escaped
    encoded = quote(rel, safe="/=+.")
    head, _, name = encoded.rpartition("/")
    return [encoded, f"{head}//{name}", f"./{encoded}", f"{head}/zz/../{name}"][how]


@st.composite
def tables(draw: st.DrawFn) -> TableSpec:
    files = draw(
        st.lists(
            st.builds(
                FileSpec,
                value=st.sampled_from(VALUES),
                name=st.sampled_from(
                    ["part-0.parquet", "part-1.parquet", "f .parquet", "g..parquet", "h%2.parquet"]
                ),
                state=st.sampled_from(STATES),
                old=st.booleans(),
                spelling=st.integers(0, 3),
            ),
            min_size=1,
            max_size=12,
            unique_by=lambda f: f.rel,
        )
    )
    values = sorted({f.value for f in files})
    linked_values = draw(st.sets(st.sampled_from(values), max_size=2))
    plain = [f.rel for f in files if f.value not in linked_values]
    linked_files = draw(st.sets(st.sampled_from(plain), max_size=2)) if plain else set()
    return TableSpec(tuple(files), frozenset(linked_values), frozenset(linked_files))


def _commit(log: Path, version: int, actions: list[dict[str, object]], ts: int) -> None:
    info = {"commitInfo": {"timestamp": ts, "operation": "WRITE"}}
    lines = [json.dumps(a) for a in [info, *actions]]
    path = log / f"{version:020d}.json"
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, ns=(ts * 1_000_000, ts * 1_000_000))


def _parquet(path: Path, value: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": [value]}), path)


def build(root: Path, spec: TableSpec, *, now_ms: int = NOW_MS) -> tuple[Path, Path]:
    """Write the table and the outside folder; (table, outside).

    Times are relative to ``now_ms``: old files and expired tombstones 48 h before it, young
    ones 1 h before it; the table's ``delta.deletedFileRetentionDuration`` is 24 hours, so
    Delta's own VACUUM (which takes no other retention but 0) has the same cutoff.
    """
    old_ms, young_ms = now_ms - 48 * HOUR_MS, now_ms - HOUR_MS
    table, outside = root / "table", root / "outside"
    log = table / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "p", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
    meta = {
        "id": "t",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(schema),
        "partitionColumns": ["p"],
        "configuration": {"delta.deletedFileRetentionDuration": f"interval {RETENTION_H} hours"},
        "createdTime": old_ms,
    }
    for i, f in enumerate(spec.files):
        _parquet(table / f.rel, i)
    sizes = {f.rel: (table / f.rel).stat().st_size for f in spec.files}
    tracked = [f for f in spec.files if f.state != "untracked"]
    adds = [
        {
            "add": {
                "path": _log_spelling(f.rel, f.spelling),
                "partitionValues": {"p": f.value},
                "size": sizes[f.rel],
                "modificationTime": old_ms,
                "dataChange": True,
            }
        }
        for f in tracked
    ]
    _commit(
        log,
        0,
        [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}, {"metaData": meta}, *adds],
        old_ms - 10 * HOUR_MS,
    )
    removes = [
        {
            "remove": {
                "path": _log_spelling(f.rel, (f.spelling + 1) % 4),
                "deletionTimestamp": old_ms if f.state == "expired" else young_ms,
                "dataChange": True,
                "size": sizes[f.rel],
            }
        }
        for f in tracked
        if f.state in ("fresh", "expired")
    ]
    _commit(log, 1, removes, old_ms - 9 * HOUR_MS)
    # an outside folder with a twin of every file: what a followed link would delete
    for i, f in enumerate(spec.files):
        _parquet(outside / f.rel, 1000 + i)
    for value in spec.linked_values:
        real = table / f"p={value}"
        shutil.rmtree(real)
        real.symlink_to(outside / f"p={value}", target_is_directory=True)
    for rel in spec.linked_files:
        (table / rel).unlink()
        (table / rel).symlink_to(outside / rel)
    for f in spec.files:
        ms = old_ms if f.old else young_ms
        os.utime(table / f.rel, ns=(ms * 1_000_000,) * 2, follow_symlinks=False)
    return table, outside


def snapshot_tree(root: Path) -> dict[str, bytes | str]:
    """Every file (content) and link (target) under ``root``, by relative path."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
    return out
