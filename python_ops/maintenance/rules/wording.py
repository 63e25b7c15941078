"""How an op's counts read to people: sizes in scaled units, and what a (dry) run did.

One wording for the dbt post-hook's log line, the run-operations' progress lines and the
per-model table, so a dry run always says "would" and a real run says what it did.
"""

from __future__ import annotations

_UNITS = ("B", "KB", "MB", "GB", "TB")


def size_text(size_bytes: int | float) -> str:
    """A byte count in decimal units: ``512 B``, ``12.3 KB``, ``4.56 MB``, ``1.20 GB``.

    Args:
        size_bytes: Bytes (0 or more).

    Returns:
        The size with at most three significant digits and its unit.
    """
    size = float(size_bytes)
    unit = 0
    while abs(size) >= 1000 and unit < len(_UNITS) - 1:
        size /= 1000
        unit += 1
    if unit == 0:
        return f"{int(size)} B"
    digits = 2 if abs(size) < 10 else 1 if abs(size) < 100 else 0
    return f"{size:.{digits}f} {_UNITS[unit]}"


def target_size_text(size_bytes: int) -> str:
    """A target file size as configured: ``100 MiB`` for whole MiB, else ``size_text``.

    Targets are powers of two in Delta and in the docs (100 MiB, 1 GiB); in decimal units
    100 MiB would read ``105 MB``.
    """
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if size_bytes > 0 and size_bytes % scale == 0:
            return f"{size_bytes // scale} {unit}"
    return size_text(size_bytes)


def files_text(count: int, size_bytes: int, noun: str = "file") -> str:
    """``3 files (1.20 MB)``; ``1 file (512 B)``."""
    plural = noun if count == 1 else f"{noun}s"
    return f"{count} {plural} ({size_text(size_bytes)})"


def did_text(
    op: str,
    *,
    dry_run: bool,
    files_removed: int,
    bytes_removed: int,
    files_added: int = 0,
    bytes_added: int = 0,
) -> str:
    """What one op did (or would do, for a dry run), with files and bytes.

    Args:
        op: ``vacuum``, ``optimize``, ``purge`` or ``cleanup_logs``.
        dry_run: The op only reported.
        files_removed: Files deleted or removed from the table (or that would be).
        bytes_removed: Their bytes.
        files_added: Files written (OPTIMIZE).
        bytes_added: Their bytes.

    Returns:
        E.g. ``would delete 12 files (4.56 MB)`` or ``rewrote 8 files (1.20 MB) into 2 files
        (1.10 MB)``.
    """
    if op in ("optimize", "purge"):  # both rewrite files; nothing is deleted from storage
        removed = files_text(files_removed, bytes_removed)
        if dry_run:
            return f"would rewrite {removed}"
        if files_removed == 0 and files_added == 0:
            return "rewrote nothing"
        return f"rewrote {removed} into {files_text(files_added, bytes_added)}"
    noun = "log file" if op == "cleanup_logs" else "file"
    verb = "would delete" if dry_run else "deleted"
    return f"{verb} {files_text(files_removed, bytes_removed, noun)}"
