"""The storage layer: every op reaches files through a ``Storage`` rooted at a table location.

Paths passed to a ``Storage`` are relative to its root and use ``/``. Local disks go through
``os.scandir`` (symbolic links are reported as such and never followed); object stores and HDFS go
through ``pyarrow.fs``. Nothing here deletes outside the root: relative paths that would escape it
are refused.
"""

from __future__ import annotations

import os
import posixpath
import stat
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from python_ops.errors import StorageError

_REMOTE_SCHEMES = ("s3", "s3a", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")


@dataclass(frozen=True)
class FileEntry:
    """One entry of a directory listing.

    Attributes:
        path: Path relative to the storage root, ``/``-separated.
        size_bytes: Size in bytes (0 for directories).
        modification_time_ms: Last modification, milliseconds since the epoch (UTC).
        is_dir: True for directories.
        is_symlink: True for symbolic links (never followed).
    """

    path: str
    size_bytes: int
    modification_time_ms: int
    is_dir: bool
    is_symlink: bool = False

    @property
    def name(self) -> str:
        """The last path component."""
        return posixpath.basename(self.path)


def normalize_location(location: str) -> str:
    """Return a canonical form of a table location: an absolute local path or a remote URI.

    Args:
        location: A local path, a ``file:`` URI or a remote URI (``s3://bucket/key`` ...).

    Returns:
        An absolute local path without trailing slash, or the remote URI without trailing slash.
    """
    parsed = urlparse(location)
    if parsed.scheme in _REMOTE_SCHEMES:
        return location.rstrip("/")
    if parsed.scheme == "file":
        return os.path.abspath(unquote(parsed.path))
    return os.path.abspath(os.path.expanduser(location))


def is_remote(location: str) -> bool:
    """Tell whether a location is on a remote filesystem (object store or HDFS)."""
    return urlparse(location).scheme in _REMOTE_SCHEMES


class Storage(ABC):
    """Files under one root directory (a table location).

    Attributes:
        listing_concurrency: Directories worth listing at once (local disks gain nothing from
            Python threads; object stores gain from many requests in flight).
    """

    listing_concurrency = 1
    flat_listing = False  # True: one recursive listing per prefix beats a walk (object stores)
    batched_deletes = False  # True: ``delete_files`` sends one request per delete_batch_size
    delete_batch_size = 256  # at most this many files per delete task

    def __init__(self, root: str) -> None:
        self.root = root

    def _check_relative(self, rel: str) -> str:
        clean = posixpath.normpath(rel) if rel else ""
        if clean in (".", ""):
            return ""
        if clean.startswith("../") or clean == ".." or clean.startswith("/"):
            raise StorageError(f"path '{rel}' escapes the table root {self.root}; refusing it")
        return clean

    @abstractmethod
    def list_dir(self, rel: str = "") -> list[FileEntry]:
        """List one directory (not recursive).

        Args:
            rel: Directory relative to the root ("" for the root itself).

        Returns:
            Entries with paths relative to the root; an empty list if the directory is missing.

        Raises:
            StorageError: When the listing fails for another reason.
        """

    @abstractmethod
    def read_bytes(self, rel: str) -> bytes:
        """Read a whole (small) file.

        Args:
            rel: File path relative to the root.

        Returns:
            The file content.

        Raises:
            FileNotFoundError: When the file does not exist.
            StorageError: When reading fails for another reason.
        """

    def list_tree(self, rel: str = "") -> list[FileEntry]:
        """Every file and directory below ``rel`` (a walk of ``list_dir``; S3 overrides it).

        Args:
            rel: Directory relative to the root.

        Returns:
            Entries with paths relative to the root (symbolic links reported, not followed).
        """
        out: list[FileEntry] = []
        level = [self._check_relative(rel)]
        while level:
            children = [e for d in level for e in self.list_dir(d)]
            out += children
            level = [e.path for e in children if e.is_dir and not e.is_symlink]
        return out

    def delete_files(self, rels: list[str]) -> list[str]:
        """Delete data files; object stores override this with batched requests.

        Args:
            rels: File paths relative to the root.

        Returns:
            The paths that could not be deleted.

        Raises:
            StorageError: When a path escapes the root or lies in the Delta log.
        """
        return [rel for rel in rels if not self.delete_file(rel)]

    def delete_file(self, rel: str) -> bool:
        """Delete one data file (never a directory, never through a symlink's target).

        Args:
            rel: File path relative to the root.

        Returns:
            True when the file is gone (a missing file counts as deleted).

        Raises:
            StorageError: When the path escapes the root or lies in the Delta log.
        """
        return self._remove_file(self._check_deletable(rel))

    def delete_log_file(self, rel: str) -> bool:
        """Delete one file of ``_delta_log`` or ``_delta_log/_sidecars`` (log cleanup only).

        Args:
            rel: Path relative to the root, e.g. ``_delta_log/00000000000000000003.json``.

        Returns:
            True when the file is gone.

        Raises:
            StorageError: For anything else, and always for ``_last_checkpoint``.
        """
        clean = self._check_relative(rel)
        parent, _, name = clean.rpartition("/")
        if parent not in ("_delta_log", "_delta_log/_sidecars") or name in ("", "_last_checkpoint"):
            raise StorageError(f"refusing to delete '{rel}' in {self.root}: not a log file")
        return self._remove_file(clean)

    @abstractmethod
    def _remove_file(self, clean: str) -> bool:
        """Remove a file at a checked relative path; True when it is gone."""

    @abstractmethod
    def delete_dir(self, rel: str) -> bool:
        """Delete one empty directory (non-recursive).

        Args:
            rel: Directory path relative to the root.

        Returns:
            True when it is gone; False when it is not empty or cannot be removed.

        Raises:
            StorageError: When the path escapes the root or names the log directory.
        """

    def _check_deletable(self, rel: str) -> str:
        clean = self._check_relative(rel)
        if not clean or clean == "_delta_log" or clean.startswith("_delta_log/"):
            raise StorageError(
                f"refusing to delete '{rel}' in {self.root}: it is the table root or its log"
            )
        return clean

    def local_path(self, rel: str) -> str | None:
        """Return the local filesystem path of ``rel``, or None on remote storage."""
        return None

    @abstractmethod
    def arrow_path(self, rel: str) -> tuple[Any, str]:
        """The ``pyarrow.fs`` filesystem and its path for ``rel``, to read and write Parquet.

        Args:
            rel: File path relative to the root.

        Returns:
            (filesystem, path on it).
        """


class LocalStorage(Storage):
    """A local directory tree, listed with ``os.scandir`` without following symlinks."""

    def _abs(self, rel: str) -> str:
        clean = self._check_relative(rel)
        return os.path.join(self.root, clean) if clean else self.root

    def list_dir(self, rel: str = "") -> list[FileEntry]:  # noqa: D102
        base = self._check_relative(rel)
        prefix = f"{base}/" if base else ""
        entries = []
        try:
            with os.scandir(self._abs(base)) as it:
                for de in it:
                    st = de.stat(follow_symlinks=False)  # lstat: a link is reported, not followed
                    mode = st.st_mode
                    is_dir = stat.S_ISDIR(mode)
                    entries.append(
                        FileEntry(
                            prefix + de.name,
                            0 if is_dir else st.st_size,
                            st.st_mtime_ns // 1_000_000,
                            is_dir,
                            stat.S_ISLNK(mode),
                        )
                    )
        except FileNotFoundError:
            return []
        except OSError as err:
            raise StorageError(f"cannot list {self._abs(base)}: {err}") from err
        return entries

    def read_bytes(self, rel: str) -> bytes:  # noqa: D102
        path = self._abs(rel)
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            raise
        except OSError as err:
            raise StorageError(f"cannot read {path}: {err}") from err

    def arrow_path(self, rel: str) -> tuple[Any, str]:  # noqa: D102
        from pyarrow import fs as pafs

        return pafs.LocalFileSystem(), self._abs(rel)

    def local_path(self, rel: str) -> str | None:  # noqa: D102
        return self._abs(rel)

    def _remove_file(self, clean: str) -> bool:
        path = self._abs(clean)
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                return False
            os.unlink(path)  # unlink removes a symlink itself, never its target
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False

    def delete_dir(self, rel: str) -> bool:  # noqa: D102
        path = self._abs(self._check_deletable(rel))
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return False
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False


class ArrowStorage(Storage):
    """Remote storage (S3, GCS, ADLS, HDFS) through ``pyarrow.fs``."""

    listing_concurrency = 16

    def __init__(self, root: str) -> None:
        super().__init__(root)
        from pyarrow import fs as pafs

        try:
            self._fs, self._base = pafs.FileSystem.from_uri(root)
        except Exception as err:  # pyarrow raises several types for bad URIs/credentials
            raise StorageError(f"cannot open storage for {root}: {err}") from err
        self._pafs = pafs

    def _abs(self, rel: str) -> str:
        clean = self._check_relative(rel)
        return f"{self._base}/{clean}" if clean else self._base

    def list_dir(self, rel: str = "") -> list[FileEntry]:  # noqa: D102
        base = self._check_relative(rel)
        selector = self._pafs.FileSelector(self._abs(base), allow_not_found=True, recursive=False)
        try:
            infos = self._fs.get_file_info(selector)
        except OSError as err:
            raise StorageError(f"cannot list {self.root}/{base}: {err}") from err
        out = []
        for info in infos:
            is_dir = info.type == self._pafs.FileType.Directory
            mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
            out.append(
                FileEntry(
                    path=posixpath.join(base, info.base_name) if base else info.base_name,
                    size_bytes=0 if is_dir else int(info.size or 0),
                    modification_time_ms=mtime,
                    is_dir=is_dir,
                )
            )
        return out

    def read_bytes(self, rel: str) -> bytes:  # noqa: D102
        path = self._abs(rel)
        try:
            with self._fs.open_input_stream(path) as fh:
                data: bytes = fh.read()
                return data
        except FileNotFoundError:
            raise
        except OSError as err:
            if "not found" in str(err).lower() or "does not exist" in str(err).lower():
                raise FileNotFoundError(path) from err
            raise StorageError(f"cannot read {path}: {err}") from err

    def arrow_path(self, rel: str) -> tuple[Any, str]:  # noqa: D102
        return self._fs, self._abs(rel)

    def _remove_file(self, clean: str) -> bool:
        return self._delete(clean, directory=False)

    def delete_dir(self, rel: str) -> bool:  # noqa: D102
        return self._delete(self._check_deletable(rel), directory=True)

    def _delete(self, clean: str, *, directory: bool) -> bool:
        path = self._abs(clean)
        try:
            if directory:
                selector = self._pafs.FileSelector(path, allow_not_found=True, recursive=False)
                if self._fs.get_file_info(selector):
                    return False  # not empty: never delete recursively
                self._fs.delete_dir(path)
            else:
                self._fs.delete_file(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False


def is_s3(location: str) -> bool:
    """Tell whether a location is on S3 (``s3://`` or ``s3a://``)."""
    return urlparse(location).scheme in ("s3", "s3a")


def open_storage(location: str, *, spark: Any = None) -> Storage:
    """Open the storage rooted at a table location.

    Args:
        location: A local path, ``file:`` URI or remote URI.
        spark: The Spark session the op runs in: its ``spark.hadoop.fs.s3a.*`` settings fill
            S3 settings the environment does not give.

    Returns:
        ``S3Storage`` for ``s3://``/``s3a://``, ``ArrowStorage`` for other remote URIs
        (``gs://``, ``abfss://``, ``hdfs://`` through ``pyarrow.fs``), else ``LocalStorage``.

    Raises:
        ConfigError: When S3 credentials are missing.
    """
    root = normalize_location(location)
    if is_s3(root):
        from python_ops.s3_settings import S3Settings
        from python_ops.s3_storage import S3Storage

        return S3Storage(root, settings=S3Settings.resolve(spark=spark))
    return ArrowStorage(root) if is_remote(root) else LocalStorage(root)


def delta_storage_options(location: str) -> dict[str, str] | None:
    """delta-rs ``storage_options`` for a table location (None: delta-rs's defaults).

    Args:
        location: The table location.

    Returns:
        Options for S3 (credentials, endpoint, region); None elsewhere.
    """
    if not is_s3(location):
        return None
    from python_ops.s3_settings import S3Settings

    settings = S3Settings.resolve()
    settings.require_credentials(location)
    return settings.delta_storage_options()
