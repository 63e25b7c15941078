"""The checksum files Delta 4.4 writes read as the table Delta's log says it is.

``build_decisions`` trusts a version's checksum (``delta.version_checksum``) for the live file
count, the metadata and the protocol. Every table of the corpus Delta 4.4 writes in this test
session (one per feature: partitions, deletion vectors, column mapping, clustering, checkpoints,
...) is held against its snapshot, as this project's log reader reconstructs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from python_ops.delta.protocol import table_features
from python_ops.delta.snapshot import read_snapshot
from python_ops.delta.version_checksum import read_version_checksum
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
