"""The checksum files Delta 4.4 writes read as the table Delta's log says it is.

``build_decisions`` trusts a version's checksum (``delta.state.version_checksum``) for the live file
count, the metadata and the protocol. Every table of the corpus Delta 4.4 writes in this test
session (one per feature: partitions, deletion vectors, column mapping, clustering, checkpoints,
...) is held against its snapshot, as this project's log reader reconstructs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from python_ops.delta.log.commits import commit_actions, commit_versions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta.state.version_checksum import read_version_checksum, replayed_checksum
from python_ops.delta.table.protocol import table_features
from python_ops.storage import open_storage

pytestmark = pytest.mark.slow


def test_every_checksum_delta_wrote_agrees_with_the_snapshot(
    delta_corpus: dict[str, Path],
) -> None:
    checked = []
    for name, table in sorted(delta_corpus.items()):
        snapshot = read_snapshot(str(table))
        checksum = read_version_checksum(open_storage(str(table)), snapshot.version)
        if checksum is None:
            continue
        assert checksum.num_files == len(snapshot.files), name
        assert checksum.table_size_bytes == sum(f.size_bytes for f in snapshot.files), name
        assert checksum.metadata == snapshot.metadata, name
        # the same protocol (a checkpoint spells an absent feature list as null)
        ours, delta = (
            table_features(p, location=str(table)) for p in (snapshot.protocol, checksum.protocol)
        )
        assert ours == delta, name
        checked.append(name)
    print(f"checksums checked: {len(checked)} of {len(delta_corpus)} tables: {checked}")
    assert len(checked) >= len(delta_corpus) // 2, "Delta 4.4 wrote too few checksum files"


def test_every_whole_log_delta_wrote_replays_to_its_checksum_and_snapshot(
    delta_corpus: dict[str, Path],
) -> None:
    """A created table's state is replayed from its commits (``replayed_checksum``): held
    against Delta's own checksum file of that version and against the snapshot."""
    replayed, against_checksum = [], []
    for name, table in sorted(delta_corpus.items()):
        storage = open_storage(str(table))
        versions = commit_versions(storage)
        if not versions or versions != list(range(versions[-1] + 1)):
            continue  # the log was cleaned: not a whole log
        window = [(v, commit_actions(storage, v)) for v in versions]
        state = replayed_checksum(storage.root, window)
        assert state is not None, name
        snapshot = read_snapshot(str(table), version=versions[-1])
        assert state.num_files == len(snapshot.files), name
        assert state.table_size_bytes == sum(f.size_bytes for f in snapshot.files), name
        assert state.metadata == snapshot.metadata, name
        checksum = read_version_checksum(storage, versions[-1])
        if checksum is not None:
            assert (state.num_files, state.table_size_bytes) == (
                checksum.num_files,
                checksum.table_size_bytes,
            ), name
            assert state.metadata == checksum.metadata, name
            ours, delta = (
                table_features(p, location=str(table)) for p in (state.protocol, checksum.protocol)
            )
            assert ours == delta, name
            against_checksum.append(name)
        replayed.append(name)
    print(f"replayed: {replayed}; held against Delta's checksum: {against_checksum}")
    assert len(against_checksum) >= len(delta_corpus) // 2
