"""A local S3 API for tests: moto in server mode on 127.0.0.1, and a proxy that injects faults.

moto implements the S3 REST API (ListObjectsV2 pagination, DeleteObjects, conditional writes);
every client the ops use (boto3, pyarrow, delta-rs, Sail) talks HTTP to it as to AWS. The proxy
forwards to moto and answers some requests with ``503 SlowDown`` instead, as S3 does under load.
"""

from __future__ import annotations

import http.client
import logging
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


def start_moto() -> tuple[Any, str]:
    """Start moto's S3 server on a free port; (server, endpoint URL)."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


@dataclass
class FaultyProxy:
    """Forwards to ``upstream``; every ``every``-th request gets 503 SlowDown (0 = none).

    Attributes:
        upstream: moto's endpoint.
        every: Fail one request in this many.
        seen: Requests received.
        failed: Requests answered with 503.
    """

    upstream: str
    every: int = 0
    seen: int = 0
    failed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultyProxy:
        proxy = self
        host, port = self.upstream.removeprefix("http://").split(":")

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy._lock:
                    proxy.seen += 1
                    fail = proxy.every > 0 and proxy.seen % proxy.every == 0
                    proxy.failed += fail
                if fail:
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(SLOW_DOWN)))
                    self.end_headers()
                    self.wfile.write(SLOW_DOWN)
                    return
                upstream = http.client.HTTPConnection(host, int(port), timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


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
