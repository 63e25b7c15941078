"""``python -m python_ops jars fetch``: download the pinned Delta jars and check their sha256.

The pins are the package's lock file (``python_ops.delta_jars.pinned_jars``). Each jar comes
from a Maven repository over plain HTTPS (Maven Central, ``repo1``, unless told otherwise), or
through Maven itself (``mvn dependency:copy``, which honours ``~/.m2/settings.xml`` mirrors and
proxies). A file is written under a temporary name beside its destination and renamed only once
its sha256 matches the lock: a failed or tampered download never leaves a jar behind. A jar
already there with the right checksum is not fetched again.
"""

from __future__ import annotations

import enum
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from python_ops.delta_jars import JarPin, pinned_jars
from python_ops.errors import EngineError

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
REPOSITORY_ENV = "SPARKDELTA_MAVEN_REPOSITORY"
_CHUNK = 1 << 20


class FetchVia(enum.Enum):
    """How a missing jar is downloaded."""

    HTTPS = "https"
    MAVEN = "maven"


@dataclass(frozen=True)
class JarFetch:
    """What ``fetch_jars`` did with one jar."""

    coordinate: str
    path: str
    sha256: str
    fetched: bool  # False: it was already there with the right checksum
    source: str  # the URL or "maven" it came from; "" when it was already there


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in 1 MiB chunks."""
    import hashlib  # OpenSSL's library, about 5 MB: only when a jar is checked

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _download(url: str, into: Path, timeout_s: float) -> None:
    # imported here: the other commands load this module for its names only (ssl, http)
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response, into.open("wb") as out:
            shutil.copyfileobj(response, out, _CHUNK)
    except (urllib.error.URLError, OSError) as err:
        raise EngineError(f"could not download {url}: {err}") from err


def _maven_copy(pin: JarPin, into: Path) -> None:
    if shutil.which("mvn") is None:
        raise EngineError("Maven (mvn) is not installed: use --via https, or install Maven 3.8+")
    with tempfile.TemporaryDirectory(dir=into.parent) as folder:
        done = subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "dependency:copy",
                f"-Dartifact={pin.coordinate}",
                f"-DoutputDirectory={folder}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-5:])
            raise EngineError(f"Maven could not fetch {pin.coordinate}: {tail}")
        os.replace(Path(folder) / pin.file_name, into)


def _fetch_one(pin: JarPin, dest: Path, via: FetchVia, repository: str, timeout_s: float) -> str:
    """Download one jar to ``dest/<name>``, checked; returns where it came from."""
    target = dest / pin.file_name
    partial = dest / f".{pin.file_name}.part"
    source = "maven" if via is FetchVia.MAVEN else pin.url(repository)
    try:
        if via is FetchVia.MAVEN:
            _maven_copy(pin, partial)
        else:
            _download(source, partial, timeout_s)
        got = file_sha256(partial)
        if got != pin.sha256:
            raise EngineError(
                f"{pin.coordinate} from {source} has sha256 {got}, but the lock "
                f"(python_ops/delta_jars.lock) pins {pin.sha256}: not installed"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return source


def fetch_jars(
    dest: Path,
    *,
    via: FetchVia = FetchVia.HTTPS,
    repository: str | None = None,
    timeout_s: float = 120.0,
) -> list[JarFetch]:
    """Put every pinned jar in ``dest``, each checked against its sha256.

    Args:
        dest: The folder (created when missing).
        via: HTTPS from ``repository``, or Maven.
        repository: A Maven repository's base URL (default ``$SPARKDELTA_MAVEN_REPOSITORY``,
            else Maven Central).
        timeout_s: Seconds a download may stall.

    Returns:
        One record per jar, in the lock's order.

    Raises:
        EngineError: When a jar cannot be downloaded or its checksum differs from the lock
            (that jar is not written; jars already checked stay).
    """
    base = repository or os.environ.get(REPOSITORY_ENV) or MAVEN_CENTRAL
    dest.mkdir(parents=True, exist_ok=True)
    done = []
    for pin in pinned_jars():
        target = dest / pin.file_name
        if target.is_file() and file_sha256(target) == pin.sha256:
            done.append(JarFetch(pin.coordinate, str(target), pin.sha256, False, ""))
            continue
        target.unlink(missing_ok=True)  # a wrong file is never left for a session to load
        source = _fetch_one(pin, dest, via, base, timeout_s)
        done.append(JarFetch(pin.coordinate, str(target), pin.sha256, True, source))
    return done
