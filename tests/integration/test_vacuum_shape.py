"""VACUUM as options -> plan -> execute, and the due check's listing handed over explicitly.

Real Delta tables written by delta-rs on a local disk. The listing is counted by wrapping the
real ``list_visible`` (it still lists): the due check's evidence must spare the run its own
listing, once, and only for the snapshot version it was made against.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import python_ops.ops.vacuum.candidates as candidates
from python_ops.errors import ConfigError
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.candidates import KeptListing, ListingEvidence, Owned
from python_ops.ops.vacuum.execute import Deletion, execute
from python_ops.ops.vacuum.plan import VacuumPlan, plan_vacuum
from python_ops.ops.vacuum.rule.options import (
    CandidateSource,
    VacuumEngine,
    VacuumMode,
    VacuumOptions,
    checked_engine,
    checked_mode,
    vacuum_mode,
)
from python_ops.storage import open_storage
from tests.helpers.vacuum import age_everything, content, untracked

VACUUM_DIR = Path(__file__).resolve().parents[2] / "python_ops" / "ops" / "vacuum"


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A partitioned table with tombstones and two month-old untracked files."""
    path = tmp_path / "t"
    for i in range(2):
        batch = pa.table({"id": [i, i + 10], "p": ["0", "1"]})
        write_deltalake(str(path), batch, partition_by=["p"], mode="append")
    write_deltalake(
        str(path), pa.table({"id": [7], "p": ["0"]}), partition_by=["p"], mode="overwrite"
    )
    untracked(path, "p=0/stray-1.parquet")
    untracked(path, "p=1/stray-2.parquet")
    age_everything(path)
    return path


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roots of every real listing VACUUM makes from here on."""
    seen: list[str] = []
    real = candidates.list_visible

    def counted(storage: Any, **kwargs: Any) -> Any:
        seen.append(storage.root)
        return real(storage, **kwargs)

    monkeypatch.setattr(candidates, "list_visible", counted)
    return seen


def _due_check_plan(table: Path) -> VacuumPlan:
    options = VacuumOptions(retention_hours=24, allow_short_retention=True, keep_listing=True)
    return plan_vacuum(open_storage(str(table)), options=options)


def test_the_evidence_spares_the_run_its_listing_once(table: Path, listings: list[str]) -> None:
    before = content(table)
    plan = _due_check_plan(table)
    assert plan.source is CandidateSource.LISTING
    assert plan.listing is not None
    assert len(listings) == 1

    kw: dict[str, Any] = {"retention_hours": 24, "allow_short_retention": True}
    result = vacuum(str(table), dry_run=False, evidence=plan.listing, **kw)

    assert len(listings) == 1  # the run selected from the due check's listing
    assert result.files_deleted == len(plan.selected) >= 2
    assert not (table / "p=0" / "stray-1.parquet").exists()
    assert content(table) == before
    again = vacuum(str(table), dry_run=True, evidence=plan.listing, **kw)
    assert len(listings) == 2  # used once: the next run lists for itself
    assert again.files_found == 0


def test_a_commit_in_between_makes_the_run_list_again(table: Path, listings: list[str]) -> None:
    plan = _due_check_plan(table)
    write_deltalake(
        str(table), pa.table({"id": [8], "p": ["1"]}), partition_by=["p"], mode="append"
    )
    before = content(table)

    result = vacuum(
        str(table),
        dry_run=False,
        retention_hours=24,
        allow_short_retention=True,
        evidence=plan.listing,
    )

    assert len(listings) == 2  # the evidence was for the version before: listed again
    assert result.table_version == plan.table_version + 1
    assert not (table / "p=1" / "stray-2.parquet").exists()
    assert content(table) == before  # the new commit's file was protected, not deleted


def test_execute_takes_the_deleter_it_is_given(table: Path) -> None:
    options = VacuumOptions(retention_hours=24, allow_short_retention=True, dry_run=False)
    plan = plan_vacuum(open_storage(str(table)), options=options)
    given: list[VacuumPlan] = []

    def refusing(p: VacuumPlan, on_progress: Any) -> Deletion:  # deletes nothing, says so
        given.append(p)
        return Deletion(not_deleted=tuple(f.path for f in p.selected))

    result = execute(plan, deleter=refusing)

    assert len(given) == 1
    assert given[0] is plan
    assert result.files_deleted == 0
    assert result.delete_failures == len(plan.selected) > 0
    assert result.last_vacuum_version is None  # not everything deleted: no state recorded
    assert (table / "p=0" / "stray-1.parquet").exists()


def test_ownership_and_evidence_are_used_once() -> None:
    box = Owned([1, 2])
    assert box.take() == [1, 2]
    with pytest.raises(RuntimeError, match="given up"):
        box.take()
    evidence = ListingEvidence(("/t", 3, None), KeptListing(None, 5, 0))
    assert evidence.take(("/t", 4, None)) is None  # another version: not this listing's run
    kept = evidence.take(("/t", 3, None))
    assert kept is not None
    assert kept.files_listed == 5
    assert evidence.take(("/t", 3, None)) is None


def test_options_refuse_as_before() -> None:
    with pytest.raises(ConfigError, match="Choose one of: auto, full, lite"):
        vacuum_mode("turbo")
    assert vacuum_mode("auto") is VacuumMode.AUTO
    with pytest.raises(ConfigError, match="Choose one of: auto, in_process, spark"):
        checked_engine("gpu", spark=None, cluster=False)
    with pytest.raises(ConfigError, match="runs on a Spark session"):
        checked_engine("spark", spark=None, cluster=False)
    assert checked_engine("auto", spark=None, cluster=False) is VacuumEngine.AUTO
    with pytest.raises(ConfigError, match="inventory"):
        checked_mode("lite", inventory="/inv", cluster=False)
    assert checked_mode("auto", inventory="/inv", cluster=False) == "full"


def test_run_is_a_composition_and_the_functions_are_short() -> None:
    assert len((VACUUM_DIR / "run.py").read_text().splitlines()) < 80
    for path in sorted(VACUUM_DIR.glob("*.py")):  # every module of ops/vacuum, not only new ones
        name = path.name
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                assert lines <= 60, f"{name}:{node.name} is {lines} lines"
    assert not (VACUUM_DIR / "handoff.py").exists()
