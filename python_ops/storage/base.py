"""The ``Storage`` contract every implementation fulfils, and location helpers.

Paths passed to a ``Storage`` are relative to its root and use ``/``. Nothing deletes outside
the root: relative paths that would escape it are refused here, for every implementation.
"""

from __future__ import annotations

import functools
import os
import posixpath
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

from python_ops.errors import StorageError
from python_ops.storage.paths import require_canonical

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


@dataclass
class DirScan:
    """Entries of one directory as columns (paths relative to the table root).

    Attributes:
        paths: Relative paths.
        sizes: Sizes in bytes (0 for directories; None for a file ``scan_names`` did not stat).
        mtimes: Modification times, ms since the epoch (None for a file not statted).
        is_dir: Directory flags.
        is_symlink: Symbolic-link flags.
    """

    paths: list[str] = field(default_factory=list)
    sizes: list[int | None] = field(default_factory=list)
    mtimes: list[int | None] = field(default_factory=list)
    is_dir: list[bool] = field(default_factory=list)
    is_symlink: list[bool] = field(default_factory=list)

    def append(
        self, path: str, size: int | None, mtime: int | None, is_dir: bool, is_symlink: bool
    ) -> None:
        """Add one entry."""
        self.paths.append(path)
        self.sizes.append(size)
        self.mtimes.append(mtime)
        self.is_dir.append(is_dir)
        self.is_symlink.append(is_symlink)


def normalize_location(location: str) -> str:
    """Return a canonical form of a table location: an absolute local path or a remote URI.

    Args:
        location: A local path, a ``file:`` URI or a remote URI (``s3://bucket/key`` ...).

    Returns:
        An absolute local path without trailing slash, or the remote URI without trailing slash.
    """
    if location.startswith("/"):  # an absolute local path (no URI starts so): no parsing
        return _absolute(location)
    parsed = urlparse(location)
    if parsed.scheme in _REMOTE_SCHEMES:
        return location.rstrip("/")
    if parsed.scheme == "file":
        return os.path.abspath(unquote(parsed.path))
    return os.path.abspath(os.path.expanduser(location))


@functools.lru_cache(maxsize=4096)
def _absolute(path: str) -> str:
    # a pure function of the text (no working directory, no home): a post-hook normalizes its
    # table's location four times, a command each table's a few more
    return os.path.normpath(path)


def is_remote(location: str) -> bool:
    """Tell whether a location is on a remote filesystem (object store or HDFS)."""
    return not location.startswith("/") and urlparse(location).scheme in _REMOTE_SCHEMES


class Storage(ABC):
    """Files under one root directory (a table location).

    Capabilities (class attributes an implementation overrides; callers test these, never the
    implementation's type):

    Attributes:
        listing_concurrency: Directories worth listing at once (local disks gain nothing from
            Python threads; object stores gain from many requests in flight).
        flat_listing: One recursive listing per prefix beats a directory walk (object stores).
        batched_deletes: ``delete_files`` sends one request per ``delete_batch_size`` files.
        delete_batch_size: At most this many files per delete task.
        lists_on_executors: ``executor_factory`` can recreate the storage inside Spark tasks.
        lists_key_ranges: ``list_range`` lists only the range (object stores start a listing
            after a given key), so ranges of one prefix are worth listing in parallel.
        names_before_stats: ``scan_names`` lists a directory's names and kinds without a
            system call per file, and ``stat_paths`` stats the files a caller still needs
            (local disks: a stat per file is most of a listing's cost; object stores return
            sizes and times with the names anyway).
        probes_by_name: ``exists`` asks for the one name, without raising or listing (local
            disks: one system call); else it lists the parent, which a caller that only wants
            to know whether the next commit is there should not pay for.
    """

    listing_concurrency = 1
    flat_listing = False
    batched_deletes = False
    delete_batch_size = 256
    lists_on_executors = False
    lists_key_ranges = False
    names_before_stats = False
    probes_by_name = False

    def __init__(self, root: str) -> None:
        self.root = root

    def _check_relative(self, rel: str) -> str:
        if rel and "//" not in rel and "/." not in rel and rel[0] not in "./" and rel[-1] != "/":
            return rel  # already what normpath gives (no empty, '.' or '..' segment): inside
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

    def scan_dir(self, rel: str = "") -> DirScan:
        """List one directory into columns (no object per entry where the storage can).

        Args:
            rel: Directory relative to the root ("" for the root itself).

        Returns:
            The entries as columns; empty if the directory is missing.
        """
        scan = DirScan()
        for e in self.list_dir(rel):
            scan.append(e.path, e.size_bytes, e.modification_time_ms, e.is_dir, e.is_symlink)
        return scan

    def scan_names(self, rel: str = "") -> DirScan:
        """List one directory's names and kinds; files' sizes and times may be left None.

        Where ``names_before_stats`` is False every entry is complete (this is ``scan_dir``).

        Args:
            rel: Directory relative to the root ("" for the root itself).

        Returns:
            The entries as columns; empty if the directory is missing.
        """
        return self.scan_dir(rel)

    def list_names(self, rel: str = "") -> list[str]:
        """The names in one directory, of any kind (files, directories, links), unstatted.

        What a caller that only matches names needs (the log's newest commit when a build
        starts): the cheapest listing a storage has.

        Args:
            rel: Directory relative to the root ("" for the root itself).

        Returns:
            The names (not paths); empty if the directory is missing.
        """
        scan = self.scan_names(rel)
        return [path.rpartition("/")[2] for path in scan.paths]

    def exists(self, rel: str) -> bool:
        """Whether anything (a file, a directory, a link) is at ``rel``, by name.

        This default lists the parent directory; a local storage asks for the one name.

        Args:
            rel: A path relative to the root.
        """
        parent, _, name = self._check_relative(rel).rpartition("/")
        return name in self.list_names(parent)

    def directory_bytes(self, rel: str) -> int | None:
        """The size a directory takes, when known without listing it (None: not known).

        A local directory's size grows with its entries (4 KiB on ext4 up to about 100 names,
        12 KiB at 150, 60 KiB at 1,000, and never shrinks): what tells a caller whether one
        listing of it is cheap.

        Args:
            rel: A directory relative to the root.

        Returns:
            Its size; 0 when nothing exists there; None when not known (no such call, not a
            directory, or a directory that reports no size).
        """
        return None

    def stat_paths(self, rels: list[str]) -> DirScan:
        """Stat files a ``scan_names`` left unstatted, without following symbolic links.

        Args:
            rels: Paths relative to the root, as a listing of this storage gave them.

        Returns:
            The entries in the order given; a path gone since has size and mtime None.

        Raises:
            StorageError: When the storage has no such call (``names_before_stats`` is False)
                or a stat fails for another reason than the file being gone.
        """
        raise StorageError(f"{type(self).__name__} lists sizes with names; nothing to stat")

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

    def read_arrow_buffer(self, rel: str) -> Any:
        """Read a whole file into memory Arrow owns (a ``pyarrow.Buffer``), for a Parquet reader.

        Arrow's threads may then decode it and drop their references to it without the GIL
        (``delta.state.parquet_file``). This default copies ``read_bytes``; the local disk and S3
        read straight into the buffer (a 1,000,000-file checkpoint: 29 MB, one copy less).

        Args:
            rel: File path relative to the root.

        Returns:
            The content as a ``pyarrow.Buffer``.

        Raises:
            FileNotFoundError: When the file does not exist.
            StorageError: When reading fails for another reason.
        """
        return arrow_copy(self.read_bytes(rel))

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

    def list_range(
        self,
        rel: str = "",
        *,
        start_after: str | None = None,
        last: str | None = None,
        recursive: bool = False,
    ) -> list[FileEntry]:
        """The entries of ``rel`` whose paths sort after ``start_after``, up to ``last``.

        This default lists everything and keeps the range (correct, saves nothing); storages
        with ``lists_key_ranges`` list only the range.

        Args:
            rel: Directory relative to the root.
            start_after: Only paths after this relative path (None: from the first).
            last: Only paths up to and including this relative path (None: to the end).
            recursive: The whole subtree (``list_tree``) instead of one level (``list_dir``).

        Returns:
            Entries with paths relative to the root.
        """
        entries = self.list_tree(rel) if recursive else self.list_dir(rel)
        return [
            e
            for e in entries
            if (start_after is None or e.path > start_after) and (last is None or e.path <= last)
        ]

    def behind_links(self, rels: Iterable[str]) -> set[str]:
        """The paths among ``rels`` that are, or lie below, a symbolic link.

        Paths that do not come from a listing (the log's removes, an inventory report) are
        checked here before they are selected, so that a linked directory is reported as kept
        rather than as a failed delete. Object stores have no links: this default finds none.

        Args:
            rels: Canonical relative paths.

        Returns:
            Those whose own name or a parent directory is a symbolic link now.
        """
        return set()

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
        clean = require_canonical(rel, self.root)
        parent, _, name = clean.rpartition("/")
        if parent not in ("_delta_log", "_delta_log/_sidecars") or name in ("", "_last_checkpoint"):
            raise StorageError(f"refusing to delete '{rel}' in {self.root}: not a log file")
        return self._remove_file(clean)

    def replace_file(self, rel: str, data: bytes) -> None:
        """Write a small file whole, replacing the previous one atomically.

        Readers see the old file or the new one, never a part; a failure leaves the old one.
        This default is one ``pyarrow.fs`` output stream (one PUT on an object store); local
        disks and S3 override it.

        Args:
            rel: File path relative to the root.
            data: The whole content.

        Raises:
            StorageError: When the file could not be written.
        """
        try:
            filesystem, path = self.arrow_path(rel)
            with filesystem.open_output_stream(path) as out:
                out.write(data)
        except Exception as err:  # pyarrow raises OSError and its own errors per backend
            raise StorageError(f"cannot write {self.root}/{rel}: {err}") from err

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
        # never normalised: a spelling that is not canonical is refused, not deleted under the
        # name it normalises to (on an object store ``a//x`` and ``a/x`` are two objects)
        clean = require_canonical(rel, self.root) if rel else ""
        if not clean or clean == "_delta_log" or clean.startswith("_delta_log/"):
            raise StorageError(
                f"refusing to delete '{rel}' in {self.root}: it is the table root or its log"
            )
        return clean

    @abstractmethod
    def arrow_path(self, rel: str) -> tuple[Any, str]:
        """The ``pyarrow.fs`` filesystem and its path for ``rel``, to read and write Parquet.

        Args:
            rel: File path relative to the root.

        Returns:
            (filesystem, path on it).
        """

    def executor_factory(self) -> Callable[[], Storage]:
        """A picklable function that opens this storage again inside a Spark task.

        Returns:
            The factory (it carries the root and connection settings, never a live client).

        Raises:
            StorageError: When this storage cannot be opened on executors
                (``lists_on_executors`` is False).
        """
        raise StorageError(f"{type(self).__name__} at {self.root} cannot be listed on executors")


def arrow_copy(data: bytes) -> Any:
    """``data`` copied into a new ``pyarrow.Buffer``."""
    import pyarrow as pa

    buffer = pa.allocate_buffer(len(data))
    memoryview(buffer).cast("B")[:] = data
    return buffer


def read_into_arrow(stream: Any, size: int) -> Any:
    """Exactly ``size`` bytes of a binary stream (``readinto``) in a new ``pyarrow.Buffer``.

    Raises:
        OSError: When the stream ends early.
    """
    import pyarrow as pa

    buffer = pa.allocate_buffer(size)
    view = memoryview(buffer).cast("B")
    done = 0
    while done < size:
        got = stream.readinto(view[done:])
        if not got:
            raise OSError(f"the stream ended after {done} of {size} bytes")
        done += got
    return buffer
