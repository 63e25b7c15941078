"""What maintenance records as a table property, every engine reads (trust round four, item 4).

``maintenance_log_retention_days: 1.5`` was recorded as ``interval 1.5 days``: Delta 4.4 takes it,
but Sail (delta-kernel's parser: ``interval <integer> <unit>``) refused every later write of the
table. A retention is now written exactly in a smaller unit, or refused at validation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from python_ops.delta.table.properties import parse_interval
from python_ops.delta.table.recorded_retentions import interval_literal, policy_properties
from python_ops.delta.writing.writer import set_table_properties
from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import parse_config
from tests.helpers.delta_reads import oracle, table_sql


@pytest.mark.parametrize(
    ("value", "unit", "literal"),
    [
        (1.5, "days", "interval 36 hours"),
        (30, "days", "interval 30 days"),
        (0.01, "hours", "interval 36 seconds"),
        (1.5, "hours", "interval 90 minutes"),
        (168, "hours", "interval 168 hours"),
        (0.000001, "hours", "interval 3600 microseconds"),
    ],
)
def test_a_retention_is_written_as_a_whole_number_of_a_unit(
    value: float, unit: str, literal: str
) -> None:
    assert interval_literal(value, unit, setting="s") == literal
    hours = value * 24 if unit == "days" else value
    assert parse_interval(literal).total_seconds() == pytest.approx(hours * 3600)


def test_a_retention_finer_than_a_microsecond_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config("fct_x", {"maintenance_log_retention_days": 1e-12})
    message = str(err.value)
    assert "maintenance_log_retention_days" in message
    assert "fct_x" in message
    assert "microseconds" in message


def test_every_engine_writes_the_table_after_a_fractional_retention(
    tmp_path: Path, sail_spark: Any, delta_spark: Any
) -> None:
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1, 2]}))
    props = policy_properties(
        log_retention_days=1.5, deleted_file_retention_hours=200.25, record_short_retention=True
    )
    assert set_table_properties(str(table), props)
    assert DeltaTable(str(table)).metadata().configuration["delta.logRetentionDuration"] == (
        "interval 36 hours"
    )
    # delta-rs, Sail and Delta each write the table afterwards and read all rows
    write_deltalake(str(table), pa.table({"id": [3]}), mode="append")
    sail_spark.createDataFrame([(4,)], "id long").write.format("delta").mode("append").save(
        str(table)
    )
    delta_spark.sql(f"INSERT INTO {table_sql(table)} VALUES (5)")
    assert oracle(delta_spark, table)[0] == 5
    assert sail_spark.read.format("delta").load(str(table)).count() == 5
    assert DeltaTable(str(table)).to_pyarrow_table().num_rows == 5
