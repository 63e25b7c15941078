"""Maintenance selection is dbt's: every form selects, for maintenance, what ``dbt ls`` selects.

One build of the example project for the module; every check is a dry run (VACUUM's dry run
changes nothing), so the order of the tests does not matter. For each selection form the models
a run-operation maintains (the rows of its per-model table) are the table and incremental models
among ``dbt ls`` with the same selection, both in-process; a criterion that reaches no table is a
dbt warning naming it. The CLI resolves the same selection through dbt on the manifest.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from tests.helpers.dbt_runs import CUSTOMERS, PER_BATCH, PROJECT_PARTS
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow

VARS = json.dumps({"batch": 0, "orders_per_batch": PER_BATCH, "customers": CUSTOMERS})
MAINTAINED = ("table", "incremental")
SELECTORS = """\
selectors:
  - name: orders_lineage
    description: fct_orders and its parents, without the landing tables
    definition:
      union:
        - method: fqn
          value: fct_orders
          parents: true
        - exclude:
            - method: tag
              value: landing
  - name: mart_tables
    default: true
    definition:
      intersection: ["path:models/marts", "config.materialized:table"]
"""


class Project:
    """The example project, built once, with dbt and the CLI run on it."""

    def __init__(self, root: Path, warehouse: Path) -> None:
        self.root = root
        self.warehouse = warehouse

    def dbt(self, *args: str) -> tuple[dbtRunnerResult, list[str]]:
        """``dbt <args>`` in-process: its result and the warnings it logged."""
        warnings: list[str] = []

        def collect(event: Any) -> None:
            if event.info.level == "warn":
                warnings.append(event.info.msg)

        # the same --vars on every command keeps dbt's partial parse valid between them
        command = [
            *args,
            "--project-dir",
            str(self.root),
            "--profiles-dir",
            str(self.root / "profiles_example"),
            "--vars",
            VARS,
        ]
        return dbtRunner(callbacks=[collect]).invoke(command), warnings

    def ls_maintained(
        self, select: list[str], exclude: list[str], selector: str | None
    ) -> set[str]:
        """The table and incremental models among ``dbt ls`` with this selection."""
        args = ["ls", "--resource-type", "model", "--output", "json"]
        args += ["--output-keys", "name config"]
        if select:
            args += ["--select", *select]
        if exclude:
            args += ["--exclude", *exclude]
        if selector:
            args += ["--selector", selector]
        listed, _ = self.dbt(*args)
        assert listed.success, listed.exception
        nodes = [json.loads(line) for line in listed.result]
        return {n["name"] for n in nodes if n["config"]["materialized"] in MAINTAINED}


def maintained_models(output: str) -> set[str]:
    """The model column of the per-model table a ``*_all`` run-operation printed."""
    lines = output.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("model "))
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("total "):
            break
        rows.append(line.split()[0])
    return set(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    from dbt.adapters.sparkdelta.engines import shutdown_engines

    base = tmp_path_factory.mktemp("selection")
    root = base / "project"
    root.mkdir()
    for part in PROJECT_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, root / part)
        else:
            shutil.copy(source, root / part)
    (root / "selectors.yml").write_text(SELECTORS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SPARKDELTA_WAREHOUSE", str(base / "warehouse"))
        shutdown_engines()
        project = Project(root, base / "warehouse")
        done, _ = project.dbt("build", "--select", "fqn:*")  # everything, not the default selector
        assert done.success, done.exception
        yield project
        shutdown_engines()


FORMS: list[tuple[str, list[str], list[str], str | None]] = [
    ("names", ["fct_orders", "dim_customers"], [], None),
    ("parents", ["+fct_orders"], [], None),
    ("n_parents", ["1+stg_customers", "2+fct_orders"], [], None),
    ("children", ["stg_customers+"], [], None),
    ("at", ["@stg_orders"], [], None),
    ("folder", ["marts"], [], None),
    ("tag", ["tag:landing"], [], None),
    ("path", ["path:models/marts"], [], None),
    ("config", ["config.materialized:incremental"], [], None),
    ("fqn_package", ["fqn:shop_lakehouse.landing", "package:shop_lakehouse,tag:landing"], [], None),
    ("intersection", ["+fct_orders,config.materialized:table"], [], None),
    ("union_in_one", ["tag:landing fct_orders"], [], None),
    ("exclude", ["path:models/marts"], ["+fct_orders", "dim_products"], None),
    ("exclude_only", [], ["tag:landing"], None),
    ("selector_union_exclude", [], [], "orders_lineage"),
    ("selector_intersection", [], [], "mart_tables"),
]


@pytest.mark.parametrize(
    ("select", "exclude", "selector"),
    [form[1:] for form in FORMS],
    ids=[form[0] for form in FORMS],
)
def test_vacuum_all_maintains_the_tables_dbt_ls_selects(
    built: Project,
    capfd: pytest.CaptureFixture[str],
    select: list[str],
    exclude: list[str],
    selector: str | None,
) -> None:
    expected = built.ls_maintained(select, exclude, selector)
    args: dict[str, Any] = {"dry_run": True}
    if select:
        args["select"] = select
    if exclude:
        args["exclude"] = exclude
    if selector:
        args["selector"] = selector
    capfd.readouterr()
    done, warnings = built.dbt("run-operation", "vacuum_all", "--args", json.dumps(args))
    assert done.success, done.exception
    assert maintained_models(capfd.readouterr().out) == expected
    assert expected  # every form here reaches a table: nothing to warn about
    assert not [w for w in warnings if "vacuum_all:" in w]


@pytest.mark.parametrize("operation", ["optimize_all", "cleanup_logs_all", "maintain_all"])
def test_every_run_operation_takes_the_same_selection(
    built: Project, capfd: pytest.CaptureFixture[str], operation: str
) -> None:
    args = json.dumps({"select": ["+fct_orders"], "exclude": ["tag:landing"], "dry_run": True})
    capfd.readouterr()
    done, _ = built.dbt("run-operation", operation, "--args", args)
    assert done.success, done.exception
    assert maintained_models(capfd.readouterr().out) == {"fct_orders"}


def test_no_selection_takes_the_default_selector_as_dbt_does(
    built: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    expected = built.ls_maintained([], [], None)  # dbt ls applies mart_tables (default: true)
    assert expected == {"customer_order_summary", "dim_customers", "dim_products"}
    capfd.readouterr()
    done, _ = built.dbt("run-operation", "vacuum_all", "--args", "{dry_run: true}")
    assert done.success, done.exception
    assert maintained_models(capfd.readouterr().out) == expected


def test_maintenance_report_takes_the_same_selection(
    built: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    args = json.dumps({"selector": "orders_lineage"})
    done, _ = built.dbt("run-operation", "maintenance_report", "--args", args)
    assert done.success, done.exception
    out = capfd.readouterr().out
    assert "fct_orders" in out
    assert "dim_customers" not in out
    assert "landing_orders" not in out


@pytest.mark.parametrize(
    ("select", "warning"),
    [
        (["stg_orders"], "'stg_orders' selects no table or incremental model"),
        (["tag:landing", "stg_orders"], "'stg_orders' selects no table or incremental model"),
    ],
    ids=["only_a_view", "view_beside_a_table"],
)
def test_a_criterion_that_reaches_no_table_warns_naming_it(
    built: Project, select: list[str], warning: str
) -> None:
    args = json.dumps({"select": select, "dry_run": True})
    done, warnings = built.dbt("run-operation", "vacuum_all", "--args", args)
    assert done.success, done.exception
    assert any(warning in w and w.startswith("vacuum_all: ") for w in warnings), warnings


@pytest.mark.parametrize(
    ("select", "error"),
    [
        (
            ["fct_order"],
            "'fct_order' does not match any enabled nodes (did you mean 'fct_orders'?)",
        ),
        (["source:maintenance+"], "'source:maintenance+' matches no model"),
        (["tag:landing,path:models/marts"], "'tag:landing,path:models/marts' does not match"),
        (["tag:landing", "nonexistent_model"], "'nonexistent_model' does not match"),
    ],
    ids=["typo", "source_without_models", "empty_intersection", "mixed"],
)
def test_a_criterion_that_matches_no_model_fails_the_run_operation(
    built: Project, select: list[str], error: str, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    args = json.dumps({"select": select, "dry_run": True})
    done, _ = built.dbt("run-operation", "maintain_all", "--args", args)
    assert not done.success
    out = capfd.readouterr().out
    assert error in out, out
    assert "Nothing was maintained: fix the selection" in out


def test_a_selected_table_not_built_yet_is_listed_as_not_maintained(
    built: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    model = built.root / "models" / "marts" / "dim_new.sql"
    model.write_text("{{ config(materialized='table') }}\nselect 1 as id\n")
    try:
        capfd.readouterr()
        args = json.dumps({"select": ["dim_new", "dim_customers"], "dry_run": True})
        done, _ = built.dbt("run-operation", "vacuum_all", "--args", args)
        assert done.success, done.exception
        out = capfd.readouterr().out
        assert maintained_models(out) == {"dim_customers"}
        assert "dim_new                      not maintained: not built yet" in out
    finally:
        model.unlink()


def test_a_selection_dbt_rejects_fails_the_run_operation(
    built: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    args = json.dumps({"select": ["colour:red"], "dry_run": True})
    done, _ = built.dbt("run-operation", "vacuum_all", "--args", args)
    assert not done.success
    assert "'colour' is not a valid method name" in capfd.readouterr().out
    both = json.dumps({"select": ["fct_orders"], "selector": "orders_lineage"})
    done, _ = built.dbt("run-operation", "maintenance_report", "--args", both)
    assert not done.success


def test_state_modified_with_a_state_manifest(
    built: Project, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    parsed, _ = built.dbt("parse")
    assert parsed.success, parsed.exception
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(built.root / "target" / "manifest.json", state / "manifest.json")
    model = built.root / "models" / "marts" / "dim_customers.sql"
    original = model.read_text()
    model.write_text(original + "\n-- changed\n")
    try:
        args = json.dumps({"select": ["state:modified"], "state": str(state), "dry_run": True})
        capfd.readouterr()
        done, _ = built.dbt("run-operation", "vacuum_all", "--args", args)
        assert done.success, done.exception
        assert maintained_models(capfd.readouterr().out) == {"dim_customers"}
    finally:
        model.write_text(original)


def test_cli_resolves_the_selection_with_dbt(built: Project) -> None:
    parsed, _ = built.dbt("parse")  # the manifest the CLI reads (with the selectors)
    assert parsed.success, parsed.exception

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "python_ops",
                "maintain",
                "--project-dir",
                str(built.root),
                "--dry-run",
                "--all",
                "--ops",
                "vacuum",
                "--json",
                *args,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "SPARKDELTA_WAREHOUSE": str(built.warehouse)},
            timeout=300,
            check=False,
        )

    cases: list[tuple[list[str], list[str], list[str], str | None]] = [
        (
            ["--select", "+fct_orders", "--exclude", "tag:landing"],
            ["+fct_orders"],
            ["tag:landing"],
            None,
        ),
        (["--selector", "orders_lineage"], [], [], "orders_lineage"),
        (
            ["--select", "config.materialized:incremental"],
            ["config.materialized:incremental"],
            [],
            None,
        ),
    ]
    for args, select, exclude, selector in cases:
        done = cli(*args)
        assert done.returncode == 0, done.stderr
        models = {o["model"] for o in json.loads(done.stdout)["outcomes"]}
        assert models == built.ls_maintained(select, exclude, selector), args

    default = cli()  # mart_tables has default: true
    assert default.returncode == 0, default.stderr
    models = {o["model"] for o in json.loads(default.stdout)["outcomes"]}
    assert models == built.ls_maintained([], [], None)

    unmatched = cli("--select", "fct_order")  # a typo: refused, naming the nearest model
    assert unmatched.returncode == 2, unmatched.stderr
    assert "'fct_order' does not match any enabled nodes" in unmatched.stderr
    assert "did you mean 'fct_orders'?" in unmatched.stderr
    rejected = cli("--select", "colour:red")
    assert rejected.returncode == 2
    assert "'colour' is not a valid method name" in rejected.stderr


def test_the_selection_port_answers_alike_in_a_child_process_and_in_this_one(
    built: Project,
) -> None:
    # python_ops reaches dbt's selector only through SelectionResolver; the CLI's implementation
    # runs the adapter's resolver in a child process, ManifestResolver is the same in-process
    from dbt.adapters.sparkdelta.bridge.selection_cli import ManifestResolver
    from python_ops.errors import ConfigError
    from python_ops.maintenance.selection.selection_resolver import (
        ChildProcessResolver,
        SelectionRequest,
        SelectionResolver,
    )

    child, here = ChildProcessResolver(), ManifestResolver()
    assert isinstance(child, SelectionResolver)
    assert isinstance(here, SelectionResolver)
    project = str(built.root)
    lineage = SelectionRequest(project, selector="orders_lineage")
    by_child, by_here = child.resolve(lineage), here.resolve(lineage)
    assert by_child == by_here
    assert by_child.unique_ids is not None
    assert "model.shop_lakehouse.fct_orders" in by_child.unique_ids
    marts = SelectionRequest(project, select=("path:models/marts",), exclude=("fct_orders",))
    assert child.resolve(marts) == here.resolve(marts)
    rejected = SelectionRequest(project, select=("colour:red",))
    for resolver in (child, here):
        with pytest.raises(ConfigError, match="'colour' is not a valid method name"):
            resolver.resolve(rejected)
