"""A local S3 API for tests: moto in server mode on 127.0.0.1, and a proxy that injects faults.

Both run as their own processes (``python -m tests.helpers.s3 <upstream> <port> <every>
<delay_ms> <strip_conditional>`` is the proxy).

moto implements the S3 REST API (ListObjectsV2 pagination, DeleteObjects, conditional writes);
every client the ops use (boto3, pyarrow, delta-rs, Sail) talks HTTP to it as to AWS. The proxy
forwards to moto and answers some requests with ``503 SlowDown`` instead, as S3 does under load.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_up(endpoint: str, process: subprocess.Popen[bytes], path: str = "/") -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{endpoint} exited with {process.returncode}")
        try:
            urllib.request.urlopen(endpoint + path, timeout=1).read()
            return
        except urllib.error.HTTPError:
            return  # answering
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{endpoint} did not come up in 30 s")


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    """moto's S3 server in its own process on a free port; (process, endpoint URL).

    Its own process, not a thread: a Rust client (Sail, delta-rs) that blocks while holding
    the GIL would otherwise starve an in-process server.
    """
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    wait_until_up(endpoint, process, "/moto-api/")
    return process, endpoint


class FaultyProxy:
    """A proxy process in front of ``upstream``; every ``every``-th request gets 503 SlowDown.

    Args:
        upstream: moto's endpoint.
        every: Fail one request in this many (0 = none).
        delay_ms: Added latency per request (as a far-away S3 region would have).
        strip_conditional: Drop ``If-None-Match`` headers, as stores without conditional
            writes ignore them.
    """

    def __init__(
        self, upstream: str, *, every: int = 0, delay_ms: float = 0, strip_conditional: bool = False
    ) -> None:
        self.upstream, self.every, self.delay_ms = upstream, every, delay_ms
        self.strip_conditional = strip_conditional
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> FaultyProxy:
        command = [sys.executable, "-m", "tests.helpers.s3", self.upstream, str(self.port)]
        command += [str(self.every), str(self.delay_ms), str(int(self.strip_conditional))]
        self._process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2])
        wait_until_up(self.endpoint, self._process, "/__proxy_stats")
        return self

    def stats(self) -> dict[str, Any]:
        """Requests seen and failed, by HTTP method; LIST requests by bucket and prefix.

        ``lists`` maps ``<bucket>/<prefix>`` to the number of ListObjects(V2) requests made
        with that prefix (``<bucket>/`` for none).
        """
        with urllib.request.urlopen(self.endpoint + "/__proxy_stats", timeout=5) as response:
            stats: dict[str, Any] = json.loads(response.read())
            return stats

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)


def list_prefix(method: str, path: str) -> str | None:
    """``<bucket>/<prefix>`` of a ListObjects(V2) request (path-style), None for other requests.

    A LIST is a GET on the bucket itself (no key in the path) without a sub-resource other than
    listing parameters (``?location``, ``?versioning``... are not listings).
    """
    if method != "GET":
        return None
    parsed = urllib.parse.urlsplit(path)
    parts = parsed.path.lstrip("/").split("/", 1)
    if not parts[0] or (len(parts) > 1 and parts[1]):
        return None  # the service (ListBuckets) or an object
    query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
    listing = {"list-type", "prefix", "delimiter", "continuation-token", "start-after", "marker"}
    if query and not set(query) & listing:
        return None  # e.g. GetBucketLocation
    if set(query) - listing - {"max-keys", "encoding-type", "fetch-owner"}:
        return None
    return f"{urllib.parse.unquote(parts[0])}/{query.get('prefix', [''])[0]}"


def serve_proxy(
    upstream: str, port: int, every: int, delay_ms: float, strip_conditional: bool = False
) -> None:
    """Run the fault-injecting proxy (the body of the ``FaultyProxy`` process)."""
    host, upstream_port = upstream.removeprefix("http://").split(":")
    lock = threading.Lock()
    stats: dict[str, Any] = {"seen": 0, "failed": 0, "by_method": {}, "lists": {}}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body go out as two writes: with Nagle's algorithm the body waits
        # for the client's delayed ACK of the headers (about 40 ms per small response here).
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
            self.send_response(status)
            for key, value in headers:
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _body(self) -> bytes | None:
            """The request body: by Content-Length, or chunked (the AWS C++ SDK's uploads)."""
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()  # the CRLF after each chunk
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else None

        def _forward(self) -> None:
            if self.path == "/__proxy_stats":
                with lock:
                    body = json.dumps(stats).encode()
                self._reply(200, body, [("Content-Type", "application/json")])
                return
            body = self._body()
            with lock:
                stats["seen"] += 1
                methods = stats["by_method"]
                methods[self.command] = methods.get(self.command, 0) + 1
                fail = every > 0 and stats["seen"] % every == 0
                listed = list_prefix(self.command, self.path)
                if listed is not None:
                    stats["lists"][listed] = stats["lists"].get(listed, 0) + 1
                stats["failed"] += fail
            if delay_ms:
                time.sleep(delay_ms / 1000)
            if fail:
                self._reply(503, SLOW_DOWN, [("Content-Type", "application/xml")])
                return
            connection = http.client.HTTPConnection(host, int(upstream_port), timeout=120)
            dropped = ("connection", "transfer-encoding")  # the body goes on with its length
            dropped += ("if-none-match",) if strip_conditional else ()
            headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            self._reply(response.status, response.read(), response.getheaders())
            connection.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


@dataclass(frozen=True)
class S3Bucket:
    """A fresh bucket on the local S3 server, with the environment pointing at it."""

    endpoint: str
    bucket: str
    client: Any

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def upload_tree(self, source: Path, key: str) -> str:
        """Copy a local directory to ``key`` (files only, like a sync); return its URI."""
        for path in sorted(source.rglob("*")):
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(source).as_posix()
                self.client.put_object(
                    Bucket=self.bucket, Key=f"{key}/{rel}", Body=path.read_bytes()
                )
        return self.uri(key)

    def put(self, key: str, body: bytes = b"x" * 100) -> None:
        self.client.put_object(Bucket=self.bucket, Key=key, Body=body)

    def keys(self, prefix: str = "") -> set[str]:
        out: set[str] = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        ):
            out |= {o["Key"] for o in page.get("Contents", [])}
        return out


def new_bucket(endpoint: str) -> S3Bucket:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    bucket = f"lake-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    return S3Bucket(endpoint, bucket, client)


def s3_environment(endpoint: str) -> dict[str, str]:
    """What a user sets to reach an S3-compatible endpoint (test credentials)."""
    return {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def delta_options(endpoint: str) -> dict[str, str]:
    env = s3_environment(endpoint)
    env.pop("AWS_EC2_METADATA_DISABLED")
    return env


if __name__ == "__main__":
    serve_proxy(
        sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1"
    )
