"""Delta Lake's golden tables: every CLI op on every table is right or refused cleanly."""

from __future__ import annotations

import pytest

from scripts.compatibility import OPS, REPORT, render, run_matrix
from tests.helpers.paths import GOLDEN, require_shared

require_shared(GOLDEN)


@pytest.mark.slow
def test_every_op_on_every_golden_table(sail_spark) -> None:
    outcomes = run_matrix(GOLDEN, spark=sail_spark)
    by = {(o.table, o.op): o for o in outcomes}
    failing = [f"{o.table} / {o.op}: {o.violations}" for o in outcomes if o.violations]
    assert not failing, "\n".join(failing)
    assert {o.exit_code for o in outcomes} <= {0, 2}
    # deliberately broken or foreign tables: refused by every op, never guessed at
    for table in (
        "deltalog-invalid-protocol-version",
        "deltalog-state-reconstruction-without-protocol",
        "deltalog-state-reconstruction-without-metadata",
        "no-delta-log-folder",
    ):
        assert all(by[(table, op)].refused for op in OPS), table
    # tables with features VACUUM supports are vacuumed, with their rule
    for table in ("basic-with-vacuum-protocol-check-feature", "dv-with-columnmapping"):
        assert by[(table, "vacuum")].exit_code == 0, by[(table, "vacuum")].summary
    # OPTIMIZE on a deletion-vector table goes through Delta's writer now (no delta-rs refusal)
    assert by[("log-replay-dv-key-cases", "optimize")].exit_code == 0
    assert by[("snapshot-data3", "optimize")].exit_code == 0
    # a _delta_log deeper in a folder is found; a folder with none anywhere is not a table
    assert ("data-reader-date-types-Asia/Beirut", "health") in by
    assert by[("no-delta-log-folder", "health")].not_a_table
    assert not by[("data-reader-date-types-Asia/Beirut", "health")].not_a_table
    # part 1 of the page is this matrix (part 2, against Delta, is checked by tests/oracle)
    expected = render(outcomes)
    assert REPORT.read_text().startswith(expected), (
        "docs/compatibility.md is stale: run .venv/bin/python scripts/compatibility.py"
    )
