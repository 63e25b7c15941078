"""The adapter's materializations are dbt-spark's, plus the config check (and clustering sync).

They are copies (a wrapper breaks Python models: dbt runs a Python job only when the
materialization itself calls ``statement()``), so this test fails when the installed dbt-spark's
materializations change and the copies must follow.
"""

from __future__ import annotations

import re
from pathlib import Path

import dbt.include.spark as spark_include
import pytest

OURS = Path(__file__).resolve().parents[2] / "dbt/include/sparkdelta/macros/materializations"
THEIRS = Path(spark_include.__file__).parent / "macros" / "materializations"
CHECK = "{%- do adapter.validate_maintenance_config(model, var('maintenance_post_hook', true)) -%}"
# incremental only: before a merge, the table's liquid clustering follows the model's config
SYNC = (
    "{#-- sparkdelta: clustering columns changed in the model's config -> ALTER TABLE CLUSTER BY "
    "--#}",
    "{%- do sparkdelta_sync_clustering(existing_relation) -%}",
)


def _materialization(text: str) -> list[str]:
    """The materialization block, one stripped line each, the adapter name normalised."""
    end = re.search(r"\{%-?\s*endmaterialization", text)
    assert end is not None
    block = text[text.index("{% materialization") : end.start()]
    block = re.sub(r"adapter\s*=\s*'\w+'", "adapter='?'", block)
    return [line.strip() for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("table.sql", "table.sql"),
        ("incremental.sql", "incremental/incremental.sql"),
        ("snapshot.sql", "snapshot.sql"),
    ],
)
def test_copy_is_dbt_spark_s_materialization_plus_the_config_check(ours: str, theirs: str) -> None:
    copy = _materialization((OURS / ours).read_text())
    assert copy[1] == CHECK  # first, before any hook or SQL
    copy = copy[:1] + copy[2:]
    if ours == "incremental.sql":
        at = copy.index(SYNC[0])
        assert tuple(copy[at : at + 2]) == SYNC
        assert "process_schema_changes" in copy[at - 1]  # after the schema sync, before the merge
        copy = copy[:at] + copy[at + 2 :]
    assert copy == _materialization((THEIRS / theirs).read_text())
