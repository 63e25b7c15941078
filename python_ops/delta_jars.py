"""Delta Lake's own engine on JVM Spark: where its jars are and how a session gets them.

The pinned jars are listed, with their sha256, in ``python_ops/delta_jars.lock`` (package data:
an installed package has it too). ``python -m python_ops jars fetch`` downloads them and checks
the checksums (``python_ops.jars_fetch``); the README's commands run it through
``scripts/fetch_delta_jars.sh`` into ``jars/`` of the checkout. A Spark started by this project
loads them with ``spark.jars`` (a session in this process) or ``--jars`` plus
``--driver-class-path`` (a server under ``spark-submit``); both delta-spark and delta-storage are
loaded the same way, else Delta's LogStore class is not found.

Where the jars are looked for (``jar_dirs``): ``$SPARKDELTA_DELTA_JARS`` alone when it is set;
else ``jars/`` of the source checkout this package runs from, then the per-user folder
(``$XDG_CACHE_HOME/sparkdelta/jars``, by default ``~/.cache/sparkdelta/jars``), which is where
``jars fetch`` puts them by default. Spark can also resolve them itself
(``spark.jars.packages``, as delta-spark's ``configure_spark_with_delta_pip`` does; see
``packages_conf``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from python_ops.errors import EngineError

JARS_ENV = "SPARKDELTA_DELTA_JARS"
LOCK_FILE = "delta_jars.lock"
FETCH_COMMAND = "python -m python_ops jars fetch"


@dataclass(frozen=True)
class JarPin:
    """One pinned jar: its Maven coordinate and the sha256 of its file."""

    coordinate: str
    sha256: str

    @property
    def file_name(self) -> str:
        """``artifact-version.jar``, the name Maven gives the file."""
        _group, artifact, version = self.coordinate.split(":")
        return f"{artifact}-{version}.jar"

    def url(self, repository: str) -> str:
        """Where the jar is in a Maven repository (``https://repo1.maven.org/maven2``)."""
        group, artifact, version = self.coordinate.split(":")
        path = "/".join([*group.split("."), artifact, version, self.file_name])
        return f"{repository.rstrip('/')}/{path}"


def parse_lock(text: str) -> tuple[JarPin, ...]:
    """The pins of a lock file's text: one ``sha256  group:artifact:version`` per line.

    Args:
        text: The lock file's content (``#`` comments and blank lines are skipped).

    Returns:
        The pins, in the file's order.

    Raises:
        EngineError: When a line is not a sha256 and a three-part coordinate.
    """
    pins = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        digest = fields[0].lower() if fields else ""
        valid_digest = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
        if len(fields) != 2 or not valid_digest or len(fields[1].split(":")) != 3:
            raise EngineError(f"{LOCK_FILE} line {number} is not 'sha256  group:artifact:version'")
        pins.append(JarPin(coordinate=fields[1], sha256=digest))
    return tuple(pins)


@cache
def pinned_jars() -> tuple[JarPin, ...]:
    """The jars of the package's lock file (``python_ops/delta_jars.lock``), delta-spark first."""
    return parse_lock(resources.files("python_ops").joinpath(LOCK_FILE).read_text())


#: The Delta release whose jars the project pins (for Spark 4.2, Scala 2.13).
DELTA_VERSION = pinned_jars()[0].coordinate.rsplit(":", 1)[1]
DELTA_ARTIFACTS = tuple(pin.coordinate for pin in pinned_jars())

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


def user_jars_dir() -> Path:
    """The per-user folder ``jars fetch`` uses by default: ``<cache>/sparkdelta/jars``."""
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "sparkdelta" / "jars"


def _checkout_jars_dir() -> Path | None:
    """``jars/`` of the source checkout this package runs from, or None when it is installed."""
    root = Path(__file__).resolve().parent.parent
    return root / "jars" if (root / "pyproject.toml").is_file() else None


def jar_dirs() -> list[Path]:
    """Where the jars are looked for, in order (``$SPARKDELTA_DELTA_JARS`` alone when set)."""
    configured = os.environ.get(JARS_ENV)
    if configured:
        return [Path(configured)]
    checkout = _checkout_jars_dir()
    return [*([checkout] if checkout else []), user_jars_dir()]


def find_delta_jars() -> list[str] | None:
    """The pinned Delta jars, from the first folder of ``jar_dirs`` that holds all of them.

    Returns:
        Absolute paths (delta-spark first), or None when no folder holds every jar.
    """
    for folder in jar_dirs():
        paths = [folder / pin.file_name for pin in pinned_jars()]
        if all(p.is_file() for p in paths):
            return [str(p.resolve()) for p in paths]
    return None


def missing_jars_hint() -> str:
    """How to get the jars: the command, and the setting that points elsewhere."""
    return (
        f"run `{FETCH_COMMAND}` (it checks their sha256), or set {JARS_ENV} to a folder with them"
    )


def require_delta_jars() -> list[str]:
    """The pinned Delta jars, or an error saying how to get them.

    Returns:
        Absolute paths of the jars.

    Raises:
        EngineError: When a jar is missing.
    """
    jars = find_delta_jars()
    if jars is None:
        where = " or ".join(str(d) for d in jar_dirs())
        raise EngineError(
            f"the Delta Lake jars ({', '.join(DELTA_ARTIFACTS)}) are not in {where}: "
            f"{missing_jars_hint()}."
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
