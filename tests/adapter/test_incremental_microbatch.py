import pytest
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch

# No unique_key needed: microbatch on Spark replaces each batch's partition (insert_overwrite).
_MICROBATCH_SQL = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_time',
          batch_size='day', begin=modules.datetime.datetime(2020, 1, 1, 0, 0, 0),
          partition_by=['date_day'], file_format='%s') }}
select *, cast(event_time as date) as date_day
from {{ ref('input_model') }}
"""


class TestMicrobatchParquet(BaseMicrobatch):
    @pytest.fixture(scope="class")
    def microbatch_model_sql(self) -> str:
        return _MICROBATCH_SQL % "parquet"


class TestMicrobatchDelta(BaseMicrobatch):
    @pytest.fixture(scope="class")
    def microbatch_model_sql(self) -> str:
        return _MICROBATCH_SQL % "delta"
