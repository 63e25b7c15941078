"""The example project's ``connect`` and ``thrift`` targets work as written against real servers.

The project is built and loaded once, on the embedded target; each cluster target then maintains
a copy of that warehouse through ``location_root`` (``SPARKDELTA_LOCATION_ROOT``), as a cluster
would maintain tables it shares with the machine dbt runs on. The same ``maintain_all`` runs on
each, from the same state: the same ops must do the same work. (The servers building the tables
themselves, with their Delta, is what ``test_thrift.py`` and ``test_connect.py`` check.)
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner

from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.rules.log_bounds import PROOF_OPS
from tests.helpers.spark_servers import SparkServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PARTS = ("dbt_project.yml", "models", "seeds", "profiles_example")
SIZE = {"orders_per_batch": 50, "customers": 100}
EXTRA_BATCHES = 4


@dataclass
class Example:
    project: Path
    root: Path
    timings: dict[str, float] = field(default_factory=dict)
    done: dict[str, list[tuple[str, str, str, int, int]]] = field(default_factory=dict)


def dbt(example: Example, *args: str, target: str | None = None) -> None:
    command = [
        *args,
        "--project-dir",
        str(example.project),
        "--profiles-dir",
        str(example.project / "profiles_example"),
    ]
    if target:
        command += ["--target", target]
    result = dbtRunner().invoke(command)
    assert result.success, f"dbt {' '.join(args)} --target {target}: {result.exception}"


def warehouse(example: Example, method: str) -> Path:
    return example.root / f"warehouse-{method}"


def ops_done(location: Path, since: float) -> list[tuple[str, str, str, int, int]]:
    """(model, op, status, files removed, files added) recorded since ``since``, sorted.

    What decisions proved (ops ``vacuum_check``, ``log_bounds``) is left out: it belongs to a
    table's location, and each target's copy of the warehouse proves it afresh.
    """
    records = HistoryStore(str(location / "shop" / "maintenance_history")).records()
    return sorted(
        (r.model, r.op, r.status, r.files_removed, r.files_added)
        for r in records
        if r.started_at.timestamp() >= since and r.op not in PROOF_OPS
    )


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Example]:
    """The example built and loaded on the embedded target; a warehouse copy per cluster target."""
    from dbt.adapters.sparkdelta.engines import shutdown_engines

    root = tmp_path_factory.mktemp("reach-example")
    project = root / "project"
    project.mkdir()
    for part in PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, project / part)
        else:
            shutil.copy(source, project / part)
    example = Example(project, root)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARKDELTA_WAREHOUSE", str(warehouse(example, "embedded")))
        shutdown_engines()
        dbt(example, "build", "--vars", json.dumps({**SIZE, "batch": 0}))
        for batch in range(1, 1 + EXTRA_BATCHES):
            variables = {**SIZE, "batch": batch, "maintenance_post_hook": False}
            dbt(
                example,
                "run",
                "--select",
                "landing_orders",
                "stg_orders",
                "fct_orders",
                "--vars",
                json.dumps(variables),
            )
        shutdown_engines()
        for method in ("thrift", "connect"):
            shutil.copytree(warehouse(example, "embedded"), warehouse(example, method))
        yield example
        shutdown_engines()
    print(
        "maintain_all on the example: "
        + ", ".join(f"{m} {s:.2f} s" for m, s in example.timings.items())
    )


def maintain(example: Example, method: str, target: str, **environment: str) -> None:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARKDELTA_WAREHOUSE", str(warehouse(example, "embedded")))
        for key, value in environment.items():
            env.setenv(key, value)
        since = time.time()
        started = time.perf_counter()
        dbt(example, "run-operation", "maintain_all", target=target)
        example.timings[method] = time.perf_counter() - started
        dbt(example, "run-operation", "maintenance_report", target=target)
    example.done[method] = ops_done(warehouse(example, method), since)


def test_embedded_target(example: Example) -> None:
    maintain(example, "embedded", "embedded")
    optimized = [d for d in example.done["embedded"] if d[1] == "optimize"]
    assert optimized, example.done["embedded"]
    assert all(d[2] == "succeeded" and d[3] > d[4] for d in optimized), optimized


def test_thrift_target_as_written(example: Example, thrift_server: SparkServer) -> None:
    pytest.importorskip("pyhive", reason="needs dbt-spark's PyHive extra")
    maintain(
        example,
        "thrift",
        "thrift",
        SPARK_THRIFT_PORT=str(thrift_server.port),
        SPARKDELTA_LOCATION_ROOT=str(warehouse(example, "thrift")),
    )
    if "embedded" in example.done:
        assert example.done["thrift"] == example.done["embedded"]
    assert any(d[1] == "optimize" for d in example.done["thrift"])


def test_connect_target_as_written(example: Example, connect_server: SparkServer) -> None:
    maintain(
        example,
        "connect",
        "connect",
        SPARK_CONNECT_URL=f"sc://127.0.0.1:{connect_server.port}",
        SPARKDELTA_LOCATION_ROOT=str(warehouse(example, "connect")),
    )
    if "embedded" in example.done:
        assert example.done["connect"] == example.done["embedded"]
    assert any(d[1] == "optimize" for d in example.done["connect"])
