"""The advisor's one compiled-SQL resolver (``python_ops.advise.compiled``) over real files.

A fake ``target/`` laid out as dbt 1.11 lays it (measured: ``dbt build`` on the embedded engine):
a generic test defined in ``models/marts/schema.yml`` is a file in the folder
``target/compiled/<project>/models/marts/schema.yml/``, named by the test's own ``path`` (dbt
shortens long test names to a hashed path); a snapshot has no compiled file, only its run's SQL
under ``target/run/`` (a ``CREATE TABLE ... AS`` on its first run, a ``MERGE`` later); a file
compiled before its source last changed is an earlier run's and is never read. The command line,
``dbt run-operation maintenance_advise`` and the ``auto`` post-hook read the same SQL.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.sparkdelta.operations.advisor_bridge import ProjectAdvisor
from python_ops.advise.compiled import CompiledSql, layout_path
from python_ops.advise.predicates import QueryReader
from python_ops.cli.main import main

T0 = 1_700_000_000.0  # the sources' mtime; dbt compiled at T0 + 60, an earlier run at T0 - 600
FCT = "model.shop.fct_orders"
TEST = "test.shop.dbt_utils_accepted_range_fct_orders_order_date__2024_01_01.5d2b1c9a"
TEST_PATH = "dbt_utils_accepted_range_fct_o_8a1f2c3d4e.sql"  # dbt's hashed path, not the name
SNAP = "snapshot.shop.orders_snap"
STALE = "model.shop.by_status"
TEST_SQL = "select * from shop.fct_orders where order_date >= '2024-01-01'"
SNAP_QUERY = "select * from shop.fct_orders where customer_key = 3"
SNAP_RUN = f"""
    create or replace table shop.orders_snap
    using delta
    location '/warehouse/shop/orders_snap'
    as
    select *, md5(coalesce(cast(order_key as string), '')) as dbt_scd_id,
      current_timestamp() as dbt_updated_at
    from (
{SNAP_QUERY}
    ) sbq
"""
SNAP_MERGE = """
    merge into shop.orders_snap as DBT_INTERNAL_DEST
    using shop.orders_snap__dbt_tmp as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id
    when not matched then insert *
"""


def _node(uid: str, original: str, path: str, materialized: str, **extra: Any) -> dict[str, Any]:
    kind, package, name = uid.split(".")[:3]
    return {
        "unique_id": uid,
        "resource_type": kind,
        "package_name": package,
        "name": name,
        "schema": "shop",
        "alias": name,
        "original_file_path": original,
        "path": path,
        "language": "sql",
        "config": {"materialized": materialized, "enabled": True},
        "depends_on": {"nodes": [FCT] if uid != FCT else []},
        **extra,
    }


def _manifest(generated_at: float = T0 + 30) -> dict[str, Any]:
    """As ``dbt run-operation`` rewrites it after ``dbt build``: parsed, nothing compiled."""
    nodes = [
        _node(FCT, "models/marts/fct_orders.sql", "marts/fct_orders.sql", "table"),
        _node(TEST, "models/marts/schema.yml", TEST_PATH, "test"),
        _node(SNAP, "snapshots/orders_snap.sql", "orders_snap.sql", "snapshot"),
        _node(STALE, "models/marts/by_status.sql", "marts/by_status.sql", "table"),
    ]
    stamp = datetime.fromtimestamp(generated_at, UTC).isoformat().replace("+00:00", "Z")
    return {
        "metadata": {"generated_at": stamp, "project_name": "shop"},
        "nodes": {n["unique_id"]: n for n in nodes},
        "sources": {},
    }


def _write(path: Path, text: str, mtime: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def _project(root: Path, *, snapshot_run: str = SNAP_RUN, target: str = "target") -> Path:
    """Sources at T0; compiled by the last run at T0 + 60; ``by_status`` by an earlier run."""
    for source in (
        "models/marts/fct_orders.sql",
        "models/marts/schema.yml",
        "snapshots/orders_snap.sql",
        "models/marts/by_status.sql",
    ):
        _write(root / source, "-- source\n", T0)
    compiled = root / target / "compiled" / "shop"
    _write(compiled / "models/marts/fct_orders.sql", "select 1 as order_key", T0 + 60)
    _write(compiled / "models/marts/schema.yml" / TEST_PATH, TEST_SQL, T0 + 60)
    _write(root / target / "run/shop/snapshots/orders_snap.sql", snapshot_run, T0 + 60)
    stale_sql = "select * from shop.fct_orders where status = 'open'"
    _write(compiled / "models/marts/by_status.sql", stale_sql, T0 - 600)
    (root / "dbt_project.yml").write_text(f"name: shop\nprofile: shop\ntarget-path: {target}\n")
    (root / target / "manifest.json").write_text(json.dumps(_manifest()))
    return root


@pytest.mark.parametrize(
    ("original", "path", "expected"),
    [
        ("models/marts/fct_orders.sql", "marts/fct_orders.sql", "models/marts/fct_orders.sql"),
        ("models/marts/schema.yml", TEST_PATH, f"models/marts/schema.yml/{TEST_PATH}"),
        ("snapshots/orders_snap.sql", "orders_snap.sql", "snapshots/orders_snap.sql"),
    ],
)
def test_layout_path_is_dbts(original: str, path: str, expected: str) -> None:
    assert layout_path({"original_file_path": original, "path": path}) == expected


def test_a_yml_generic_test_is_read_from_its_folder_by_its_own_path(tmp_path: Path) -> None:
    project = _project(tmp_path)
    manifest = _manifest()
    found = CompiledSql.of(manifest, str(project)).resolve(manifest["nodes"][TEST])
    assert (found.sql, found.problem) == (TEST_SQL, "")
    assert found.origin == f"target/compiled/shop/models/marts/schema.yml/{TEST_PATH}"


def test_a_snapshot_is_read_from_its_runs_create_table_as(tmp_path: Path) -> None:
    project = _project(tmp_path)
    manifest = _manifest()
    found = CompiledSql.of(manifest, str(project)).resolve(manifest["nodes"][SNAP])
    assert found.origin == "target/run/shop/snapshots/orders_snap.sql"
    assert found.problem == ""
    assert "WHERE customer_key = 3" in str(found.sql)
    assert not str(found.sql).lower().lstrip().startswith("create")


def test_a_snapshot_whose_run_was_a_merge_says_so(tmp_path: Path) -> None:
    project = _project(tmp_path, snapshot_run=SNAP_MERGE)
    manifest = _manifest()
    found = CompiledSql.of(manifest, str(project)).resolve(manifest["nodes"][SNAP])
    assert found.sql is None
    assert "target/run/shop/snapshots/orders_snap.sql holds dbt's MERGE" in found.problem


def test_an_earlier_runs_file_older_than_its_source_is_never_read(tmp_path: Path) -> None:
    project = _project(tmp_path)
    manifest = _manifest()
    found = CompiledSql.of(manifest, str(project)).resolve(manifest["nodes"][STALE])
    assert found.sql is None
    assert found.problem.startswith("compiled before models/marts/by_status.sql last changed")
    os.utime(project / "models/marts/by_status.sql", (T0 - 900, T0 - 900))  # source unchanged
    again = CompiledSql.of(manifest, str(project)).resolve(manifest["nodes"][STALE])
    assert "status = 'open'" in str(again.sql)


def test_the_manifest_comes_first_unless_its_source_changed_since(tmp_path: Path) -> None:
    project = _project(tmp_path)
    manifest = _manifest(generated_at=T0 + 30)
    node = {**manifest["nodes"][TEST], "compiled": True, "compiled_code": "select 2 as x"}
    resolver = CompiledSql.of(manifest, str(project))
    assert (resolver.resolve(node).sql, resolver.resolve(node).origin) == (
        "select 2 as x",
        "manifest",
    )
    os.utime(project / "models/marts/schema.yml", (T0 + 45, T0 + 45))  # edited after the parse
    found = resolver.resolve(node)  # the file compiled at T0 + 60 is newer: it is read
    assert (found.sql, found.origin[:15]) == (TEST_SQL, "target/compiled")
    os.utime(project / "models/marts/schema.yml", (T0 + 90, T0 + 90))  # edited after both
    late = resolver.resolve(node)
    assert late.sql is None
    assert late.problem.startswith("compiled before models/marts/schema.yml last changed (manifest")


def test_nothing_compiled_names_the_files_looked_for(tmp_path: Path) -> None:
    manifest = _manifest()
    resolver = CompiledSql.of(manifest, str(tmp_path))
    test = resolver.resolve(manifest["nodes"][TEST])
    assert test.problem == (
        "not compiled yet (no compiled SQL in the manifest, no "
        f"target/compiled/shop/models/marts/schema.yml/{TEST_PATH})"
    )
    snap = resolver.resolve(manifest["nodes"][SNAP])
    assert snap.problem.endswith(
        "no target/compiled/shop/snapshots/orders_snap.sql or "
        "target/run/shop/snapshots/orders_snap.sql)"
    )


def test_a_custom_target_path(tmp_path: Path) -> None:
    project = _project(tmp_path, target="build")
    manifest = _manifest()
    found = CompiledSql.of(manifest, str(project), "build").resolve(manifest["nodes"][TEST])
    assert found.sql == TEST_SQL


def _read_sql(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every reader's SQL the advisor parses, recorded."""
    seen: list[str] = []
    original = QueryReader.read

    def read(self: QueryReader, sql: str) -> Any:
        seen.append(sql)
        return original(self, sql)

    monkeypatch.setattr(QueryReader, "read", read)
    return seen


def test_every_front_end_reads_the_same_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path)
    seen = _read_sql(monkeypatch)
    argv = ["advise", "--project-dir", str(project), "--warehouse", str(tmp_path / "wh")]
    assert main([*argv, "--json", "--no-measure"]) == 0
    command_line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    cli_sql = sorted(seen)
    seen.clear()
    adapter = SimpleNamespace(
        config=SimpleNamespace(project_root=str(project), target_path="target")
    )
    locator = SimpleNamespace(locate=lambda nodes: ([], []))
    advisor = ProjectAdvisor(adapter, locator)  # type: ignore[arg-type]
    run_operation = json.loads(advisor.advise(None, as_json=True))
    operation_sql = sorted(seen)
    seen.clear()
    post_hook = advisor.advice_for()(SimpleNamespace(unique_id=FCT, name="fct_orders"))
    assert cli_sql == operation_sql == sorted(seen)
    assert TEST_SQL in cli_sql
    assert any("customer_key = 3" in sql for sql in cli_sql)
    assert not any("status" in sql for sql in cli_sql)  # the earlier run's by_status
    fct = next(a for a in command_line if a["model"] == "fct_orders")
    assert fct == next(a for a in run_operation if a["model"] == "fct_orders")
    assert [(u["node"], u["reason"][:15]) for u in fct["unresolved"]] == [
        (STALE, "compiled before")
    ]
    assert [(u.node, u.reason) for u in post_hook.unresolved] == [
        (u["node"], u["reason"]) for u in fct["unresolved"]
    ]
    assert list(post_hook.columns) == fct["columns"]
    used = {(c["column"], e["node"], e["kind"]) for c in fct["candidates"] for e in c["uses"]}
    assert used == {("order_date", TEST, "range"), ("customer_key", SNAP, "equality")}
