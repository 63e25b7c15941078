"""The adapter's engine settings and catalog journal parsing, without starting an engine."""

from __future__ import annotations

import pytest

from dbt.adapters.sparkdelta.engines import get_engine
from dbt.adapters.sparkdelta.engines.catalog_journal import parse_ddl
from python_ops.errors import ConfigError


def test_unknown_mode_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"'mode' has bad value 'turbo'.*embedded, local, attach"):
        get_engine(mode="turbo", warehouse=None, connect_url=None)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            '/* {"app": "dbt"} */\n create or replace view shop.v as select 1',
            ("create_view", "shop", "v"),
        ),
        ("create temporary view v__dbt_tmp as select 1", None),
        (
            "create or replace table `shop`.`t` using delta location '/x' as select 1",
            ("create_table", "shop", "t"),
        ),
        ("create table t (id int) using delta", ("create_table", "default", "t")),
        ("drop table if exists shop.t", ("drop", "shop", "t")),
        ("drop view shop.v", ("drop", "shop", "v")),
        ("alter table shop.a rename to shop.b", ("rename", "shop", "a")),
        ("create schema if not exists Shop", ("create_schema", "shop", "")),
        ("drop schema if exists shop cascade", ("drop_schema", "shop", "")),
        ("merge into shop.t using s on t.id = s.id when matched then update set *", None),
        ("select * from shop.t", None),
    ],
)
def test_parse_ddl(sql: str, expected: tuple[str, str, str] | None) -> None:
    event = parse_ddl(sql)
    assert (None if event is None else (event.action, event.schema, event.name)) == expected


def test_every_maintenance_key_is_an_adapter_config() -> None:
    import dataclasses

    from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter
    from python_ops.maintenance.configuration.config import KEYS

    declared = {f.name for f in dataclasses.fields(SparkDeltaAdapter.AdapterSpecificConfigs)}
    assert set(KEYS) <= declared
    assert "maintenance_vacuum_mode" in declared
    assert "file_format" in declared
