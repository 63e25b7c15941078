"""S3 (and S3-compatible stores) as a ``Storage``: paginated listing, batched deletes, retries.

S3 has no directories. A "directory" is a key prefix, present while some key starts with it;
some tools also write zero-byte ``dir/`` marker objects. Listing reports markers (and, for
one-level listings, common prefixes) as directories; deleting a directory deletes only its
marker, and only when nothing else lies under the prefix. Recursive listing is one paginated
``ListObjectsV2`` (1,000 keys per request) per prefix, never a request per file (``list_range``
lists one key range of a prefix, so ranges of one big prefix list in parallel); deletes go in
``DeleteObjects`` batches of up to 1,000 keys, with keys that fail for a retryable reason
(throttling, 5xx) retried with the retry policy's backoff (``s3_retry``). Every request is
counted per operation in ``requests``.

Reads and listings go out as signed plain HTTP requests (``s3_http``); boto3 is imported and
its client made only when a request needs it: a write, a delete, or a read the plain request
left unanswered (an error status, a redirect, a body it cannot read), which boto3 repeats,
and boto3 makes the later reads of that storage too. A request the plain client already sent
as often as the retry policy allows, failing each time for a transient reason (connection,
5xx, throttling), is not repeated by boto3: it fails with ``StorageError`` (a delete reports
its keys as not deleted). A dry run, and the due checks of the post-hooks, never load boto3.
"""

from __future__ import annotations

import collections
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from python_ops.errors import StorageError
from python_ops.storage.base import FileEntry, Storage, arrow_copy
from python_ops.storage.s3_http import SignedRequests, Unanswered
from python_ops.storage.s3_retry import RetryPolicy
from python_ops.storage.settings import S3Settings

log = logging.getLogger(__name__)

DELETE_BATCH = 1000
_RETRYABLE_KEY_ERRORS = ("SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout")


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/a/b`` (or ``s3a://``) to (bucket, ``a/b``)."""
    rest = uri.split("://", 1)[1]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StorageError(f"'{uri}' names no bucket; use s3://<bucket>/<path>")
    return bucket, prefix.strip("/")


class S3Storage(Storage):
    """A table root on S3: reads and deletes as signed plain HTTP (``s3_http``), writes by boto3.

    Args:
        root: ``s3://bucket/path`` of the table.
        settings: Connection settings (default: resolved from the environment).
        signed_requests: Read, list and delete with ``s3_http.SignedRequests`` first (boto3
            takes over any request it leaves); False: everything through boto3.
        retry: Attempts and backoff of the signed requests and of keys a ``DeleteObjects``
            did not delete for a transient reason (default: the AWS SDKs' standard mode).

    Raises:
        ConfigError: When credentials are missing (the message names which).
    """

    listing_concurrency = 8
    flat_listing = True
    batched_deletes = True
    delete_batch_size = DELETE_BATCH
    lists_on_executors = True
    lists_key_ranges = True

    def __init__(
        self,
        root: str,
        *,
        settings: S3Settings | None = None,
        signed_requests: bool = True,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(root)
        self.settings = settings or S3Settings.resolve()
        self.settings.require_credentials(root)
        self.bucket, self.prefix = split_s3_uri(root)
        self.requests: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self._boto3: Any = None
        self.retry = retry or RetryPolicy.standard()
        self._signed = (
            SignedRequests(self.settings, self.bucket, count=self._counted, retry=self.retry)
            if signed_requests
            else None
        )
        self._arrow: Any = None

    @property
    def _client(self) -> Any:
        """The boto3 client, made at its first use (reads need none: ``s3_http``)."""
        with self._lock:
            if self._boto3 is None:
                self._boto3 = self.settings.boto3_client()
                self._boto3.meta.events.register("before-call.s3", self._count)
            return self._boto3

    def _refused(self, err: Unanswered, action: str) -> None:
        """After a store's refusal (a status, a page), boto3 takes every request.

        A store that answers one plain request with a redirect to another region or an error
        would answer the next ones alike: each would then cost a request twice.

        Raises:
            StorageError: When the request already had every attempt the retry policy allows
                (``action`` names what could not be done).
        """
        if err.retried:
            raise StorageError(f"cannot {action}: {err}") from err
        if err.lasting:
            self._signed = None

    def _count(self, event_name: str, **_: Any) -> None:
        self._counted(event_name.rsplit(".", 1)[-1])

    def _counted(self, operation: str) -> None:
        with self._lock:
            self.requests[operation] += 1

    def _key(self, clean: str) -> str:
        return f"{self.prefix}/{clean}" if self.prefix and clean else (self.prefix or clean)

    def _dir_key(self, clean: str) -> str:
        key = self._key(clean)
        return f"{key}/" if key else ""

    def _rel(self, key: str) -> str:
        return key[len(self.prefix) + 1 :] if self.prefix else key

    def _pages(self, **params: Any) -> Any:
        """ListObjectsV2 pages: signed plain requests, boto3 from the first page they leave."""
        token = None
        if self._signed is not None:
            try:
                yield from self._signed.list_pages(params)
                return
            except Unanswered as err:
                log.debug("listing through boto3 from here: %s", err)
                token = err.token
                self._refused(err, f"list s3://{self.bucket}/{params.get('Prefix', '')}")
        try:
            while True:
                more = {} if token is None else {"ContinuationToken": token}
                page = self._client.list_objects_v2(Bucket=self.bucket, **params, **more)
                yield page
                token = page.get("NextContinuationToken")
                if not page.get("IsTruncated") or not token:
                    return
        except Exception as err:  # botocore raises ClientError and connection errors
            raise StorageError(
                f"cannot list s3://{self.bucket}/{params.get('Prefix', '')}: {error_reason(err)}"
            ) from err

    def _entry(self, obj: dict[str, Any]) -> FileEntry:
        key = str(obj["Key"])
        modified = obj.get("LastModified")
        if modified is None:  # S3Proxy lists a marker as its backend's directory: no time
            if key.endswith("/"):  # as a prefix; ``a//`` stays ``a/``: not canonical
                return FileEntry(self._rel(key[:-1]), 0, 0, True)
            raise StorageError(f"s3://{self.bucket}/{key} is listed without LastModified")
        mtime = int(modified.timestamp() * 1000)
        if key.endswith("/"):  # a directory marker; ``a//`` stays ``a/``: not canonical
            return FileEntry(self._rel(key[:-1]), 0, mtime, True)
        return FileEntry(self._rel(key), int(obj["Size"]), mtime, False)

    def list_dir(self, rel: str = "") -> list[FileEntry]:  # noqa: D102
        return self.list_range(rel)

    def list_tree(self, rel: str = "") -> list[FileEntry]:
        """Every object below ``rel`` (one paginated request per 1,000 keys).

        Args:
            rel: Directory relative to the root.

        Returns:
            Files, and directory markers (``rel``'s own included) as directories; paths
            relative to the root.
        """
        return self.list_range(rel, recursive=True)

    def list_range(
        self,
        rel: str = "",
        *,
        start_after: str | None = None,
        last: str | None = None,
        recursive: bool = False,
    ) -> list[FileEntry]:
        """One key range of a prefix: ``ListObjectsV2`` from ``StartAfter``, stopped past ``last``.

        One level (``/`` as delimiter: sub-prefixes as directories) or the whole subtree. The
        page that crosses ``last`` is the range's last request; its keys past ``last`` belong
        to the next range and are dropped here. Each range costs at most one request more
        than its keys need.

        Args:
            rel: Directory relative to the root.
            start_after: Only keys after this relative path below ``rel`` (None: from the first).
            last: Only keys up to and including this relative path below ``rel`` (None: all).
            recursive: The whole subtree instead of one level.

        Returns:
            Files, and directories (one level: sub-prefixes and markers; recursive: markers,
            ``rel``'s own included unless ``rel`` is the root); paths relative to the root.

        Raises:
            StorageError: When the listing fails, or a bound lies outside ``rel``.
        """
        clean = self._check_relative(rel)
        base = self._dir_key(clean)
        params: dict[str, Any] = {"Prefix": base}
        if not recursive:
            params["Delimiter"] = "/"
        if start_after is not None:
            params["StartAfter"] = self._bound_key(clean, start_after)
        end = None if last is None else self._bound_key(clean, last)
        start = params.get("StartAfter")  # also checked here: a store may ignore StartAfter
        out: list[FileEntry] = []
        for page in self._pages(**params):
            crossed = False
            for common in page.get("CommonPrefixes", []):
                prefix = common["Prefix"]
                if end is not None and prefix > end:
                    crossed = True
                elif start is None or prefix > start or start.startswith(prefix):
                    out.append(FileEntry(self._rel(prefix[:-1]), 0, 0, True))
            for obj in page.get("Contents", []):
                if end is not None and obj["Key"] > end:
                    crossed = True
                elif start is not None and obj["Key"] <= start:
                    continue
                elif obj["Key"] != base or (recursive and clean):
                    out.append(self._entry(obj))  # not the prefix's own marker (but a subtree's)
            if crossed:
                break  # the rest belongs to the next range
        return out

    def _bound_key(self, clean: str, bound: str) -> str:
        if clean and not bound.startswith(f"{clean}/"):
            raise StorageError(f"key range bound '{bound}' is not below '{clean}' in {self.root}")
        return self._key(bound)

    def read_bytes(self, rel: str) -> bytes:  # noqa: D102
        key = self._key(self._check_relative(rel))
        if self._signed is not None:
            try:
                return self._signed.get_object(key)
            except Unanswered as err:
                log.debug("reading through boto3: %s", err)
                self._refused(err, f"read s3://{self.bucket}/{key}")
        try:
            body: bytes = self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            return body
        except Exception as err:
            if error_code(err) in ("NoSuchKey", "404"):
                raise FileNotFoundError(f"s3://{self.bucket}/{key}") from err
            raise StorageError(
                f"cannot read s3://{self.bucket}/{key}: {error_reason(err)}"
            ) from err

    def read_arrow_buffer(self, rel: str) -> Any:  # noqa: D102
        if self._signed is not None:
            key = self._key(self._check_relative(rel))
            try:
                return self._signed.get_object_buffer(key)
            except Unanswered as err:
                log.debug("reading through boto3: %s", err)
                self._refused(err, f"read s3://{self.bucket}/{key}")
        return arrow_copy(self.read_bytes(rel))

    def arrow_path(self, rel: str) -> tuple[Any, str]:  # noqa: D102
        if self._arrow is None:
            self._arrow = self.settings.arrow_filesystem()
        return self._arrow, f"{self.bucket}/{self._key(self._check_relative(rel))}"

    def executor_factory(self) -> Callable[[], Storage]:  # noqa: D102
        return functools.partial(S3Storage, self.root, settings=self.settings)

    def create_if_absent(self, rel: str, data: bytes) -> bool:
        """Create an object only if its key does not exist (``PutObject`` ``If-None-Match: *``).

        Args:
            rel: Path relative to the root.
            data: The object's bytes.

        Returns:
            True when created; False when the store refused because the key exists.

        Raises:
            StorageError: For any other failure.
        """
        key = self._key(self._check_relative(rel))
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=data, IfNoneMatch="*")
        except Exception as err:
            if error_code(err) in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                return False
            raise StorageError(
                f"cannot write s3://{self.bucket}/{key}: {error_reason(err)}"
            ) from err
        return True

    def replace_file(self, rel: str, data: bytes) -> None:
        """As ``Storage.replace_file``: one ``PutObject`` (it replaces an object whole).

        Signed plain HTTP first, boto3 when that is left unanswered.
        """
        key = self._key(self._check_relative(rel))
        if self._signed is not None:
            try:
                self._signed.put_object(key, data)
                return
            except Unanswered as err:
                log.debug("writing through boto3: %s", err)
                self._refused(err, f"write s3://{self.bucket}/{key}")
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=data)
        except Exception as err:
            raise StorageError(
                f"cannot write s3://{self.bucket}/{key}: {error_reason(err)}"
            ) from err

    def _remove_file(self, clean: str) -> bool:
        return not self._delete_keys([self._key(clean)])

    def delete_files(self, rels: list[str]) -> list[str]:
        """As ``Storage.delete_files``, in ``DeleteObjects`` batches of up to 1,000 keys."""
        keys = {self._key(self._check_deletable(rel)): rel for rel in rels}
        failed = []
        names = list(keys)
        for i in range(0, len(names), DELETE_BATCH):
            failed += [keys[k] for k in self._delete_keys(names[i : i + DELETE_BATCH])]
        return failed

    def _delete_keys(self, keys: list[str]) -> list[str]:
        """Delete up to 1,000 keys; keys that failed for a retryable reason get more attempts.

        Returns:
            The keys not deleted: those the store refused, those still failing after the
            retry policy's attempts, and all of them when the request itself failed.
        """
        pending, refused = keys, list[str]()
        for attempt in range(1, self.retry.max_attempts + 1):
            try:
                errors = self._delete_request(pending)
            except Exception as err:  # the whole request failed after every attempt
                log.warning(
                    "cannot delete %d keys in s3://%s: %s",
                    len(pending),
                    self.bucket,
                    error_reason(err),
                )
                return refused + pending
            retry = [key for key, code in errors if code in _RETRYABLE_KEY_ERRORS]
            refused += [key for key, code in errors if code not in _RETRYABLE_KEY_ERRORS]
            if not retry or attempt == self.retry.max_attempts:
                return refused + retry
            pending = retry
            self.retry.wait(attempt)
        return refused + pending

    def _delete_request(self, keys: list[str]) -> list[tuple[str, str]]:
        """One ``DeleteObjects``: signed plain HTTP first, boto3 when it is left unanswered.

        Returns:
            (key, error code) of each key the store did not delete.
        """
        if self._signed is not None:
            try:
                return self._signed.delete_objects(keys)
            except Unanswered as err:
                log.debug("deleting through boto3: %s", err)
                self._refused(err, f"delete {len(keys)} keys in s3://{self.bucket}")
        response = self._client.delete_objects(
            Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True}
        )
        return [(e.get("Key", ""), e.get("Code", "")) for e in response.get("Errors", [])]

    def delete_dir(self, rel: str) -> bool:
        """Delete a directory marker when nothing else lies under its prefix.

        Returns:
            True when no marker and no other key remains; False when the prefix is not empty.
        """
        prefix = self._dir_key(self._check_deletable(rel))
        page: dict[str, Any] = next(iter(self._pages(Prefix=prefix, MaxKeys=2)), {})
        others = [o for o in page.get("Contents", []) if o["Key"] != prefix]
        if others:
            return False  # not empty: never delete recursively
        return not self._delete_keys([prefix])


def error_code(err: Exception) -> str:
    """The S3 error code of a botocore error ("" for other errors)."""
    response = getattr(err, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


def error_reason(err: Exception) -> str:
    """An error's code and message without request details (no credentials in them)."""
    code = error_code(err)
    return f"{code}: {err}" if code else f"{type(err).__name__}: {err}"
