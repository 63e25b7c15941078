"""Differential fuzz: tables written by Delta on Spark, delta-rs and Sail; our ops; Delta decides.

Hypothesis draws a table written by a random interleaving of the three writers, partition values
from a wide alphabet, some with column mapping (``tests.helpers.mixed_writers``), and one of our
ops: VACUUM (FULL, LITE or from an inventory report, zero retention), compaction, Z-order, purge
(each with or without the Delta session), log cleanup (every commit expired) or statistics. After
the op Delta 4.4 must read the very same rows (count and checksum, and filtered reads through
partition pruning, data skipping and its metadata-only count); a refusal (``MaintenanceError``)
must leave every file as it was; our VACUUM's dry run must select nothing Delta's own ``VACUUM ...
RETAIN 0 HOURS DRY RUN`` keeps, and its real run must delete what its dry run selected.

This is a fixed-seed sample sized for CI (``EXAMPLES`` per op, one test per op, a few minutes in
all); ``bench/fuzz_campaign.py`` runs the same property with thousands of examples. Tables the
writers themselves cannot make (``KNOWN_WRITER_FAILURES``: Sail re-spelling another writer's paths)
are counted as hypothesis events, not failures; any other writer failure fails the test, naming the
step.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.helpers.mixed_writers import (
    OPS,
    GenerationFailed,
    TableSpec,
    apply_steps,
    for_op,
    ops,
    run_op,
    tables,
)

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars, pytest.mark.slow]

#: Examples per op (each op is a test of its own: every op is exercised in every run).
EXAMPLES = int(os.environ.get("DIFFERENTIAL_FUZZ_EXAMPLES", "4"))
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@pytest.fixture(scope="module")
def fuzz_delta(delta_spark: Any) -> Iterator[Any]:
    """The Delta session with its retention check off (``RETAIN 0 HOURS``), for this module."""
    before = delta_spark.conf.get(RETENTION_CHECK, None)
    delta_spark.conf.set(RETENTION_CHECK, "false")
    yield delta_spark
    if before is None:
        delta_spark.conf.unset(RETENTION_CHECK)
    else:
        delta_spark.conf.set(RETENTION_CHECK, before)


@pytest.fixture(scope="module")
def table_paths(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh table location for every example."""
    root = tmp_path_factory.mktemp("differential-fuzz")
    return (root / f"t{n}" / "table" for n in itertools.count())


@pytest.mark.timeout(600)
@pytest.mark.parametrize("op_name", OPS)
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data(), spec=tables())
def test_our_ops_keep_what_delta_reads(
    fuzz_delta: Any,
    sail_spark: Any,
    table_paths: Iterator[Path],
    op_name: str,
    data: st.DataObject,
    spec: TableSpec,
) -> None:
    op = data.draw(ops(op_name), label="op")
    spec = for_op(spec, op)
    path = next(table_paths)
    path.parent.mkdir(parents=True)
    try:
        applied = apply_steps(spec, path, delta=fuzz_delta, sail=sail_spark)
    except GenerationFailed as err:
        if err.known is None:
            raise
        event(f"known writer failure: {err.known[:60]}")
        return
    for _index, step, _reason in applied.skipped:
        event(f"skipped: {step.engine} {step.action} (deletion vectors)")
    outcome = run_op(op, path, delta=fuzz_delta, rows_before=applied.rows)
    event(f"{op.name}: {outcome.status}" + (", changed the table" if outcome.changed else ""))
    for note in outcome.notes:
        event(f"note: {note[:80]}")
