"""dbt models as maintenance targets: nodes to targets, the manifest, where tables are found.

Nodes are plain dicts shaped like ``target/manifest.json`` entries (inside dbt the adapter passes
``graph.nodes`` values, which this module reads the same way); tables are located by a function.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.selection.locations import (
    JOURNAL_NAME,
    default_history_location,
    warehouse_locator,
)
from python_ops.maintenance.selection.targets import (
    load_manifest,
    manifest_models,
    targets_from_nodes,
)


def node(name: str, materialized: str = "table", **extra: Any) -> dict[str, Any]:
    config = {"enabled": True, "materialized": materialized, **extra.pop("config", {})}
    return {
        "resource_type": "model",
        "name": name,
        "schema": "shop",
        "alias": name,
        "tags": [],
        "fqn": ["shop_lakehouse", "marts", name],
        "original_file_path": f"models/marts/{name}.sql",
        "config": config,
        **extra,
    }


def everywhere(schema: str, alias: str, config: Mapping[str, Any]) -> str:
    return f"/wh/{schema}/{alias}"


def test_tables_and_incrementals_are_maintained_views_and_the_rest_are_not() -> None:
    nodes = [
        node("fct_orders", "incremental"),
        node("dim_customers", "table"),
        node("stg_orders", "view"),
        node("eph", "ephemeral"),
        node("off", "table", config={"enabled": False}),
        {**node("a_seed"), "resource_type": "seed"},
        {**node("a_test"), "resource_type": "test"},
    ]
    targets, paths = targets_from_nodes(nodes, everywhere)
    assert [t.name for t in targets] == ["fct_orders", "dim_customers"]
    assert paths == {
        "fct_orders": "models/marts/fct_orders.sql",
        "dim_customers": "models/marts/dim_customers.sql",
    }


def test_a_target_carries_location_config_tags_and_fqn() -> None:
    n = node(
        "fct_orders",
        "incremental",
        alias="orders_fact",
        tags=["hourly"],
        config={"maintenance_zorder_by": ["customer_id"], "maintenance_min_small_files": 4},
    )
    seen: list[tuple[str, str, dict[str, Any]]] = []

    def locate(schema: str, alias: str, config: Mapping[str, Any]) -> str:
        seen.append((schema, alias, dict(config)))
        return f"s3://lake/{schema}/{alias}"

    (target,), _ = targets_from_nodes([n], locate)
    assert target.location == "s3://lake/shop/orders_fact"  # the alias names the table
    assert seen[0][2]["maintenance_min_small_files"] == 4  # the locator sees the config
    assert target.config.model == "fct_orders"
    assert target.config.zorder_by == ("customer_id",)
    assert target.config.min_small_files == 4
    assert target.tags == ("hourly",)
    assert target.fqn == ("shop_lakehouse", "marts", "fct_orders")


def test_models_not_built_yet_are_left_out() -> None:
    def only_fct(schema: str, alias: str, config: Mapping[str, Any]) -> str | None:
        return "/wh/shop/fct_orders" if alias == "fct_orders" else None

    targets, paths = targets_from_nodes([node("fct_orders"), node("dim_new")], only_fct)
    assert [t.name for t in targets] == ["fct_orders"]
    assert list(paths) == ["fct_orders"]


def test_a_bad_setting_names_the_model() -> None:
    nodes = [node("fct_orders"), node("dim_bad", config={"maintenance_on_error": "ignore"})]
    with pytest.raises(ConfigError, match=r"model 'dim_bad': setting 'maintenance_on_error'"):
        targets_from_nodes(nodes, everywhere)


def test_config_objects_as_dbt_passes_them() -> None:
    class Config:  # dbt's node config: an object with to_dict()
        def to_dict(self) -> dict[str, Any]:
            return {"materialized": "table", "maintenance_vacuum_enabled": False}

    class Node:
        resource_type = "model"
        name = "dim_products"
        schema = "shop"
        alias = None  # no alias: the name names the table
        tags = ("core",)
        fqn = ("shop_lakehouse", "dim_products")
        original_file_path = "models/dim_products.sql"
        config = Config()

    (target,), paths = targets_from_nodes([Node()], everywhere)
    assert target.location == "/wh/shop/dim_products"
    assert target.config.vacuum_enabled is False
    assert target.tags == ("core",)
    assert paths == {"dim_products": "models/dim_products.sql"}


def test_load_manifest(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"setting 'project_dir' has bad value .*target/manifest.json does not exist. "
        r"Run 'dbt parse'",
    ):
        load_manifest(str(tmp_path))
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "manifest.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"cannot be read as JSON .*Re-run 'dbt parse'"):
        load_manifest(str(tmp_path))
    manifest = {
        "nodes": {
            "model.shop.a": node("a"),
            "test.shop.t": {"resource_type": "test", "name": "t"},
            "model.shop.b": node("b", "view"),
        }
    }
    (tmp_path / "target" / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_manifest(str(tmp_path))
    assert [m["name"] for m in manifest_models(loaded)] == ["a", "b"]
    assert manifest_models({}) == []


def built(path: Path) -> str:
    (path / "_delta_log").mkdir(parents=True)
    return str(path)


def test_warehouse_locator_journal_then_default_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wh = tmp_path / "wh"
    elsewhere = built(tmp_path / "external" / "orders")
    default = built(wh / "shop" / "dim_customers")
    (wh / JOURNAL_NAME).write_text(
        json.dumps(
            {
                "relations": [
                    {
                        "kind": "table",
                        "schema": "Shop",
                        "name": "FCT_ORDERS",
                        "location": elsewhere,
                    },
                    {"kind": "view", "schema": "shop", "name": "stg_orders", "statement": "x"},
                ]
            }
        )
    )
    locate = warehouse_locator(str(wh))
    assert locate("shop", "fct_orders", {}) == elsewhere  # the journal, case-insensitive
    assert locate("SHOP", "Dim_Customers", {}) == default  # else <warehouse>/<schema>/<alias>
    assert locate("shop", "never_built", {}) is None  # no _delta_log: not built yet
    root = {"location_root": "s3://lake/tables/"}
    # object stores are asked through delta-rs, as the adapter asks (one answer for both);
    # without credentials that is a named error, not a guess
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigError, match="No S3 credentials for s3://lake/tables/fct_orders"):
        locate("shop", "fct_orders", root)
    local_root = {"location_root": str(tmp_path / "external")}
    assert locate("shop", "orders", local_root) == elsewhere
    assert locate("shop", "missing", local_root) is None


def test_an_unreadable_journal_is_a_named_error(tmp_path: Path) -> None:
    (tmp_path / JOURNAL_NAME).write_text("{")
    with pytest.raises(
        ConfigError, match=r"setting 'warehouse'.*catalog journal .* cannot be read"
    ):
        warehouse_locator(str(tmp_path))


def test_default_history_location(tmp_path: Path) -> None:
    models = [{"schema": "shop"}, {"schema": "Shop"}, {"schema": "staging"}]
    assert default_history_location(str(tmp_path), models) == str(
        tmp_path / "shop" / "maintenance_history"
    )
    assert default_history_location(str(tmp_path), []) == str(
        tmp_path / "default" / "maintenance_history"
    )
    (tmp_path / JOURNAL_NAME).write_text(
        json.dumps(
            {
                "relations": [
                    {
                        "kind": "table",
                        "schema": "audit",
                        "name": "maintenance_history",
                        "location": "/data/history",
                    }
                ]
            }
        )
    )
    assert default_history_location(str(tmp_path), models) == "/data/history"


def test_a_config_already_parsed_for_the_node_is_taken_as_it_is() -> None:
    # the post-hook passes the config its materialization's check parsed: not parsed again
    nodes = [
        node("fct_orders", unique_id="model.shop.fct_orders"),
        node("dim_customers", unique_id="model.shop.dim_customers"),
    ]
    parsed = parse_config("fct_orders", {"materialized": "table", "maintenance_enabled": False})
    targets, _ = targets_from_nodes(nodes, everywhere, parsed={"model.shop.fct_orders": parsed})
    assert targets[0].config is parsed  # the node's own config enables maintenance
    assert targets[0].unique_id == "model.shop.fct_orders"
    assert targets[1].config.enabled  # not given: parsed from the node


def test_a_scoped_target_is_the_same_model_with_only_its_build_scope_changed() -> None:
    import dataclasses

    from python_ops.maintenance.selection.targets import ModelTarget

    # scoped() names every field: a field added to ModelTarget must be passed there too
    assert [f.name for f in dataclasses.fields(ModelTarget)] == [
        "name", "location", "config", "tags", "fqn", "unique_id", "build_scope",
    ]  # fmt: skip
    target = ModelTarget(
        "m", "/t", parse_config("m", {}), ("a",), ("p", "m"), "model.p.m", "day = 1"
    )
    for scope in (None, "day = '2024-01-01'"):
        assert target.scoped(scope) == dataclasses.replace(target, build_scope=scope)
