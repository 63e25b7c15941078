"""Delta's own reads of a table in tests: its SQL name by path, and its rows' count and checksum."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def table_sql(location: Path | str) -> str:
    """How Delta's SQL names the table at ``location`` (``delta.`<path>```)."""
    return "delta.`" + str(location).replace("`", "``") + "`"


def oracle(spark: Any, location: Path | str) -> tuple[int, int]:
    """Delta's own read of the table: row count and an order-independent checksum."""
    row = spark.sql(
        f"SELECT count(*) AS n, coalesce(sum(hash(*)), 0) AS h FROM {table_sql(location)}"
    ).first()
    return int(row["n"]), int(row["h"])
