"""File statistics written with rewritten files: bounds that hold for every value."""

from __future__ import annotations

import json


def test_written_statistics_bound_every_value() -> None:
    import datetime as dt

    import pyarrow as pa

    from python_ops.delta.table.stats import delta_stats

    ts = [dt.datetime(2024, 1, 1, 0, 0, 0, 1500), dt.datetime(2024, 1, 1, 0, 0, 1, 999)]
    table = pa.table(
        {
            "ts": pa.array(ts, pa.timestamp("us", "UTC")),
            "x": pa.array([1.5, float("nan")]),
            "s": pa.array([{"a": 1}, {"a": None}]),
        }
    )
    stats = json.loads(delta_stats(table, ["ts", "x", "s"]))
    # millisecond precision like Delta writers, minimum down, maximum up: still a bound
    assert stats["minValues"]["ts"] == "2024-01-01T00:00:00.001Z"
    assert stats["maxValues"]["ts"] == "2024-01-01T00:00:01.001Z"
    assert "x" not in stats["minValues"]  # NaN: no min/max rather than a wrong one
    assert stats["nullCount"] == {"ts": 0, "x": 0, "s": {"a": 1}}
    assert stats["minValues"]["s"] == {"a": 1}
