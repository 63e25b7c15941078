"""table_health on a table the embedded engine writes: versions, partitions, tombstones."""

from __future__ import annotations

from pathlib import Path

from deltalake import DeltaTable

from python_ops.ops.health import table_health


def test_table_written_by_the_embedded_engine(tmp_path: Path, fresh_engines) -> None:
    from dbt.adapters.sparkdelta.engines import get_engine

    engine = get_engine(mode="embedded", warehouse=str(tmp_path / "wh"), connect_url=None)
    location = tmp_path / "wh" / "s" / "events"
    engine.sql("create schema if not exists s")
    engine.sql(
        "create table s.events (id bigint, day date) using delta partitioned by (day) "
        f"location '{location}'"
    )
    for i in range(5):
        engine.sql(f"insert into s.events values ({i}, date'2024-01-0{1 + i % 2}')")
    health = table_health(str(location))
    assert health.version == 5
    assert health.num_files == 5
    assert health.num_partitions == 2
    assert health.num_tombstones == 0
    engine.sql("insert overwrite s.events select * from s.events")
    health = table_health(str(location))
    assert health.version == 6
    assert health.num_tombstones == 5
    assert health.num_files == len(DeltaTable(str(location)).file_uris())
