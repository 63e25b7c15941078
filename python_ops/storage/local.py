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
from collections.abc import Callable, Iterable
from typing import Any

from python_ops.errors import StorageError
from python_ops.storage.base import DirScan, FileEntry, Storage, read_into_arrow

_FIRST_READ = 64 * 1024  # read_bytes: a commit file in one read, from the allocator's heap
_LARGEST_READ = 16 * 1024 * 1024
# whether os.access can leave a link unfollowed here (else exists asks lstat)
_ACCESS_NOFOLLOW = os.access in os.supports_follow_symlinks


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
    probes_by_name = True

    def __init__(self, root: str) -> None:
        super().__init__(root)
        # what os.path.join(root, name) puts before a relative name (every read asks)
        self._prefix = root if not root or root.endswith("/") else f"{root}/"

    def executor_factory(self) -> Callable[[], Storage]:  # noqa: D102
        return functools.partial(_reopen_on_executor, self.root)

    def _abs(self, rel: str) -> str:
        clean = self._check_relative(rel)  # relative, inside: never starts with "/"
        return self._prefix + clean if clean else self.root

    def list_dir(self, rel: str = "") -> list[FileEntry]:  # noqa: D102
        base = self._check_relative(rel)
        prefix = f"{base}/" if base else ""
        entries = []
        try:
            with os.scandir(self._abs(base)) as it:
                for de in it:
                    try:  # lstat: a link is reported, not followed
                        st = de.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # gone since the scan (a writer's staged file): skip it alone
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
                    try:  # lstat: a link is reported, not followed
                        st = de.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # gone since the scan: one vanished entry never empties a listing
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

    def list_names(self, rel: str = "") -> list[str]:  # noqa: D102
        try:  # names only: no DirEntry per name, no stat
            return os.listdir(self._abs(self._check_relative(rel)))
        except FileNotFoundError:
            return []
        except OSError as err:
            raise StorageError(f"cannot list {self._abs(rel)}: {err}") from err

    def exists(self, rel: str) -> bool:  # noqa: D102
        path = self._abs(rel)
        if _ACCESS_NOFOLLOW:  # one faccessat, a link not followed (it is an entry), and no
            return os.access(path, os.F_OK, follow_symlinks=False)  # exception for a miss
        return os.path.lexists(path)  # one lstat

    def directory_bytes(self, rel: str) -> int | None:  # noqa: D102
        try:
            st = os.lstat(self._abs(rel))
        except FileNotFoundError:
            return 0
        except OSError as err:
            raise StorageError(f"cannot stat {self._abs(rel)}: {err}") from err
        # a directory that reports no size (some FUSE mounts): not known, never "absent"
        return (st.st_size or None) if stat.S_ISDIR(st.st_mode) else None

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

    def behind_links(self, rels: Iterable[str]) -> set[str]:  # noqa: D102
        root = self.root.rstrip("/") + "/"
        linked: dict[str, bool] = {}  # path -> itself or a parent is a link

        def is_linked(path: str) -> bool:
            if path not in linked:
                parent = path.rpartition("/")[0]
                try:
                    own = stat.S_ISLNK(os.lstat(root + path).st_mode)
                except OSError:
                    own = False  # gone: nothing to follow
                linked[path] = (bool(parent) and is_linked(parent)) or own
            return linked[path]

        return {rel for rel in rels if is_linked(rel)}

    def _open_dir(self, rel: str) -> int:
        """A descriptor of the directory ``rel``, opened name by name without following links.

        Raises:
            FileNotFoundError: When a name on the way is missing.
            OSError: ``ELOOP`` or ``ENOTDIR`` when a name on the way is a link or a file.
        """
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for name in rel.split("/") if rel else ():
                inner = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def delete_files(self, rels: list[str]) -> list[str]:
        """As ``Storage.delete_files``, through directory descriptors: no link is ever followed.

        Each parent directory is opened from the root one name at a time with ``O_NOFOLLOW``
        (once per directory, not per file), and the file is unlinked relative to it: a parent
        that is a symbolic link stops the delete (the path is returned as not deleted), where a
        plain ``unlink`` would follow it out of the table.
        """
        return self._unlink_all([self._check_deletable(rel) for rel in rels])

    def _remove_file(self, clean: str) -> bool:
        return not self._unlink_all([clean])

    def _unlink_all(self, cleans: list[str]) -> list[str]:
        """Unlink checked relative paths, grouped by parent; the paths not deleted."""
        by_parent: dict[str, list[str]] = {}
        for clean in cleans:
            parent, _, name = clean.rpartition("/")
            by_parent.setdefault(parent, []).append(name)
        failed: list[str] = []
        for parent, names in by_parent.items():
            prefix = f"{parent}/" if parent else ""
            try:
                fd = self._open_dir(parent)
            except FileNotFoundError:
                continue  # the directory is gone, so are its files
            except OSError:
                failed += [prefix + name for name in names]  # a link or a file on the way
                continue
            try:
                failed += [prefix + name for name in names if not _unlink_at(fd, name)]
            finally:
                os.close(fd)
        return failed

    def delete_dir(self, rel: str) -> bool:  # noqa: D102
        parent, _, name = self._check_deletable(rel).rpartition("/")
        try:
            fd = self._open_dir(parent)
        except FileNotFoundError:
            return True
        except OSError:
            return False  # a link or a file on the way
        try:
            if stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
                return False
            os.rmdir(name, dir_fd=fd)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _unlink_at(dir_fd: int, name: str) -> bool:
    """Unlink ``name`` in an open directory (a link itself, never its target); True when gone."""
    try:
        if stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
            return False
        os.unlink(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
