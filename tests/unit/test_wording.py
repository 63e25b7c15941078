"""How op counts read: scaled sizes, and a dry run that says "would"."""

from __future__ import annotations

import pytest

from python_ops.maintenance.rules.wording import (
    did_text,
    files_text,
    size_text,
    target_size_text,
)


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.00 KB"),
        (2048, "2.05 KB"),
        (12_345, "12.3 KB"),
        (123_456, "123 KB"),
        (4_560_000, "4.56 MB"),
        (1_200_000_000, "1.20 GB"),
        (3 * 10**12, "3.00 TB"),
    ],
)
def test_sizes_are_in_scaled_decimal_units(size: int, text: str) -> None:
    assert size_text(size) == text


def test_file_counts_agree_in_number() -> None:
    assert files_text(1, 512) == "1 file (512 B)"
    assert files_text(3, 1_200_000, "log file") == "3 log files (1.20 MB)"


def test_a_dry_run_says_would_and_a_real_run_says_what_it_did() -> None:
    counts = {"files_removed": 12, "bytes_removed": 4_560_000}
    assert did_text("vacuum", dry_run=True, **counts) == "would delete 12 files (4.56 MB)"
    assert did_text("vacuum", dry_run=False, **counts) == "deleted 12 files (4.56 MB)"
    assert did_text("cleanup_logs", dry_run=True, **counts) == "would delete 12 log files (4.56 MB)"
    assert did_text("optimize", dry_run=True, **counts) == "would rewrite 12 files (4.56 MB)"
    rewrote = did_text("optimize", dry_run=False, **counts, files_added=1, bytes_added=4_000_000)
    assert rewrote == "rewrote 12 files (4.56 MB) into 1 file (4.00 MB)"
    assert did_text("optimize", dry_run=False, files_removed=0, bytes_removed=0) == (
        "rewrote nothing"
    )


def test_a_threshold_reads_as_it_was_set() -> None:
    from python_ops.cli.render import threshold_text

    assert threshold_text(32 * 1024 * 1024) == "32 MiB"  # the default, not "33.6 MB"
    assert threshold_text(100_000_000) == "100 MB"


def test_a_purge_says_it_rewrote_files_not_that_it_deleted_them() -> None:
    counts = {"files_removed": 1, "bytes_removed": 2_000, "files_added": 1, "bytes_added": 1_500}
    assert did_text("purge", dry_run=False, **counts) == (
        "rewrote 1 file (2.00 KB) into 1 file (1.50 KB)"
    )
    assert did_text("purge", dry_run=True, **counts) == "would rewrite 1 file (2.00 KB)"


@pytest.mark.parametrize(
    ("size", "text"),
    [(100 * 2**20, "100 MiB"), (2**30, "1 GiB"), (128 * 2**20, "128 MiB"), (128_000_000, "128 MB")],
)
def test_a_target_size_reads_as_the_docs_give_it(size: int, text: str) -> None:
    assert target_size_text(size) == text
