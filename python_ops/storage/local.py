"""Local disks as a ``Storage``: ``os.scandir`` listing; symbolic links reported, never followed.

A local table can be listed and cleaned in Spark tasks (``lists_on_executors``) on one
assumption: the executors see the same files at the same path as the driver. That holds for
``local[*]``, ``local-cluster`` and a standalone cluster whose workers run on the driver's
machine, or on machines that mount the same shared filesystem at the same path. It is checked:
a task that does not find the table root fails with a ``StorageError`` saying so (never an
empty listing, which would select nothing and hide the mistake).
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import stat
import uuid
from collections.abc import Callable
from typing import Any

from python_ops.errors import StorageError
from python_ops.storage.base import DirScan, FileEntry, Storage, read_into_arrow

_FIRST_READ = 64 * 1024  # read_bytes: a commit file in one read, from the allocator's heap
_LARGEST_READ = 16 * 1024 * 1024


def _reopen_on_executor(root: str) -> LocalStorage:
    """Open a local table again inside a Spark task, refusing a root this machine lacks."""
    if not os.path.isdir(os.path.join(root, "_delta_log")):
        raise StorageError(
            f"table {root} is not on the disk of this Spark executor (host "
            f"{socket.gethostname()}): listing or deleting a local table in Spark tasks needs "
            "executors that share the driver's disk at the same path (local, local-cluster or "
            "a standalone cluster on this machine, or a shared mount); run without "
            "cluster_listing otherwise"
        )
    return LocalStorage(root)


class LocalStorage(Storage):
    """A local directory tree, listed with ``os.scandir`` without following symlinks.

    ``executor_factory`` reopens it by path in Spark tasks (see the module docstring for the
    shared-disk assumption).
    """

    lists_on_executors = True
    names_before_stats = True

    def executor_factory(self) -> Callable[[], Storage]:  # noqa: D102
        return functools.partial(_reopen_on_executor, self.root)

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

    def scan_dir(self, rel: str = "") -> DirScan:  # noqa: D102
        base = self._check_relative(rel)
        prefix = f"{base}/" if base else ""
        scan = DirScan()
        paths, sizes, mtimes = scan.paths, scan.sizes, scan.mtimes
        dirs, links = scan.is_dir, scan.is_symlink
        try:
            with os.scandir(self._abs(base)) as it:
                for de in it:
                    st = de.stat(follow_symlinks=False)  # lstat: a link is reported, not followed
                    mode = st.st_mode
                    is_dir = stat.S_ISDIR(mode)
                    paths.append(prefix + de.name)
                    sizes.append(0 if is_dir else st.st_size)
                    mtimes.append(st.st_mtime_ns // 1_000_000)
                    dirs.append(is_dir)
                    links.append(stat.S_ISLNK(mode))
        except FileNotFoundError:
            return DirScan()
        except OSError as err:
            raise StorageError(f"cannot list {self._abs(base)}: {err}") from err
        return scan

    def scan_names(self, rel: str = "") -> DirScan:  # noqa: D102
        base = self._check_relative(rel)
        prefix = f"{base}/" if base else ""
        files: list[str] = []
        dirs: list[str] = []
        dir_ms: list[int] = []
        links: list[str] = []
        try:
            with os.scandir(self._abs(base)) as it:
                # the kind comes with the name (d_type; os.scandir stats only where the
                # filesystem leaves it unknown): a file is not statted here, a directory is
                # (few; its time is kept), a link is reported and never followed
                for de in it:
                    if de.is_symlink():
                        links.append(de.name)
                    elif de.is_dir(follow_symlinks=False):
                        try:
                            dir_ms.append(de.stat(follow_symlinks=False).st_mtime_ns // 1_000_000)
                        except FileNotFoundError:
                            continue  # gone since it was listed
                        dirs.append(de.name)
                    else:
                        files.append(de.name)
        except FileNotFoundError:
            return DirScan()
        except OSError as err:
            raise StorageError(f"cannot list {self._abs(base)}: {err}") from err
        n_files, n_dirs, n_links = len(files), len(dirs), len(links)
        return DirScan(
            paths=[prefix + name for name in (*files, *dirs, *links)],
            sizes=[None] * n_files + [0] * (n_dirs + n_links),
            mtimes=[None] * n_files + dir_ms + [0] * n_links,
            is_dir=[False] * n_files + [True] * n_dirs + [False] * n_links,
            is_symlink=[False] * (n_files + n_dirs) + [True] * n_links,
        )

    def stat_paths(self, rels: list[str]) -> DirScan:  # noqa: D102
        # paths this storage's own listing gave (stat only: nothing is changed through them)
        root = self.root.rstrip("/") + "/"
        lstat = os.lstat  # a link is reported, not followed
        out = DirScan(paths=rels)
        sizes, mtimes, dirs, links = out.sizes, out.mtimes, out.is_dir, out.is_symlink
        for rel in rels:
            try:
                st = lstat(root + rel)
            except FileNotFoundError:  # deleted since it was listed
                sizes.append(None)
                mtimes.append(None)
                dirs.append(False)
                links.append(False)
                continue
            except OSError as err:
                raise StorageError(f"cannot stat {root}{rel}: {err}") from err
            is_dir = stat.S_ISDIR(st.st_mode)
            sizes.append(0 if is_dir else st.st_size)
            mtimes.append(st.st_mtime_ns // 1_000_000)
            dirs.append(is_dir)
            links.append(stat.S_ISLNK(st.st_mode))
        return out

    def read_bytes(self, rel: str) -> bytes:  # noqa: D102
        path = self._abs(rel)
        try:
            # a file object costs five more system calls than open, read to the end, close (a
            # commit file is about 1 KB): each call lets another thread take the interpreter,
            # which a post-hook reading a dozen commits then waits for (docs/benchmarks.md)
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                chunk = _FIRST_READ
                parts = [os.read(fd, chunk)]
                while parts[-1]:  # a big file: fewer, larger reads
                    chunk = min(chunk * 2, _LARGEST_READ)
                    parts.append(os.read(fd, chunk))
            finally:
                os.close(fd)
            return parts[0] if len(parts) == 2 else b"".join(parts)
        except FileNotFoundError:
            raise
        except OSError as err:
            raise StorageError(f"cannot read {path}: {err}") from err

    def read_arrow_buffer(self, rel: str) -> Any:  # noqa: D102
        path = self._abs(rel)
        try:
            with open(path, "rb", buffering=0) as fh:
                return read_into_arrow(fh, os.fstat(fh.fileno()).st_size)
        except FileNotFoundError:
            raise
        except OSError as err:
            raise StorageError(f"cannot read {path}: {err}") from err

    def arrow_path(self, rel: str) -> tuple[Any, str]:  # noqa: D102
        from pyarrow import fs as pafs

        return pafs.LocalFileSystem(), self._abs(rel)

    def replace_file(self, rel: str, data: bytes) -> None:
        """As ``Storage.replace_file``: written and synced beside the file, renamed over it.

        Hadoop's checksum of the file (``.<name>.crc``, which Hadoop's local file system and so
        Delta write beside each file) is removed first: Hadoop refuses a file that no longer
        matches its checksum (Delta then reads it as absent), and reads one without a checksum
        unverified.
        """
        path = self._abs(rel)
        folder, name = os.path.split(path)
        temporary = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            try:
                with open(temporary, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(folder, f".{name}.crc"))
                os.replace(temporary, path)  # atomic: readers see the old or the new file
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)
        except OSError as err:
            raise StorageError(f"cannot write {path}: {err}") from err

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
