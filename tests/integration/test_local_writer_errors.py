"""An error of Delta's own writer reaches the user with the Java exception's words.

Py4J wraps every Java exception as "An error occurred while calling o46.writeCheckpointFiles.";
what Delta says went wrong is the Java exception it carries. A real local Delta writer (classic
Spark with the project's Delta jars, in its child process) is asked to checkpoint a table whose
log has a gap (commit 1 is missing).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops.delta.writing.local_writer import LocalDelta
from python_ops.errors import EngineError

pytestmark = [pytest.mark.slow, pytest.mark.classic_spark, pytest.mark.delta_jars]


def test_a_failed_checkpoint_names_the_java_exception(tmp_path: Path) -> None:
    table = tmp_path / "events"
    for batch in range(3):
        write_deltalake(str(table), pa.table({"id": pa.array([batch], pa.int64())}), mode="append")
    (table / "_delta_log" / f"{1:020d}.json").unlink()  # a gap: versions 0 and 2 only
    writer = LocalDelta()
    try:
        with pytest.raises(EngineError) as raised:
            writer.checkpoint(str(table))
    finally:
        writer.stop()
    message = str(raised.value)
    # Py4J's wrapper, then the Java exception: its class and Delta's own message
    wrapper = r"An error occurred while calling [\w:.$]+: [\w.$]+(Exception|Error): "
    assert re.search(wrapper, message), message
    assert "DELTA_VERSIONS_NOT_CONTIGUOUS" in message
