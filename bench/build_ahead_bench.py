"""The version before each build: read by each start, or by the command's first start for all.

Every build of a maintained model records its table's latest version as it starts
(``build_clock``). Read between two models' builds, on a thread that comes to it cold, that
read costs about ten times what it costs in a loop (``build_start_bench.py``: the same calls
idle). So the command's first start reads every maintained table's version at once, and each
start then only checks that its own is still as seen: one ``lstat`` of the log directory where
the look's stamp of it is trusted (``log_change``), else two names asked (``head_still``). This
bench times the three inside real builds: the fleet project (``tests/helpers/fleet_project.py``:
N tiny table models + 5 incremental merges, the maintenance post-hook on each, ``threads: 4``,
the embedded engine), repeat builds in fresh processes, alternating: each start reading its own
table (the look-ahead off: no manifest nodes given to the clock), the look-ahead with two names
asked by each start (no stamp taken), and as shipped. Thread CPU of each start
(``StartedBuild.own_cpu_s``: what the post-hook's line counts), summed over the build and its
median; the first start, which reads every table when the look-ahead is on.

    .venv/bin/python bench/build_ahead_bench.py --models 200 --pairs 4 --write
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import compile_package, dbt_driver, write_section  # noqa: E402

from tests.helpers.fleet_project import write_fleet_project  # noqa: E402

DRIVER = r"""
import json, statistics, sys, time
project, mode, out = sys.argv[1], sys.argv[2], sys.argv[3]
from dbt.adapters.sparkdelta import build_clock, run_operations
if mode == "own":  # the clock gets no manifest nodes: each start reads its own table
    run_operations.RunOperations._manifest_nodes = lambda self: ()
if mode == "names":  # the look takes no stamp: each start asks two names
    build_clock.log_stamp = lambda location: None
stamps = []
check = build_clock.log_unchanged

def log_unchanged(stamp):
    stamps.append(check(stamp))
    return stamps[-1]

build_clock.log_unchanged = log_unchanged
take = build_clock.BuildClock.take
starts = []

def taken(self, node):
    started = take(self, node)
    if started is not None:
        starts.append((started.started_at_ms, started.own_cpu_s))
    return started

build_clock.BuildClock.take = taken
from dbt.cli.main import dbtRunner
args = ["build", "-q", "--threads", "4", "--project-dir", project, "--profiles-dir", project]
done = dbtRunner().invoke(args)
assert done.success, done.exception
cpus = [cpu for _, cpu in sorted(starts)]
json.dump({"total": sum(cpus), "median": statistics.median(cpus), "first": cpus[0],
           "starts": len(cpus), "stamps held": sum(stamps)}, open(out, "w"))
"""
# each start reads its own table; the look-ahead, each start asking two names; as shipped
MODES = ("own", "names", "stamp")


def build(project: Path, warehouse: Path, mode: str, code: Path) -> dict[str, float]:
    """One repeat build in a fresh process: its starts' own thread CPU (seconds)."""
    return dbt_driver(DRIVER, [str(project), mode], project=project, warehouse=warehouse, code=code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code is timed")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    options = parser.parse_args()
    compile_package()
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as work:
        project = write_fleet_project(Path(work) / "p", tables=options.models, incremental=5)
        warehouse = Path(work) / "w"
        for _ in range(2):  # the tables exist, with a few commits: the rest are repeats
            build(project, warehouse, "stamp", options.code)
        for i in range(options.pairs):  # rounds, each mode once, in turning order
            for mode in MODES[i % 3 :] + MODES[: i % 3]:
                runs[mode].append(build(project, warehouse, mode, options.code))
                print(mode, runs[mode][-1], flush=True)

    def med(mode: str, key: str, scale: float) -> float:
        return statistics.median(r[key] for r in runs[mode]) * scale

    starts = int(runs["stamp"][0]["starts"])
    held = med("stamp", "stamps held", 1)
    lines = [
        "## The version before each build: each start, or the command's first start for all",
        "",
        f"`bench/build_ahead_bench.py --models {options.models} --pairs {options.pairs}`: the "
        f"fleet project ({options.models} tiny table models + 5 incremental merges, `threads: "
        "4`, embedded engine), repeat builds in fresh processes, alternating; each start's own "
        "thread CPU (what the post-hook's line counts), medians over the builds. 'Each start "
        "reads its own': the look-ahead off; 'two names': the first start reads all, each "
        "later start asks two names (`head_still`); 'one lstat': as shipped, each later start "
        "checks the look's stamp of its log directory (`log_change`; two names where it is not "
        f"trusted or changed). Starts whose stamp held, as shipped: {held:.0f}.",
        "",
        "| starts per build | figure | each start reads its own | two names | one lstat | "
        "one lstat / two names |",
        "|---|---|---|---|---|---|",
    ]
    for key, name, scale, unit in (
        ("total", "all starts' CPU", 1000, "ms"),
        ("median", "one start's CPU, median", 1e6, "us"),
        ("first", "the first start's CPU", 1000, "ms"),
    ):
        own, names, stamp = (med(mode, key, scale) for mode in MODES)
        lines.append(
            f"| {starts} | {name} ({unit}) | {own:.1f} | {names:.1f} | {stamp:.1f} | "
            f"{stamp / names:.2f} |"
        )
    if options.write:
        write_section("BUILD-AHEAD", lines, source="bench/build_ahead_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
