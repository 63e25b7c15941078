"""A fault-injecting proxy in front of a real S3 server, and the log of what it did.

``FaultProxy(upstream).start()`` runs ``python -m tests.helpers.s3_faults <upstream> <port>``:
a proxy on 127.0.0.1 that forwards every request to the S3 server, except that rules (set
with ``faults(...)``) answer some requests with a fault, as S3 does under load or on a bad
network:

- ``slowdown``: ``503 SlowDown``, not forwarded.
- ``internal``: ``500 InternalError``, not forwarded.
- ``forbidden``: ``403 AccessDenied``, not forwarded.
- ``reset``: forwarded (the store does the work), then the answer's headers and half its body
  are sent and the connection is reset (RST): the answer is lost mid-body.
- ``partial``: a ``DeleteObjects`` whose ``200`` lists some keys under ``<Error>`` (every
  ``every_key``-th key from the first, with ``code``); only the other keys are deleted in the
  store (one ``DeleteObject`` each, by the proxy's own client). ``codes`` (a list) gives the
  failed keys their codes in turn.

A rule applies to requests of one operation (``op``: ``GetObject``, ``ListObjectsV2``,
``PutObject``, ``DeleteObjects``, ``HeadObject``, ``DeleteObject``; None: any) from one kind of
client (``client``: ``signed`` for the ops' own plain requests, ``boto3``, ``delta-rs``; None:
any), skips the first ``skip`` such requests and faults the next ``times`` (-1: all). Every
request is logged (operation, client, path, fault, status): tests count attempts from it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from tests.helpers.s3 import free_port, wait_until_up

XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/"
ERRORS = {
    "slowdown": (503, "SlowDown", "Please reduce your request rate."),
    "internal": (500, "InternalError", "We encountered an internal error. Please try again."),
    "forbidden": (403, "AccessDenied", "Access Denied"),
}


def error_body(code: str, message: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
        f"<Message>{message}</Message></Error>"
    ).encode()


def operation(method: str, path: str) -> str:
    """The S3 operation of a path-style request (``Other`` for what the rules do not name)."""
    parsed = urllib.parse.urlsplit(path)
    parts = parsed.path.lstrip("/").split("/", 1)
    has_key = len(parts) > 1 and bool(parts[1])
    query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
    if method == "POST" and "delete" in query:
        return "DeleteObjects"
    if not has_key:
        if method == "GET" and parts[0]:
            return "ListObjectsV2" if query.get("list-type") == ["2"] else "ListObjects"
        return "Other"
    names = {"GET": "GetObject", "PUT": "PutObject", "HEAD": "HeadObject"}
    return names.get(method, "DeleteObject" if method == "DELETE" else "Other")


def client_kind(user_agent: str) -> str:
    """Which client sent a request, by its ``User-Agent`` (the ops' plain requests send none)."""
    agent = user_agent.lower()
    if "botocore" in agent or "boto3" in agent:
        return "boto3"
    if "object_store" in agent or "delta-rs" in agent:
        return "delta-rs"
    return "signed" if not agent else "other"


class FaultProxy:
    """The proxy process in front of ``upstream`` (see the module doc)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> FaultProxy:
        command = [sys.executable, "-m", "tests.helpers.s3_faults", self.upstream, str(self.port)]
        self._process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2])
        wait_until_up(self.endpoint, self._process, "/__faults")
        return self

    def faults(self, *rules: dict[str, Any]) -> None:
        """Replace the rules (none: forward everything) and empty the log."""
        request = urllib.request.Request(
            self.endpoint + "/__faults", data=json.dumps(list(rules)).encode(), method="POST"
        )
        urllib.request.urlopen(request, timeout=5).read()

    def log(self) -> list[dict[str, Any]]:
        """Every request since the rules were set: op, client, path, fault ("" if none)."""
        with urllib.request.urlopen(self.endpoint + "/__faults", timeout=5) as response:
            entries: list[dict[str, Any]] = json.loads(response.read())
            return entries

    def count(self, op: str, *, fault: str | None = None) -> int:
        """Requests of ``op`` in the log (only those given ``fault``, when named)."""
        return sum(
            1 for e in self.log() if e["op"] == op and (fault is None or e["fault"] == fault)
        )

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


class _Rules:
    """The rules and the log, shared by the proxy's handler threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rules: list[dict[str, Any]] = []
        self.seen: list[int] = []
        self.log: list[dict[str, Any]] = []

    def set(self, rules: list[dict[str, Any]]) -> None:
        with self.lock:
            self.rules, self.seen, self.log = rules, [0] * len(rules), []

    def pick(self, op: str, client: str, path: str) -> tuple[dict[str, Any] | None, int]:
        """The rule that faults this request (or None), and the request's log index."""
        with self.lock:
            chosen = None
            for i, rule in enumerate(self.rules):
                if rule.get("op") not in (None, op) or rule.get("client") not in (None, client):
                    continue
                n = self.seen[i]
                self.seen[i] += 1
                skip, times = rule.get("skip", 0), rule.get("times", 1)
                if chosen is None and n >= skip and (times < 0 or n < skip + times):
                    chosen = rule
            fault = chosen["fault"] if chosen else ""
            self.log.append({"op": op, "client": client, "path": path, "fault": fault})
            return chosen, len(self.log) - 1

    def status(self, index: int, status: int) -> None:
        with self.lock:
            self.log[index]["status"] = status


def serve(upstream: str, port: int) -> None:
    """Run the proxy (the body of the ``FaultProxy`` process)."""
    import http.client

    import boto3

    host, upstream_port = upstream.removeprefix("http://").split(":")
    state = _Rules()
    own = boto3.client(  # deletes the keys a partial DeleteObjects did delete
        "s3",
        endpoint_url=upstream,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:
            pass

        def finish(self) -> None:
            with contextlib.suppress(OSError, ValueError):  # a connection this proxy reset
                super().finish()

        def _reply(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
            self.send_response(status)
            for key, value in headers:
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _reset(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
            """Send the headers and half the body, then reset the connection."""
            if body and self.command != "HEAD":
                self.send_response(status)
                for key, value in headers:
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True

        def _body(self) -> bytes | None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else None

        def _upstream(self, body: bytes | None) -> tuple[int, bytes, list[tuple[str, str]]]:
            connection = http.client.HTTPConnection(host, int(upstream_port), timeout=120)
            dropped = ("connection", "transfer-encoding")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            answer = response.status, response.read(), response.getheaders()
            connection.close()
            return answer

        def _partial(self, rule: dict[str, Any], body: bytes) -> tuple[int, bytes]:
            """Delete some of the keys; report the others under ``<Error>``."""
            bucket = urllib.parse.unquote(self.path.lstrip("/").split("?")[0].split("/")[0])
            request = ElementTree.fromstring(body)
            keys = [e.text or "" for e in request.iter(f"{{{XMLNS}}}Key")]
            if not keys:  # a body without the namespace
                keys = [e.text or "" for e in request.iter("Key")]
            quiet = any((e.text or "").lower() == "true" for e in request.iter(f"{{{XMLNS}}}Quiet"))
            every = int(rule.get("every_key", 2))
            codes = rule.get("codes") or [rule.get("code", "AccessDenied")]
            parts = []
            for i, key in enumerate(keys):
                text = key.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                if i % every == 0:
                    code = codes[(i // every) % len(codes)]
                    parts.append(
                        f"<Error><Key>{text}</Key><Code>{code}</Code>"
                        f"<Message>injected</Message></Error>"
                    )
                    continue
                own.delete_object(Bucket=bucket, Key=key)
                if not quiet:
                    parts.append(f"<Deleted><Key>{text}</Key></Deleted>")
            answer = f'<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="{XMLNS}">'
            return 200, (answer + "".join(parts) + "</DeleteResult>").encode()

        def _forward(self) -> None:
            if self.path == "/__faults":
                if self.command == "POST":
                    state.set(json.loads(self._body() or b"[]"))
                    self._reply(200, b"{}", [("Content-Type", "application/json")])
                else:
                    with state.lock:
                        answer = json.dumps(state.log).encode()
                    self._reply(200, answer, [("Content-Type", "application/json")])
                return
            body = self._body()
            op = operation(self.command, self.path)
            rule, index = state.pick(op, client_kind(self.headers.get("User-Agent", "")), self.path)
            fault = rule["fault"] if rule else ""
            xml = [("Content-Type", "application/xml")]
            if fault in ERRORS:
                status, code, message = ERRORS[fault]
                state.status(index, status)
                self._reply(status, error_body(code, message), xml)
                return
            if fault == "partial" and op == "DeleteObjects" and body and rule:
                status, answer = self._partial(rule, body)
                state.status(index, status)
                self._reply(status, answer, xml)
                return
            status, answer, headers = self._upstream(body)
            state.status(index, status)
            if fault == "reset":
                self._reset(status, answer, headers)
                return
            self._reply(status, answer, headers)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
