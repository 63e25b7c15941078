"""S3 reads and deletes (GetObject, ListObjectsV2, DeleteObjects) as signed plain HTTP requests.

``import boto3`` and one client cost a process about 0.45-0.65 s of CPU and 38 MB here: more
than VACUUM LITE's whole work on a big table's log, which needs nothing from S3 but a listing
of ``_delta_log/``, a few GETs and, in a real run, a ``DeleteObjects`` per 1,000 files.
``SignedRequests`` makes those requests itself: Signature Version 4 (``sign``, checked against
botocore's signer in the tests), ``http.client``, one connection per thread, pages parsed by
``s3_pages.parse_page``.

A request that fails for a transient reason (a failed or broken connection, 500/502/503/504,
throttling) is sent again as the AWS SDKs' standard retry mode does (``s3_retry``: 3 attempts,
exponential backoff with full jitter); when every attempt failed so, ``Unanswered`` says so
(``retried``) and ``S3Storage`` reports the failure (boto3 would only repeat the same
attempts). Any other answer (an error status, a redirect to another region, a body it does not
know) raises ``Unanswered`` at once, and ``S3Storage`` repeats that request with boto3, which
has the redirects and the error messages. Every request it makes may be repeated: reads, whole
object writes, and deletes of keys (deleting a key that is gone is a success).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from python_ops.storage.base import arrow_copy, read_into_arrow
from python_ops.storage.s3_pages import parse_page
from python_ops.storage.s3_retry import RetryPolicy, error_code, transient
from python_ops.storage.settings import S3Settings

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_TIMEOUT_S = 60.0


class Unanswered(Exception):
    """A request this client leaves to boto3 (an error status, a redirect, a failed connection).

    Args:
        reason: What happened (no request details, no credentials).
        token: For a listing, the continuation token of the page that was not answered (None:
            the first page), where boto3 goes on.
        lasting: The store answered so (a status, a page this client cannot parse, a failed
            connection): later requests would fare alike. False for a request this client
            cannot make (a listing parameter it does not know).
        retried: Every attempt the retry policy allows failed for a transient reason
            (connection, 5xx, throttling): the request is not to be repeated by another client.
    """

    def __init__(
        self,
        reason: str,
        token: str | None = None,
        *,
        lasting: bool = True,
        retried: bool = False,
    ) -> None:
        super().__init__(reason)
        self.token = token
        self.lasting = lasting
        self.retried = retried


def _uri_encode(text: str, *, keep_slash: bool) -> str:
    return quote(text, safe="/-_.~" if keep_slash else "-_.~")


def sign(
    *,
    method: str,
    host: str,
    path: str,
    query: Mapping[str, str],
    settings: S3Settings,
    region: str,
    now: datetime.datetime,
    payload_sha256: str = EMPTY_SHA256,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The headers of an AWS Signature Version 4 request to S3.

    Args:
        method: HTTP method.
        host: The ``Host`` header (with the port when not the scheme's default).
        path: The request path, not yet URI-encoded (``/bucket/key`` or ``/key``).
        query: Query parameters, not yet encoded.
        settings: Credentials (access key, secret key, optional session token).
        region: The signing region.
        now: The request time (UTC).
        payload_sha256: The hex SHA-256 of the body (the empty body's by default).
        extra: More headers to send and sign (lower-case names), e.g. ``content-md5``.

    Returns:
        ``Host``, ``x-amz-date``, ``x-amz-content-sha256``, ``x-amz-security-token`` (with a
        session token), the ``extra`` headers and ``Authorization``.
    """
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    headers = {
        **(extra or {}),
        "host": host,
        "x-amz-content-sha256": payload_sha256,
        "x-amz-date": amz_date,
    }
    if settings.session_token:
        headers["x-amz-security-token"] = settings.session_token
    names = sorted(headers)
    canonical_query = "&".join(
        f"{_uri_encode(k, keep_slash=False)}={_uri_encode(v, keep_slash=False)}"
        for k, v in sorted(query.items())
    )
    canonical = "\n".join(
        [
            method,
            _uri_encode(path, keep_slash=True),
            canonical_query,
            "".join(f"{n}:{headers[n].strip()}\n" for n in names),
            ";".join(names),
            payload_sha256,
        ]
    )
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{settings.secret_access_key}".encode()
    for part in (day, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={settings.access_key_id}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return headers


class SignedRequests:
    """GetObject, ListObjectsV2, PutObject and DeleteObjects over signed HTTP, on one bucket.

    Args:
        settings: Connection settings with credentials.
        bucket: The bucket.
        count: Called with the operation name (``GetObject``, ``ListObjectsV2``,
            ``PutObject``, ``DeleteObjects``) per request (each attempt counts).
        retry: Attempts and backoff for transient failures (default: the SDKs' standard mode).

    HTTPS verifies the server against ``AWS_CA_BUNDLE`` when set (as boto3 does), else against
    the system's certificates; a failed verification is left to boto3 like any failure.
    """

    def __init__(
        self,
        settings: S3Settings,
        bucket: str,
        *,
        count: Callable[[str], None],
        retry: RetryPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.retry = retry or RetryPolicy.standard()
        self.bucket = bucket
        self.region = settings.region or "us-east-1"
        self._count = count
        if settings.endpoint_url:  # an S3-compatible store: path-style addressing
            parts = urlsplit(settings.endpoint_url)
            self.https = parts.scheme != "http"
            self.host = parts.netloc
            self._base = parts.path.rstrip("/") + f"/{bucket}"
        else:  # AWS: virtual-hosted style, path style for bucket names with dots
            self.https = True
            regional = f"s3.{self.region}.amazonaws.com"
            dotted = "." in bucket
            self.host = regional if dotted else f"{bucket}.{regional}"
            self._base = f"/{bucket}" if dotted else ""
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            if self.https:
                import ssl

                context = ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE") or None)
                connection = http.client.HTTPSConnection(
                    self.host, timeout=_TIMEOUT_S, context=context
                )
            else:
                connection = http.client.HTTPConnection(self.host, timeout=_TIMEOUT_S)
            self._local.connection = connection
        return connection

    def _send(
        self,
        method: str,
        operation: str,
        key: str,
        query: Mapping[str, str],
        body: bytes = b"",
        extra: Mapping[str, str] | None = None,
        *,
        arrow: bool = False,
    ) -> tuple[int, Any]:
        """One signed request, sent again after a transient failure (``retry``); (status, body).

        With ``arrow``, a 200's body with a length is read straight into a ``pyarrow.Buffer``.
        """
        path = f"{self._base}/{key}" if key else f"{self._base}/"
        headers = sign(
            method=method,
            host=self.host,
            path=path,
            query=query,
            settings=self.settings,
            region=self.region,
            now=datetime.datetime.now(datetime.UTC),
            payload_sha256=hashlib.sha256(body).hexdigest() if body else EMPTY_SHA256,
            extra=extra,
        )
        target = _uri_encode(path, keep_slash=True)
        if query:
            target += "?" + "&".join(
                f"{_uri_encode(k, keep_slash=False)}={_uri_encode(v, keep_slash=False)}"
                for k, v in query.items()
            )
        reason = ""
        for attempt in range(1, self.retry.max_attempts + 1):
            if attempt > 1:
                self.retry.wait(attempt - 1)
            try:
                status, answer = self._exchange(method, operation, target, body, headers, arrow)
            except Unanswered as err:  # no answer (refused, reset, cut short): transient
                reason = str(err)
                continue
            code = error_code(answer) if status != 200 and isinstance(answer, bytes) else ""
            if not transient(status, code):
                return status, answer
            reason = f"{operation}: HTTP {status}" + (f" {code}" if code else "")
        attempts = self.retry.max_attempts
        raise Unanswered(f"{reason} ({attempts} attempts)", retried=True)

    def _exchange(
        self,
        method: str,
        operation: str,
        target: str,
        body: bytes,
        headers: Mapping[str, str],
        arrow: bool,
    ) -> tuple[int, Any]:
        """One attempt: the request and its whole answer; (status, body).

        Raises:
            Unanswered: When no whole answer came (the connection failed, was reset, or the
                body was cut short).
        """
        while True:  # twice at most: a retry is on a new connection, never reused
            reused = getattr(self._local, "connection", None) is not None
            connection = self._connection()
            self._count(operation)
            answered = False
            try:
                connection.request(method, target, body=body or None, headers=dict(headers))
                response = connection.getresponse()
                answered = True
                length = response.getheader("content-length")
                if arrow and response.status == 200 and length is not None:
                    answer = read_into_arrow(response, int(length))
                else:
                    answer = response.read()
            except (OSError, http.client.HTTPException) as err:
                connection.close()
                self._local.connection = None
                # a kept-alive connection the server closed while idle (no answer began): once
                # more on a new one, not counted as an attempt
                stale = isinstance(err, ConnectionError | http.client.RemoteDisconnected)
                if reused and stale and not answered:
                    continue
                raise Unanswered(f"{operation}: {type(err).__name__}") from err
            if response.getheader("connection", "").lower() == "close":
                connection.close()
                self._local.connection = None
            return response.status, answer

    def get_object(self, key: str) -> bytes:
        """One object's bytes.

        Args:
            key: The object's key.

        Returns:
            The body.

        Raises:
            FileNotFoundError: When the key does not exist (404).
            Unanswered: For any other answer but 200.
        """
        status, body = self._send("GET", "GetObject", key, {})
        if status == 200:
            data: bytes = body
            return data
        if status == 404 and b"<Code>NoSuchKey</Code>" in body:
            raise FileNotFoundError(f"s3://{self.bucket}/{key}")
        raise Unanswered(f"GetObject: HTTP {status}")

    def get_object_buffer(self, key: str) -> Any:
        """One object's bytes in a ``pyarrow.Buffer`` (received into it, not copied).

        Raises:
            FileNotFoundError: When the key does not exist (404).
            Unanswered: For any other answer but 200.
        """
        status, body = self._send("GET", "GetObject", key, {}, arrow=True)
        if status == 200:
            return body if not isinstance(body, bytes) else arrow_copy(body)
        if status == 404 and b"<Code>NoSuchKey</Code>" in body:
            raise FileNotFoundError(f"s3://{self.bucket}/{key}")
        raise Unanswered(f"GetObject: HTTP {status}")

    def list_pages(self, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """ListObjectsV2 pages, as botocore's ``list_objects_v2`` returns them.

        Args:
            params: ``Prefix``, and optionally ``Delimiter``, ``StartAfter``, ``MaxKeys`` and
                ``ContinuationToken`` (the page to start at).

        Yields:
            Parsed pages (``Contents``, ``CommonPrefixes``, ``NextContinuationToken`` ...).

        Raises:
            Unanswered: For a page that was not a 200 this client can parse; its
                ``token`` is the continuation token of that page (None for the first), so the
                listing can go on from there with boto3.
        """
        names = {
            "Prefix": "prefix",
            "Delimiter": "delimiter",
            "StartAfter": "start-after",
            "MaxKeys": "max-keys",
            "ContinuationToken": "continuation-token",
        }
        unknown = set(params) - set(names)
        if unknown:
            raise Unanswered(f"ListObjectsV2 parameters {sorted(unknown)}", None, lasting=False)
        query = {"list-type": "2", **{names[k]: str(v) for k, v in params.items()}}
        token = params.get("ContinuationToken")
        while True:
            if token is not None:
                query["continuation-token"] = token
                # the token holds the position: S3 ignores StartAfter beside it, and S3Proxy
                # answers 400 InvalidArgument to both together
                query.pop("start-after", None)
            try:
                status, body = self._send("GET", "ListObjectsV2", "", query)
            except Unanswered as err:
                raise Unanswered(str(err), token, retried=err.retried) from err
            page = parse_page(body) if status == 200 else None
            if page is None:
                raise Unanswered(f"ListObjectsV2: HTTP {status}", token)
            yield page
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return

    def put_object(self, key: str, data: bytes) -> None:
        """Write one object whole (``PutObject``, with ``Content-MD5``: the store checks it).

        Args:
            key: The object's key.
            data: Its bytes.

        Raises:
            Unanswered: For any answer but 200.
        """
        status, _ = self._send("PUT", "PutObject", key, {}, data, {"content-md5": _md5(data)})
        if status != 200:
            raise Unanswered(f"PutObject: HTTP {status}")

    def delete_objects(self, keys: list[str]) -> list[tuple[str, str]]:
        """Delete up to 1,000 keys in one quiet ``DeleteObjects`` request.

        Args:
            keys: The keys.

        Returns:
            (key, error code) for each key the store did not delete.

        Raises:
            Unanswered: For any answer but a 200 with a ``DeleteResult`` this client can
                parse, and (not lasting) for a key an XML body cannot carry (a control
                character).
        """
        from xml.etree import ElementTree

        if any(ord(ch) < 0x20 for key in keys for ch in key):
            raise Unanswered("DeleteObjects: a key with a control character", lasting=False)
        objects = "".join(f"<Object><Key>{_xml_text(key)}</Key></Object>" for key in keys)
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<Delete xmlns="{_S3_XMLNS}"><Quiet>true</Quiet>{objects}</Delete>'
        ).encode()
        extra = {"content-md5": _md5(body), "content-type": "application/xml"}
        status, answer = self._send("POST", "DeleteObjects", "", {"delete": ""}, body, extra)
        try:
            root = ElementTree.fromstring(answer) if status == 200 else None
        except ElementTree.ParseError:
            root = None
        if root is None or root.tag.rsplit("}", 1)[-1] != "DeleteResult":
            raise Unanswered(f"DeleteObjects: HTTP {status}")
        failed = []
        for element in root:
            if element.tag.rsplit("}", 1)[-1] == "Error":
                fields = {child.tag.rsplit("}", 1)[-1]: child.text or "" for child in element}
                failed.append((fields.get("Key", ""), fields.get("Code", "")))
        return failed


_S3_XMLNS = "http://s3.amazonaws.com/doc/2006-03-01/"


def _md5(body: bytes) -> str:
    """``Content-MD5`` of a request body (the store checks the body against it)."""
    import base64

    return base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
