"""A VACUUM retention reads the same in every front end, exact, never "0 h" (issue 65 item 3).

``maintenance_vacuum_retention_hours: 0.01`` was "0 h" in the short-retention warning and the ops
table, "0.0 h" in ``vacuum_table``'s line and "0.01 h" elsewhere. VACUUM rounds a requested
retention to whole hours as Delta does (0.01 h deletes as 0 h would), and every front end now says
both, in one wording (``values.retention_text``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops.cli.render import vacuum_text
from python_ops.delta.table.recorded_retentions import unrecorded_short_retention_note
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum import vacuum
from python_ops.values import retention_text

SHORT = "0.01 h (rounded to 0 h, as Delta's VACUUM does)"


@pytest.mark.parametrize(
    ("hours", "applied", "text"),
    [
        (168, None, "168 h"),
        (168.0, 168.0, "168 h"),
        (0.01, None, "0.01 h"),
        (0.01, 0.0, SHORT),
        (1.5, 2.0, "1.5 h (rounded to 2 h, as Delta's VACUUM does)"),
        (0, None, "0 h"),
        (1e-13, None, "1e-13 h"),  # never a bare 0 for a retention above 0
    ],
)
def test_a_retention_is_worded_exactly(hours: float, applied: float | None, text: str) -> None:
    assert retention_text(hours, applied=applied) == text


def _rewritten_table(path: Path) -> Path:
    for i in range(3):  # each overwrite removes the previous file: VACUUM has work
        write_deltalake(str(path), pa.table({"id": [i]}), mode="overwrite")
    return path


def test_every_front_end_words_a_short_retention_alike(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from dbt.adapters.sparkdelta.impl import SparkDeltaAdapter

    table = _rewritten_table(tmp_path / "t")
    settings = {
        "maintenance_vacuum_retention_hours": 0.01,
        "maintenance_vacuum_allow_short_retention": True,
    }
    model = ModelTarget("m", str(table), parse_config("m", settings))
    with caplog.at_level(logging.WARNING, logger="python_ops.ops.vacuum"):
        run = Maintainer(spark=None, history=None, invocation=Invocation("unit")).maintain([model])
    warning = next(r.getMessage() for r in caplog.records if "below" in r.getMessage())
    assert warning == (
        f"vacuum m: retention {SHORT} is below the table's minimum 168 h; allowed by "
        "maintenance_vacuum_allow_short_retention"
    )
    outcome = next(o for o in run.outcomes if o.op == "vacuum")  # the post-hook's words
    assert outcome.detail == f"2 removed file(s) older than the {SHORT} retention"
    assert f"older than the {SHORT} retention" in run.table()  # the run-operations' table
    # the CLI's VACUUM and vacuum_table's line (the adapter's words for the macro)
    result = vacuum(
        str(_rewritten_table(tmp_path / "u")),
        retention_hours=0.01,
        allow_short_retention=True,
        audit=False,
    )
    assert f"  retention {SHORT}: " in vacuum_text(result, policy="requested")
    row = result.to_dict(include_paths=False)
    adapter_words = SparkDeltaAdapter.retention_text(
        None,  # the method uses no adapter state
        row["retention_hours"],
        row["retention_requested_hours"],
    )
    assert adapter_words == SHORT
    assert unrecorded_short_retention_note(0.01).startswith("VACUUM retention 0.01 h is not")
