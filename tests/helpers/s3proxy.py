"""S3Proxy, a real S3 API server (Java, Maven Central ``org.gaul:s3proxy``), on 127.0.0.1.

The jar (``jar-with-dependencies``, pinned in ``scripts/test-jars.lock``) is fetched into
``jars/`` by ``scripts/fetch_test_jars.sh``, which the README's test command runs.
``S3PROXY_JAR`` names another copy. The server keeps its objects in memory (``transient-nio2``
backend) and checks AWS Signature V2/V4 with the test credentials every client here uses.

What it does differently from moto, measured: it ignores ``If-None-Match: *`` on
``PutObject`` (every backend of 2.6.0), so the ops' safe-commit probe refuses to commit there;
and it answers ``NotImplemented`` to the flexible checksums boto3 sends by default since 1.36
(``x-amz-checksum-crc32``), so its clients set ``AWS_REQUEST_CHECKSUM_CALCULATION=when_required``
(``s3proxy_environment``); boto3's ``DeleteObjects`` always sends one and is refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.s3 import free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[2]
S3PROXY_COORDINATE = "org.gaul:s3proxy:2.6.0:jar:jar-with-dependencies"
S3PROXY_JAR_NAME = "s3proxy-2.6.0-jar-with-dependencies.jar"
#: A test (or module, as ``pytestmark``) run on each server by the ``s3`` fixture.
ON_BOTH_SERVERS = pytest.mark.parametrize("s3_server", ["moto", "s3proxy"], indirect=True)
#: On S3Proxy only (the fault tests: a real server behind the fault proxy).
ON_S3PROXY = pytest.mark.parametrize("s3_server", ["s3proxy"], indirect=True)
CHECKSUMS_WHEN_REQUIRED = {
    "AWS_REQUEST_CHECKSUM_CALCULATION": "when_required",
    "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required",
}


def s3proxy_jar() -> Path:
    """Where the S3Proxy jar is: ``S3PROXY_JAR``, else ``jars/`` (or ``DELTA_JARS_DIR``)."""
    if os.environ.get("S3PROXY_JAR"):
        return Path(os.environ["S3PROXY_JAR"])
    jars = Path(os.environ.get("DELTA_JARS_DIR") or ROOT / "jars")
    return jars / S3PROXY_JAR_NAME


def java_missing() -> str | None:
    """Why S3Proxy cannot run here (no ``java`` on PATH), or None."""
    if shutil.which("java") is None:
        return "Java is absent (no `java` on PATH): S3Proxy, a Java server, cannot start"
    return None


def start_s3proxy(
    workdir: Path, *, backend: str = "transient-nio2", heap: str = "512m"
) -> tuple[subprocess.Popen[bytes], str]:
    """S3Proxy on a free port of 127.0.0.1; (process, endpoint URL).

    Args:
        workdir: A directory for its configuration and log (``s3proxy.log``), and its objects
            (``objects/``) with the ``filesystem-nio2`` backend.
        backend: ``transient-nio2`` (objects in the JVM's memory) or ``filesystem-nio2``.
        heap: The JVM's maximum heap.

    Raises:
        FileNotFoundError: When the jar is not there (run ``scripts/fetch_test_jars.sh``).
        RuntimeError: When it does not answer within 30 s.
    """
    jar = s3proxy_jar()
    if not jar.is_file():
        raise FileNotFoundError(
            f"{jar} is missing: scripts/fetch_test_jars.sh fetches {S3PROXY_COORDINATE}"
        )
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    config = workdir / "s3proxy.conf"
    config.write_text(
        f"s3proxy.endpoint={endpoint}\n"
        "s3proxy.authorization=aws-v2-or-v4\n"
        "s3proxy.identity=testing\n"
        "s3proxy.credential=testing\n"
        f"jclouds.provider={backend}\n"
        "jclouds.identity=testing\n"
        "jclouds.credential=testing\n"
        f"jclouds.filesystem.basedir={workdir / 'objects'}\n"
    )
    (workdir / "objects").mkdir(exist_ok=True)
    log = (workdir / "s3proxy.log").open("wb")
    # a small heap and the client compiler: it starts in about 2 s on a loaded machine
    command = ["java", f"-Xmx{heap}", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    command += ["-jar", str(jar), "--properties", str(config)]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    wait_until_up(endpoint, process, "/")
    return process, endpoint


def s3proxy_environment() -> dict[str, str]:
    """What a boto3 user sets besides the endpoint to talk to S3Proxy (see the module doc)."""
    return dict(CHECKSUMS_WHEN_REQUIRED)
