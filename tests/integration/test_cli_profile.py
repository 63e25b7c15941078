"""The command line reads dbt's profile as dbt does: which profiles.yml, which profile and target,
the adapter's ``warehouse`` and ``location_root``, ``env_var`` (and nothing else of Jinja).

Real files in temporary directories; no engine is needed to decide where tables are.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from python_ops.cli.project import resolve_places
from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.dbt_profile import read_profile_target

PROJECT = "name: shop\nversion: '1.0'\nconfig-version: 2\nprofile: shop\n"
PROFILE = """
shop:
  target: dev
  outputs:
    dev:
      type: sparkdelta
      method: session
      schema: shop
      warehouse: wh
    prod:
      type: sparkdelta
      schema: shop
      warehouse: "{{ env_var('SHOP_WAREHOUSE', '/data/default-wh') }}"
    lake:
      type: sparkdelta
      method: thrift
      host: spark
      schema: shop
      location_root: "{{ env_var('SHOP_ROOT') }}"
    metastore:
      type: sparkdelta
      method: thrift
      host: spark
      schema: shop
    templated:
      type: sparkdelta
      schema: shop
      warehouse: "{{ var('wh') }}"
    other:
      type: spark
      method: session
      schema: shop
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with dbt_project.yml; the working directory is elsewhere."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "dbt_project.yml").write_text(PROJECT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("DBT_PROFILES_DIR", "DBT_TARGET", "SPARKDELTA_WAREHOUSE", "SHOP_ROOT"):
        monkeypatch.delenv(name, raising=False)
    return root


def args(project: Path, **flags: str | None) -> argparse.Namespace:
    base = {"project_dir": str(project), "profiles_dir": None, "profile": None, "target": None}
    return argparse.Namespace(**{"warehouse": None, **base, **flags})


def test_profile_in_the_project_dir_puts_a_relative_warehouse_there(project: Path) -> None:
    (project / "profiles.yml").write_text(PROFILE)
    places = resolve_places(args(project))
    assert places.warehouse == str(project / "wh")  # relative to the project, not the cwd
    assert places.location_root is None
    assert places.source == f"profile 'shop' target 'dev' in {project / 'profiles.yml'}"


@pytest.mark.parametrize("where", ["flag", "env", "cwd", "home"])
def test_profiles_yml_is_found_where_dbt_looks(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    directory = {
        "flag": tmp_path / "flag",
        "env": tmp_path / "env",
        "cwd": tmp_path / "elsewhere",
        "home": tmp_path / "home" / ".dbt",
    }[where]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "profiles.yml").write_text(PROFILE)
    (project / "profiles.yml").write_text(PROFILE.replace("warehouse: wh", "warehouse: not-me"))
    if where == "env":
        monkeypatch.setenv("DBT_PROFILES_DIR", str(directory))
    target = read_profile_target(
        str(project), profiles_dir=str(directory) if where == "flag" else None
    )
    assert target is not None
    if where == "home":  # the project directory comes before ~/.dbt
        assert target.profiles_path == str(project / "profiles.yml")
    else:
        assert target.profiles_path == str(directory / "profiles.yml")
        assert target.warehouse == str(project / "wh")


def test_target_from_flag_then_env_then_profile(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "profiles.yml").write_text(PROFILE)
    monkeypatch.setenv("DBT_TARGET", "prod")
    target = read_profile_target(str(project))
    assert target is not None
    assert (target.target, target.warehouse) == ("prod", "/data/default-wh")  # env_var default
    monkeypatch.setenv("SHOP_WAREHOUSE", "/data/shop-wh")
    target = read_profile_target(str(project), target="prod")
    assert target is not None
    assert target.warehouse == "/data/shop-wh"
    monkeypatch.setenv("SHOP_ROOT", "s3://lake/shop")
    lake = read_profile_target(str(project), target="lake")
    assert lake is not None
    assert (lake.method, lake.warehouse, lake.location_root) == ("thrift", None, "s3://lake/shop")


def test_bad_profiles_are_named_errors(project: Path) -> None:
    (project / "profiles.yml").write_text(PROFILE)
    with pytest.raises(ConfigError, match=r"Environment variable SHOP_ROOT is not set"):
        read_profile_target(str(project), target="lake")
    with pytest.raises(ConfigError, match=r"Only \{\{ env_var\('NAME', 'default'\) \}\}"):
        read_profile_target(str(project), target="templated")
    with pytest.raises(ConfigError, match=r"is not 'type: sparkdelta'"):
        read_profile_target(str(project), target="other")
    with pytest.raises(ConfigError, match=r"has no output 'qa' \(it has: dev, prod"):
        read_profile_target(str(project), target="qa")
    with pytest.raises(ConfigError, match=r"has no profile 'nope' \(it has: shop\)"):
        read_profile_target(str(project), profile="nope")
    with pytest.raises(ConfigError, match=r"the cluster's metastore places its tables"):
        resolve_places(args(project, target="metastore"))
    with pytest.raises(ConfigError, match=r"setting 'profiles_dir' has bad value"):
        read_profile_target(str(project), profiles_dir=str(project / "missing"))


def test_without_a_profile_the_old_fallbacks_apply(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    places = resolve_places(args(project))
    assert places.warehouse == str(project / "warehouse")
    assert "no profiles.yml found" in places.source
    monkeypatch.setenv("SPARKDELTA_WAREHOUSE", "/data/wh")
    assert resolve_places(args(project)).warehouse == "/data/wh"
    (project / "profiles.yml").write_text(PROFILE)  # a profile wins over the variable
    assert resolve_places(args(project)).warehouse == str(project / "wh")
    # --warehouse wins over everything
    assert resolve_places(args(project, warehouse="/x/wh")).source == "--warehouse"


def test_a_targets_location_root_places_tables_and_history(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    from python_ops.maintenance.selection.locations import (
        default_history_location,
        warehouse_locator,
    )

    root = tmp_path / "lake"
    write_deltalake(str(root / "shop" / "orders"), pa.table({"id": [1, 2]}))
    locate = warehouse_locator(None, location_root=str(root))
    assert locate("SHOP", "Orders", {}) == f"{root}/shop/orders"
    assert locate("shop", "customers", {}) is None  # not built
    own = tmp_path / "own"  # a model's own location_root wins
    write_deltalake(str(own / "orders"), pa.table({"id": [1]}))
    assert locate("shop", "orders", {"location_root": str(own)}) == f"{own}/orders"
    models = [{"schema": "shop"}]
    assert default_history_location(None, models, location_root=str(root)) == (
        f"{root}/shop/maintenance_history"
    )


def test_project_dir_defaults_to_dbt_project_dir(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "profiles.yml").write_text(PROFILE)
    monkeypatch.setenv("DBT_PROJECT_DIR", str(project))
    places = resolve_places(args(project, project_dir=None))
    assert (places.project_dir, places.warehouse) == (str(project), str(project / "wh"))


def test_a_misspelt_profile_key_is_refused_as_dbt_refuses_it(project: Path) -> None:
    # before: 'warehous' was ignored and the tables were looked for in <project>/warehouse
    (project / "profiles.yml").write_text(
        "shop:\n  target: dev\n  outputs:\n    dev:\n      type: sparkdelta\n"
        "      schema: shop\n      warehous: /data/wh\n"
    )
    with pytest.raises(
        ConfigError,
        match=r"setting 'profile key' has bad value 'warehous'.*did you mean 'warehouse'\?",
    ):
        read_profile_target(str(project))


def test_the_profile_keys_are_the_adapters() -> None:
    import dataclasses

    from dbt.adapters.sparkdelta.connections import SparkDeltaCredentials
    from python_ops.maintenance.configuration.dbt_profile import PROFILE_KEYS

    fields = {f.name for f in dataclasses.fields(SparkDeltaCredentials)}
    assert fields | {"type", "threads"} == PROFILE_KEYS
