"""moto's S3 server for the benchmarks, with a fast way to create many objects.

``python bench/s3_server.py <port>`` serves the S3 API on 127.0.0.1:<port> and reads commands
on stdin, each answered with ``done``:

- ``seed <bucket> <prefix> <count> <partitions>`` creates ``count`` small objects
  ``<prefix>/p=<i % partitions>/part-stray-<i>.parquet``;
- ``seed_flat <bucket> <prefix> <count> <seed>`` creates ``count`` small objects directly under
  ``<prefix>``, named as Spark names data files (``flat_names``: part number, random UUID);

directly in moto's store (creating 100k objects through HTTP would take minutes and measure
nothing of interest). All measured requests still go through HTTP.

ListObjectsV2 is indexed here. moto's own sorts every key of the bucket on every request (its
``list_objects_v2`` copies the bucket's key dict, filters it and sorts it, then cuts one page):
at 200,000 objects a page costs moto about a second of CPU, so the server, not the latency,
decides how fast anything lists, and listing ranges of a prefix in parallel (which real S3
answers in constant time per page) cannot show. ``indexed_list_objects_v2`` keeps each
bucket's key names sorted (rebuilt after the bucket's keys change), bisects to the start, and
collects one page with the same delimiter, ``StartAfter`` and continuation-token semantics
(moto's ``_truncate_result`` and ``_pagination_tokens``). ``self_check`` compares it with
moto's own on a small bucket (prefixes, delimiter, start-after, continuation) at startup.
"""

from __future__ import annotations

import bisect
import logging
import random
import sys
import threading
import urllib.parse
import uuid
from typing import Any

_lock = threading.Lock()
_index: dict[int, tuple[int, list[str]]] = {}  # id(bucket.keys) -> (generation, sorted names)
_generations: dict[int, int] = {}
_fragments: dict[tuple[int, bool], tuple[Any, str]] = {}  # (id(key), url-encoded) -> XML


def flat_names(count: int, seed: int) -> list[str]:
    """Data file names as Spark writes them: ``part-<task>-<uuid>-c000.snappy.parquet``."""
    rng = random.Random(seed)
    return [
        f"part-{i % 200:05d}-{uuid.UUID(int=rng.getrandbits(128), version=4)}-c000.snappy.parquet"
        for i in range(count)
    ]


def _track_key_changes() -> None:
    """Count changes to every bucket's key store, so the sorted index knows when to rebuild."""
    from moto.s3.utils import _VersionedKeyStore

    def counted(method: Any) -> Any:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            with _lock:
                _generations[id(self)] = _generations.get(id(self), 0) + 1
            return method(self, *args, **kwargs)

        return wrapper

    for name in ("__setitem__", "__delitem__", "pop", "setlist", "clear", "update", "setdefault"):
        setattr(_VersionedKeyStore, name, counted(getattr(_VersionedKeyStore, name)))


def _sorted_names(store: Any) -> list[str]:
    with _lock:
        generation = _generations.get(id(store), 0)
        cached = _index.get(id(store))
        if cached is None or cached[0] != generation:
            cached = (generation, sorted(dict.keys(store)))
            _index[id(store)] = cached
        return cached[1]


def _after_prefix(prefix: str) -> str:
    """The smallest string above every string that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def indexed_list_objects_v2(
    self: Any,
    bucket: Any,
    prefix: str | None,
    delimiter: str | None,
    continuation_token: str | None,
    start_after: str | None,
    max_keys: int,
) -> Any:
    """moto's ``S3Backend.list_objects_v2`` answered from a sorted index of the bucket's keys."""
    from moto.s3.models import FakeDeleteMarker

    prefix = prefix or ""
    limit = (
        self._pagination_tokens.get(continuation_token)
        if continuation_token
        else (start_after or None)
    )
    names = _sorted_names(bucket.keys)
    i = bisect.bisect_left(names, prefix)
    if limit is not None:
        i = max(i, bisect.bisect_right(names, limit))
    found: list[Any] = []
    while i < len(names) and len(found) <= max_keys:
        name = names[i]
        if not name.startswith(prefix):
            break
        rest = name[len(prefix) :]
        if delimiter and delimiter in rest:
            folder = prefix + rest.split(delimiter)[0] + delimiter
            if limit is None or folder > limit:
                found.append(folder)
            i = bisect.bisect_left(names, _after_prefix(folder), i)  # past the folder's keys
            continue
        key = bucket.keys.get(name)
        if key is not None and not isinstance(key, FakeDeleteMarker):
            found.append(key)
        i += 1
    return self._truncate_result(found, max_keys)


def fast_list_objects_v2_response(self: Any) -> Any:
    """moto's ``S3Response.list_objects_v2`` with the XML written directly.

    moto renders every response through its generic serializer (which parses each key's
    timestamp back with dateutil): about 70 ms of CPU per 1,000-key page, serialized by the
    server's GIL. Same request parsing, same fields and encoding as moto's.
    """
    from xml.sax.saxutils import escape

    from moto.s3.exceptions import InvalidContinuationToken
    from moto.s3.models import FakeKey
    from moto.settings import get_s3_default_max_keys

    bucket = self.backend.get_bucket(self.bucket_name)
    continuation_token = self.querystring.get("continuation-token", [None])[0]
    if continuation_token is not None and continuation_token == "":
        raise InvalidContinuationToken()
    querystring = self._get_querystring(self.request, self.uri)
    prefix = querystring.get("prefix", [None])[0]
    if prefix and isinstance(prefix, bytes):
        prefix = prefix.decode("utf-8")
    delimiter = self.querystring.get("delimiter", [None])[0]
    max_keys = int(self.querystring.get("max-keys", [get_s3_default_max_keys()])[0])
    start_after = self.querystring.get("start-after", [None])[0]
    encoding_type = self.querystring.get("encoding-type", [None])[0]
    found, is_truncated, next_token = self.backend.list_objects_v2(
        bucket=bucket,
        prefix=prefix,
        delimiter=delimiter,
        continuation_token=continuation_token,
        start_after=start_after,
        max_keys=max_keys,
    )
    url = encoding_type == "url"

    def text(value: str) -> str:
        return escape(urllib.parse.quote(value) if url else value)

    parts = ['<?xml version="1.0" encoding="utf-8"?>\n']
    parts.append('<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">')
    parts.append(f"<IsTruncated>{'true' if is_truncated else 'false'}</IsTruncated>")
    keys = [k for k in found if isinstance(k, FakeKey)]
    folders = [k for k in found if not isinstance(k, FakeKey)]
    for key in keys:
        cached = _fragments.get((id(key), url))
        if cached is None or cached[0] is not key:  # an object's XML is written once
            cached = (
                key,
                f"<Contents><Key>{text(key.name)}</Key>"
                f"<LastModified>{key.last_modified_ISO8601}</LastModified>"
                f"<ETag>{escape(key.etag)}</ETag><Size>{key.size}</Size>"
                f"<StorageClass>{key.storage_class}</StorageClass></Contents>",
            )
            _fragments[(id(key), url)] = cached
        parts.append(cached[1])
    parts.append(f"<Name>{escape(bucket.name)}</Name><Prefix>{text(prefix or '')}</Prefix>")
    if delimiter:
        parts.append(f"<Delimiter>{escape(delimiter)}</Delimiter>")
    parts.append(f"<MaxKeys>{max_keys}</MaxKeys>")
    if delimiter:
        parts += [f"<CommonPrefixes><Prefix>{text(f)}</Prefix></CommonPrefixes>" for f in folders]
    if encoding_type:
        parts.append(f"<EncodingType>{escape(encoding_type)}</EncodingType>")
    parts.append(f"<KeyCount>{len(keys) + len(folders)}</KeyCount>")
    if next_token:
        parts.append(f"<NextContinuationToken>{next_token}</NextContinuationToken>")
    if not continuation_token and start_after:
        parts.append(f"<StartAfter>{escape(start_after)}</StartAfter>")
    parts.append("</ListBucketResult>")
    headers = {"Content-Type": "application/xml", **self.response_headers}
    return 200, headers, "".join(parts)


def self_check(backend: Any) -> None:
    """Compare the indexed listing with moto's own on a small bucket; raise on a difference."""
    from moto.s3.models import S3Backend

    bucket = "indexed-listing-self-check"
    backend.create_bucket(bucket, "us-east-1")
    names = [f"t/part-{i:03d}.parquet" for i in range(25)]
    names += ["t/_delta_log/0.json", "t/_delta_log/1.json", "t/p=1/a", "t/p=1/b", "t/p=2/", "u/x"]
    names += ["t/p=10/c", "t", "t/", "t/a b&c<d.parquet"]
    for name in names:
        backend.put_object(bucket, name, b"x")
    fake = backend.get_bucket(bucket)

    def pages(method: Any, case: dict[str, Any], max_keys: int) -> list[tuple[list[str], bool]]:
        out: list[tuple[list[str], bool]] = []
        token = None
        while True:
            args = (case["prefix"], case["delimiter"], token, case["start_after"], max_keys)
            keys, truncated, token = method(backend, fake, *args)
            out.append(([k if isinstance(k, str) else k.name for k in keys], truncated))
            if not truncated:
                return out

    cases = [
        {"prefix": "t/", "delimiter": "/", "start_after": None},
        {"prefix": "t/", "delimiter": None, "start_after": None},
        {"prefix": "t/", "delimiter": "/", "start_after": "t/part-010.parquet"},
        {"prefix": "t/", "delimiter": None, "start_after": "t/p=1/a"},
        {"prefix": "t/", "delimiter": "/", "start_after": "t/p=1/a"},
        {"prefix": "t/p=1", "delimiter": "/", "start_after": None},
        {"prefix": None, "delimiter": "/", "start_after": None},
        {"prefix": None, "delimiter": None, "start_after": "t/p=2/"},
    ]
    for change in ("none", "put t/part-100.parquet", "delete t/part-005.parquet"):
        if change.startswith("put"):
            backend.put_object(bucket, change.split()[1], b"x")
            names.append(change.split()[1])
        elif change.startswith("delete"):
            backend.delete_object(bucket, change.split()[1])
        for case in cases:  # after each change: the index is rebuilt
            for max_keys in (1, 4, 1000):
                original = pages(S3Backend.list_objects_v2, case, max_keys)
                indexed = pages(indexed_list_objects_v2, case, max_keys)
                if original != indexed:
                    raise AssertionError(
                        f"indexed listing differs for {case}, max_keys {max_keys}, after {change}"
                    )
    _check_responses(bucket)
    for name in names:
        backend.delete_object(bucket, name)
    backend.delete_bucket(bucket)


def _check_responses(bucket: str) -> None:
    """The fast response's XML parses to the same as moto's, for a few requests."""
    import xmltodict
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from moto.s3.responses import S3Response
    from werkzeug.test import Client

    client = Client(DomainDispatcherApplication(create_backend_app))
    headers = {
        "Host": "127.0.0.1:5000",
        "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20240101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=0",
    }
    original = S3Response.list_objects_v2
    queries = [
        "prefix=t/&delimiter=/&encoding-type=url&max-keys=4",
        "prefix=t/&delimiter=/&max-keys=1000",
        "prefix=t/&encoding-type=url&start-after=t/part-010.parquet&max-keys=3",
        "delimiter=/&encoding-type=url",
        "prefix=t/&delimiter=/&encoding-type=url&continuation-token={token}",
    ]
    token = ""
    for query in queries:
        url = f"/{bucket}?list-type=2&{query.format(token=token)}"
        bodies = []
        for handler in (original, fast_list_objects_v2_response):
            S3Response.list_objects_v2 = handler  # type: ignore[method-assign]
            try:
                bodies.append(xmltodict.parse(client.get(url, headers=headers).data))
            finally:
                S3Response.list_objects_v2 = original  # type: ignore[method-assign]
        if bodies[0] != bodies[1]:
            raise AssertionError(f"fast ListObjectsV2 response differs for {query}: {bodies}")
        token = bodies[0]["ListBucketResult"].get("NextContinuationToken", token)


def main() -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import S3Backend, s3_backends
    from moto.s3.responses import S3Response
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    _track_key_changes()
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    self_check(backend)
    S3Backend.list_objects_v2 = indexed_list_objects_v2  # type: ignore[method-assign]
    S3Response.list_objects_v2 = fast_list_objects_v2_response  # type: ignore[method-assign]
    from werkzeug.serving import WSGIRequestHandler

    # as the counting proxy (tests/helpers/s3.py): a response's headers and body are separate
    # writes, and with Nagle's algorithm the body waited for a delayed ACK (about 40 ms)
    WSGIRequestHandler.disable_nagle_algorithm = True
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[1]), verbose=False)
    server.start()
    print("ready", flush=True)
    for line in sys.stdin:
        command, bucket, prefix, count, extra = line.split()
        if command == "seed":
            for i in range(int(count)):
                key = f"{prefix}/p={i % int(extra)}/part-stray-{i:07d}.parquet"
                backend.put_object(bucket, key, b"0123456789")
        elif command == "seed_flat":
            for name in flat_names(int(count), int(extra)):
                backend.put_object(bucket, f"{prefix}/{name}", b"0123456789")
        print("done", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
