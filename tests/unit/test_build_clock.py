"""Which builds record their start for the post-hook (``build_clock.has_post_hook``), and
where what the start saw holds (``StartedBuild.facts``).

A materialization records the table's version before the build only for a model whose
post-hook may maintain it; a model without any post-hook records nothing (no listing of its
log). The node arrives as the materialization's ``model`` (a dict, dbt's ``post-hook`` key) or
as dbt's node object (``config.post_hook``); both are read.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from dbt.artifacts.resources import Hook, NodeConfig

from dbt.adapters.sparkdelta.operations.build_clock import StartedBuild, has_post_hook
from dbt.adapters.sparkdelta.operations.run_operations import _logged
from python_ops.maintenance import parse_config

HOOK = "{{ maintain_model() }}"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"materialized": "table", "post-hook": [{"sql": HOOK, "transaction": True}]}, True),
        ({"materialized": "table", "post-hook": []}, False),
        ({"materialized": "table"}, False),
    ],
)
def test_a_materialization_s_model_dict(config: dict[str, object], expected: bool) -> None:
    assert has_post_hook({"unique_id": "model.p.m", "config": config}) is expected


@pytest.mark.parametrize(
    ("config", "expected"),
    [(NodeConfig(post_hook=[Hook(sql=HOOK)]), True), (NodeConfig(), False)],
)
def test_dbt_s_node_config(config: NodeConfig, expected: bool) -> None:
    assert has_post_hook(SimpleNamespace(unique_id="model.p.m", config=config)) is expected


def _started(location: str | None) -> StartedBuild:
    return StartedBuild(
        "model.p.m",
        parse_config("m", {}),
        location,
        started_at_ms=1_000,
        clock=time.perf_counter(),
        version_before=7,
        location_was_empty=False,
        own_wall_s=0.0,
        own_cpu_s=0.0,
    )


@pytest.mark.parametrize(
    "spelling", ["/w/fleet/m", "/w/fleet/m/", "file:///w/fleet/m", "/w//fleet/m"]
)
def test_the_start_s_version_holds_where_it_looked(spelling: str) -> None:
    facts = _started("/w/fleet/m").facts(spelling)
    assert (facts.version_before, facts.started_at_ms) == (7, 1_000)


@pytest.mark.parametrize("started_at", ["/w/fleet/m", None])
def test_a_table_the_catalog_has_elsewhere_is_found_by_its_commits_times(
    started_at: str | None,
) -> None:
    # an incremental model whose location_root changed: its table stays where it was, and
    # the version the start saw at the new place says nothing of it
    empty = dataclasses.replace(_started(started_at), location_was_empty=True)
    facts = empty.facts("/w/old_root/m")
    assert facts.version_before is None
    assert facts.location_was_empty is False
    assert facts.started_at_ms == 1_000


def test_where_the_hook_knows_a_log_is_without_asking(tmp_path: Path) -> None:
    # a rebuilt table: its start listed a commit there
    assert _logged(_started(str(tmp_path / "rebuilt"))) == {str(tmp_path / "rebuilt")}
    created, parquet = tmp_path / "created", tmp_path / "plain_parquet"
    (created / "_delta_log").mkdir(parents=True)
    (created / "_delta_log" / f"{0:020d}.json").write_text('{"commitInfo": {}}\n')
    (parquet / "part-0.parquet").parent.mkdir(parents=True)
    (parquet / "part-0.parquet").write_bytes(b"PAR1")
    first = dataclasses.replace(_started(None), version_before=None, location_was_empty=True)
    # built where nothing was: its first commit says so (read once, shared with its writes)
    assert _logged(dataclasses.replace(first, location=str(created))) == {str(created)}
    # a model whose build wrote no Delta log there: the locator asks, and skips it
    assert _logged(dataclasses.replace(first, location=str(parquet))) == set()
    # neither listed nor empty at the start (a listing that failed): not known
    unknown = dataclasses.replace(_started(str(created)), version_before=None)
    assert _logged(unknown) == set()
    assert _logged(None) == set()
    assert _logged(_started(None)) == set()
