"""Object stores and HDFS (GCS, ADLS, HDFS; S3 has its own) as a ``Storage`` via ``pyarrow.fs``."""

from __future__ import annotations

import posixpath
from typing import Any

from python_ops.errors import StorageError
from python_ops.storage.base import FileEntry, Storage


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
