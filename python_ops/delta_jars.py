"""Delta Lake's own engine on JVM Spark: where its jars are and how a session gets them.

The project's setup (``scripts/fetch_delta_jars.sh``, run by both README commands) fetches the
pinned jars (``scripts/delta-jars.lock``) into ``jars/`` at the project root and checks their
checksums. A Spark started by this project loads them with ``spark.jars`` (a session in this
process) or ``--jars`` plus ``--driver-class-path`` (a server under ``spark-submit``); both
delta-spark and delta-storage are loaded the same way, else Delta's LogStore class is not found.

Users outside this repository can point ``SPARKDELTA_DELTA_JARS`` at a folder of the same jars,
or let Spark resolve them itself (``spark.jars.packages``, as delta-spark's
``configure_spark_with_delta_pip`` does; see ``packages_conf``).
"""

from __future__ import annotations

import os
from pathlib import Path

from python_ops.errors import EngineError

#: The Delta release whose jars the project pins (for Spark 4.2, Scala 2.13).
DELTA_VERSION = "4.4.0"
DELTA_ARTIFACTS = (
    f"io.delta:delta-spark_4.2_2.13:{DELTA_VERSION}",
    f"io.delta:delta-storage:{DELTA_VERSION}",
)
JARS_ENV = "SPARKDELTA_DELTA_JARS"

#: What makes a Spark session a Delta session: Delta's SQL and its catalog.
DELTA_SQL_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}

#: Sizes for a local Spark on a small machine. Spark's defaults plan for a cluster: 200 shuffle
#: partitions, 10,000 listing tasks in Delta's VACUUM, 50 partitions per Delta snapshot, each an
#: empty task here that costs milliseconds (a 4-statement smoke run: 224 s with the defaults).
LOCAL_CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.ui.showConsoleProgress": "false",
    "spark.ui.enabled": "false",
}


def _jar_names() -> list[str]:
    names = []
    for coordinate in DELTA_ARTIFACTS:
        _group, artifact, version = coordinate.split(":")
        names.append(f"{artifact}-{version}.jar")
    return names


def project_jars_dir() -> Path:
    """Where the project's setup puts the jars: ``$SPARKDELTA_DELTA_JARS`` or ``<root>/jars``."""
    configured = os.environ.get(JARS_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent.parent / "jars"


def find_delta_jars() -> list[str] | None:
    """The pinned Delta jars, when every one of them is in the jars folder.

    Returns:
        Absolute paths (delta-spark first), or None when any jar is missing.
    """
    folder = project_jars_dir()
    paths = [folder / name for name in _jar_names()]
    if all(p.is_file() for p in paths):
        return [str(p.resolve()) for p in paths]
    return None


def require_delta_jars() -> list[str]:
    """The pinned Delta jars, or an error saying how to get them.

    Returns:
        Absolute paths of the jars.

    Raises:
        EngineError: When a jar is missing.
    """
    jars = find_delta_jars()
    if jars is None:
        raise EngineError(
            f"the Delta Lake jars ({', '.join(DELTA_ARTIFACTS)}) are not in "
            f"{project_jars_dir()}. Run scripts/fetch_delta_jars.sh (the README's commands run "
            f"it), or set {JARS_ENV} to a folder that holds them."
        )
    return jars


def session_conf(jars: list[str]) -> dict[str, str]:
    """Settings for a Spark session in this process that loads Delta from ``jars``.

    Args:
        jars: Paths of the Delta jars.

    Returns:
        ``spark.jars`` plus Delta's SQL extension and catalog.
    """
    return {"spark.jars": ",".join(jars), **DELTA_SQL_CONF}


def packages_conf() -> dict[str, str]:
    """Settings that let Spark resolve the Delta jars from Maven itself (Ivy), no local files."""
    return {"spark.jars.packages": ",".join(DELTA_ARTIFACTS), **DELTA_SQL_CONF}


def spark_submit_args(jars: list[str]) -> list[str]:
    """``spark-submit`` arguments that give a driver (a server) Delta from ``jars``.

    The jars go on the driver's class path as well as ``--jars``: a Thrift server loads its
    session's classes from there.

    Args:
        jars: Paths of the Delta jars.

    Returns:
        The arguments, in order.
    """
    args = ["--jars", ",".join(jars), "--driver-class-path", os.pathsep.join(jars)]
    for key, value in DELTA_SQL_CONF.items():
        args += ["--conf", f"{key}={value}"]
    return args
