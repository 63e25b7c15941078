"""Delta's own statistics recompute of a table, in a classic local Spark with Delta 4.4.

``python -m tests.helpers.delta_recompute <path>`` runs
``StatisticsCollection.recompute(spark, DeltaLog.forTable(spark, path), None)`` (the predicate
and file filter at their defaults: every file) with the session in UTC, as the statistics op's
oracle: Delta's ``COMPUTE STATS`` on the same files. Prints the version it committed.
"""

from __future__ import annotations

import sys

from python_ops.delta_jars import LOCAL_CONF, require_delta_jars, session_conf


def recompute(path: str) -> int:
    """Recompute every file's statistics of the table at ``path`` with Delta; its new version."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]").appName("Delta COMPUTE STATS oracle")
    conf = {**session_conf(require_delta_jars()), **LOCAL_CONF}
    conf["spark.sql.session.timeZone"] = "UTC"
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        jvm = spark._jvm
        log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
        package = jvm.org.apache.spark.sql.delta.stats
        stats = getattr(getattr(package, "StatisticsCollection$"), "MODULE$")
        stats.recompute(
            spark._jsparkSession,
            log,
            jvm.scala.Option.empty(),
            getattr(stats, "recompute$default$4")(),
            getattr(stats, "recompute$default$5")(),
        )
        return int(log.update(False, jvm.scala.Option.empty(), jvm.scala.Option.empty()).version())
    finally:
        spark.stop()


if __name__ == "__main__":
    print(recompute(sys.argv[1]))
