"""The child process of ``python_ops.delta.writing.local_writer``: local Spark with Delta 4.4.

Reads one JSON request per line on stdin and answers one JSON line on the original stdout
(everything else the JVM or Python prints goes to stderr). Requests: ``ping``, ``sql``
(``statement``: its rows as dicts) and ``checkpoint`` (``path``: Delta's
``DeltaLog.forTable(spark, path).checkpoint()``, the version checkpointed).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, session_conf


def _session() -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("python_ops local Delta writer")
    for key, value in {**session_conf(require_delta_jars()), **LOCAL_CONF}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _checkpoint(spark: Any, path: str) -> int:
    """Write the checkpoint files and ``_last_checkpoint``, and nothing else.

    ``DeltaLog.checkpoint`` is ``checkpointAndCleanUpDeltaLog``: after the checkpoint it
    deletes expired log files when ``delta.enableExpiredLogCleanup`` is on (measured with Delta
    4.4: commits 0-3 and their ``.crc`` gone). Log cleanup is our op's to do and to count, so
    only its first two steps run here (``writeCheckpointFiles``, ``writeLastCheckpointFile``).
    """
    jvm = spark._jvm
    none = jvm.scala.Option.empty()
    delta_log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
    snapshot = delta_log.update(False, none, none)
    info = delta_log.writeCheckpointFiles(snapshot, none)
    delta_log.writeLastCheckpointFile(delta_log, info, True)
    return int(snapshot.version())


def _java_text(java: Any) -> str:
    """``Class: message`` of a Java exception, and of its root cause when that differs."""
    text = str(java.toString())
    cause, seen = java.getCause(), 0
    root = None
    while cause is not None and seen < 20:  # a cycle-safe walk to the root cause
        root, cause, seen = cause, cause.getCause(), seen + 1
    if root is not None and str(root.toString()) not in text:
        text += f" (caused by {root.toString()})"
    return text


def error_text(err: BaseException) -> str:
    """What a failed request answers: the Java exception's own words, not only Py4J's wrapper.

    Py4J's ``Py4JJavaError`` reads "An error occurred while calling o46.writeCheckpointFiles."
    on its first line; the reason Delta gives is the Java exception it carries
    (``java_exception``), e.g. ``java.lang.IllegalStateException: ...``.

    Args:
        err: The exception a request raised.

    Returns:
        One line (at most 2,000 characters).
    """
    lines = str(err).strip().splitlines()
    text = lines[0] if lines else type(err).__name__
    java = getattr(err, "java_exception", None)
    if java is not None:
        with contextlib.suppress(Exception):  # the JVM is gone: the wrapper's words remain
            text = f"{text.rstrip('.')}: {_java_text(java)}"
    return " ".join(text.split())[:2000]


def _handle(spark: Any, request: dict[str, Any]) -> Any:
    op = request.get("op")
    if op == "ping":
        return "ok"
    if op == "sql":
        rows = spark.sql(request["statement"]).collect()
        return [row.asDict(recursive=True) for row in rows]
    if op == "checkpoint":
        return _checkpoint(spark, request["path"])
    raise ValueError(f"unknown request {op!r}")


def main() -> None:
    """Serve requests until stdin closes."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the JVM and Python print to fd 1: keep the answer channel clean
    sys.stdout = sys.stderr
    try:
        spark = _session()
    except Exception as err:  # report why Spark could not start, then exit
        answers.write(json.dumps({"error": f"Spark with Delta did not start: {err}"}) + "\n")
        answers.flush()
        return
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                answer = {"result": _handle(spark, json.loads(line))}
            except Exception as err:  # every failure is answered, the worker keeps serving
                answer = {"error": error_text(err)}
            answers.write(json.dumps(answer, default=str) + "\n")
            answers.flush()
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
