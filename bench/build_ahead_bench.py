"""The version before each build: read by each start, or by the command's first start for all.

Every build of a maintained model records its table's latest version as it starts
(``build_clock``). Read between two models' builds, on a thread that comes to it cold, that
read costs about ten times what it costs in a loop (``build_start_bench.py``: the same calls
idle). So the command's first start reads every maintained table's version at once, and each
start then only checks that its own is still as seen (two names asked). This bench times both
inside real builds: the fleet project (``tests/helpers/fleet_project.py``: N tiny table
models + 5 incremental merges, the maintenance post-hook on each, ``threads: 4``, the
embedded engine), repeat builds in fresh processes, alternating: each start reading its own
table (the look-ahead off: no manifest nodes given to the clock), and as shipped. Thread CPU
of each start (``StartedBuild.own_cpu_s``: what the post-hook's line counts), summed over the
build and its median; the first start, which reads every table when the look-ahead is on.

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
project, ahead, out = sys.argv[1], sys.argv[2] == "on", sys.argv[3]
from dbt.adapters.sparkdelta import build_clock, run_operations
if not ahead:  # the clock gets no manifest nodes: each start reads its own table
    run_operations.RunOperations._manifest_nodes = lambda self: ()
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
           "starts": len(cpus)}, open(out, "w"))
"""


def build(project: Path, warehouse: Path, ahead: bool, code: Path) -> dict[str, float]:
    """One repeat build in a fresh process: its starts' own thread CPU (seconds)."""
    args = [str(project), "on" if ahead else "off"]
    return dbt_driver(DRIVER, args, project=project, warehouse=warehouse, code=code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code is timed")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    options = parser.parse_args()
    compile_package()
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as work:
        project = write_fleet_project(Path(work) / "p", tables=options.models, incremental=5)
        warehouse = Path(work) / "w"
        for _ in range(2):  # the tables exist, with a few commits: the rest are repeats
            build(project, warehouse, True, options.code)
        for i in range(options.pairs):
            for ahead in (True, False) if i % 2 == 0 else (False, True):
                runs[ahead].append(build(project, warehouse, ahead, options.code))
                print(ahead, runs[ahead][-1], flush=True)

    def med(ahead: bool, key: str, scale: float) -> float:
        return statistics.median(r[key] for r in runs[ahead]) * scale

    starts = int(runs[True][0]["starts"])
    lines = [
        "## The version before each build: each start, or the command's first start for all",
        "",
        f"`bench/build_ahead_bench.py --models {options.models} --pairs {options.pairs}`: the "
        f"fleet project ({options.models} tiny table models + 5 incremental merges, `threads: "
        "4`, embedded engine), repeat builds in fresh processes, alternating; each start's own "
        "thread CPU (what the post-hook's line counts), medians over the builds. 'Each start "
        "reads its own': the look-ahead off; 'first start reads all': as shipped (each later "
        "start asks two names).",
        "",
        "| starts per build | figure | each start reads its own | first start reads all | ratio |",
        "|---|---|---|---|---|",
    ]
    for key, name, scale, unit in (
        ("total", "all starts' CPU", 1000, "ms"),
        ("median", "one start's CPU, median", 1e6, "us"),
        ("first", "the first start's CPU", 1000, "ms"),
    ):
        own, ahead = med(False, key, scale), med(True, key, scale)
        lines.append(
            f"| {starts} | {name} ({unit}) | {own:.1f} | {ahead:.1f} | {ahead / own:.2f} |"
        )
    if options.write:
        write_section("BUILD-AHEAD", lines, source="bench/build_ahead_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
