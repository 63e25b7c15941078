"""What recording a build's start costs as a table's log grows, and why system calls dominate.

Every build of a maintained model records its table's latest version first
(``build_start.head_version``), so the post-hook can read the build's own commits. A log keeps
every commit its retention keeps (30 days by default: 720 commits and their checksums for an
hourly build, 2,880 every 15 minutes), so the cost must not follow the log's length.

For logs of 25, 120, 720 and 2,880 versions (a commit and a checksum each, a checkpoint every
10, ``_last_checkpoint`` pointing at the newest), in one process:

- ``head_version`` as it chooses (one listing of a short log; from the checkpoint's pointer,
  name by name, past ``SHORT_LOG_BYTES`` of directory), against one listing of the whole log
  (``Storage.list_names``, the way before), thread CPU per call, median of 7 rounds;
- the same inside a busy process: three other Python threads running (a dbt build has four),
  where every system call gives the interpreter's lock away and waits for it back.

Both strategies must agree on every log: the bench asserts they do.

    .venv/bin/python bench/build_start_bench.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import write_section  # noqa: E402

from python_ops.maintenance.facts import build_start  # noqa: E402
from python_ops.storage.local import LocalStorage  # noqa: E402

VERSIONS = (25, 120, 720, 2880)
CHECKPOINT_EVERY = 10


def write_log(root: Path, versions: int) -> Path:
    """A log of ``versions`` commits and checksums, checkpoints and the pointer; its table."""
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for v in range(versions):
        (log / f"{v:020d}.json").touch()
        (log / f"{v:020d}.crc").touch()
        if v and v % CHECKPOINT_EVERY == 0:
            (log / f"{v:020d}.checkpoint.parquet").touch()
    newest = (versions - 1) // CHECKPOINT_EVERY * CHECKPOINT_EVERY
    (log / "_last_checkpoint").write_text(json.dumps({"version": newest, "size": 1}))
    return root


def whole_listing(storage: LocalStorage) -> int | None:
    """The way before: ``head_version`` with every log taken as short (listed whole)."""
    short = build_start.SHORT_LOG_BYTES
    build_start.SHORT_LOG_BYTES = 1 << 62
    try:
        return build_start.head_version(storage)
    finally:
        build_start.SHORT_LOG_BYTES = short


@contextmanager
def busy(threads: int) -> Iterator[None]:
    """``threads`` other Python threads running pure Python while the block runs."""
    stop = threading.Event()

    def spin() -> None:
        n = 0
        while not stop.is_set():
            n += 1

    workers = [threading.Thread(target=spin, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        stop.set()
        for w in workers:
            w.join()


def cpu_us(call: Callable[[], object], calls: int, rounds: int = 7) -> float:
    """Median thread CPU per call (us) over ``rounds`` rounds of ``calls`` calls."""
    per_round = []
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(calls):
            call()
        per_round.append((time.thread_time() - started) / calls * 1e6)
    return statistics.median(per_round)


def measure(work: Path) -> list[dict[str, float]]:
    """Each log size: names, directory bytes, and each strategy's CPU per call, idle and busy."""
    rows = []
    for versions in VERSIONS:
        root = write_log(work / f"v{versions}", versions)
        storage = LocalStorage(str(root))
        assert build_start.head_version(storage) == whole_listing(storage) == versions - 1
        names = len(os.listdir(root / "_delta_log"))
        row: dict[str, float] = {
            "versions": versions,
            "names": names,
            "dir_bytes": os.lstat(root / "_delta_log").st_size,
        }
        calls = max(20, 20_000 // names)
        for label, threads in (("idle", 0), ("busy", 3)):
            with busy(threads):
                row[f"chosen {label}"] = cpu_us(partial(build_start.head_version, storage), calls)
                row[f"listing {label}"] = cpu_us(partial(whole_listing, storage), calls)
        rows.append(row)
    for threads in (0, 3):
        with busy(threads):
            us = cpu_us(partial(os.lstat, str(work)), 2000)
        rows.append({"lstat": 1, "threads": threads, "us": us})
    return rows


def render(rows: list[dict[str, float]]) -> list[str]:
    """The section's Markdown."""
    logs = [r for r in rows if "versions" in r]
    lstat = {int(r["threads"]): r["us"] for r in rows if "lstat" in r}
    lines = [
        "## The version before a build, as the log grows",
        "",
        f"`bench/build_start_bench.py` ({time.strftime('%Y-%m-%d')}): what every build of a "
        "maintained model pays first (`build_start.head_version`), on logs of a commit and a "
        f"checksum per version, a checkpoint every {CHECKPOINT_EVERY} and its pointer; thread "
        "CPU per call, median of 7 rounds, in one process. 'Busy': three other Python threads "
        "running, as in a dbt build of four threads. Both ways found the same version on every "
        f"log. Listed whole up to `SHORT_LOG_BYTES` = {build_start.SHORT_LOG_BYTES} bytes of "
        "directory; past it, the checkpoint's pointer and the commits after it, name by name.",
        "",
        "| versions | names | directory bytes | whole listing, idle (us) | as chosen, idle (us) "
        "| whole listing, busy (us) | as chosen, busy (us) | busy: listing / chosen |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in logs:
        lines.append(
            f"| {int(r['versions'])} | {int(r['names'])} | {int(r['dir_bytes'])} | "
            f"{r['listing idle']:.1f} | {r['chosen idle']:.1f} | {r['listing busy']:.1f} | "
            f"{r['chosen busy']:.1f} | {r['listing busy'] / r['chosen busy']:.2f} |"
        )
    lines += [
        "",
        f"One `lstat` costs {lstat[0]:.1f} us of the calling thread's CPU alone and "
        f"{lstat[3]:.1f} us with three busy Python threads: every system call gives the "
        "interpreter's lock away, and getting it back costs a switch. Three threads that "
        "always want the lock are the worst case: inside a real dbt build the other threads "
        "mostly wait for the engine, and keeping the lock through a hook's system calls "
        "changed nothing measurable there (`bench/hook_warmth_bench.py`: a hook's cost is "
        "its Python, run cold).",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="build-start-"))
    try:
        rows = measure(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = render(rows)
    print("\n".join(lines))
    if args.write:
        write_section("BUILD-START", lines, source="bench/build_start_bench.py")


if __name__ == "__main__":
    main()
