"""Where a post-hook's CPU goes inside a build: the same hook, cold and warm.

A generated project (``tests/helpers/fleet_project.py``: N tiny table models + 5 incremental
merges, the maintenance post-hook on each) is built on the embedded engine, a first build (an
empty warehouse) and a repeat build, in one dbt process each. Each model's post-hook runs as
dbt calls it (cold: right after its materialization, whose dbt, Jinja and engine work ran on
the same thread), and then twice more at once with the same start facts (warm: the same reads
of the same files, the same decisions). Thread CPU per call, medians over the models; the build
start's own time is left out of all three. With ``--threads 1`` and the project's 4.

What it tells: how much of a hook is the work itself and how much is running it cold in a busy
process. It is not the hook's cost (the first call is: the adapter's line, ``fleet_bench.py``).
The extra calls keep their proof rows too: the warehouse is the bench's own.

    .venv/bin/python bench/hook_warmth_bench.py --models 200 --write
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import compile_package, dbt_driver, write_section  # noqa: E402

from tests.helpers.fleet_project import write_fleet_project  # noqa: E402

DRIVER = r"""
import json, os, statistics, sys, time
project, threads, out = sys.argv[1], sys.argv[2], sys.argv[3]
from dbt.adapters.sparkdelta import run_operations as ro
first_call = ro.RunOperations.after_build
calls = {"cold": [], "warm": [], "warm again": []}

def timed(self, model, invocation_id, history, started):
    own = started.own_cpu_s if started else 0.0
    began = time.thread_time()
    result = first_call(self, model, invocation_id, history)
    return result, time.thread_time() - began - own

def three_times(self, model, invocation_id, history):
    key = str(ro.node_value(model, "unique_id") or "")
    with self.build_clock._lock:
        started = self.build_clock._started.get(key)
    result, cpu = timed(self, model, invocation_id, history, started)
    calls["cold"].append(cpu)
    for name in ("warm", "warm again"):
        if started is not None:  # the same start facts again
            with self.build_clock._lock:
                self.build_clock._started[key] = started
        calls[name].append(timed(self, model, invocation_id, history, started)[1])
    return result

ro.RunOperations.after_build = three_times
from dbt.cli.main import dbtRunner
args = ["build", "-q", "--threads", threads, "--project-dir", project, "--profiles-dir", project]
done = dbtRunner().invoke(args)
assert done.success, done.exception
medians = {k: statistics.median(v) * 1e6 for k, v in calls.items()}
json.dump({**medians, "hooks": len(calls["cold"])}, open(out, "w"))
"""


def build(project: Path, warehouse: Path, threads: int, code: Path) -> dict[str, float]:
    """One dbt build with each hook called three times; the medians (us) of each call."""
    args = [str(project), str(threads)]
    return dbt_driver(DRIVER, args, project=project, warehouse=warehouse, code=code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code is timed")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    options = parser.parse_args()
    compile_package()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        project = write_fleet_project(Path(work) / "p", tables=options.models, incremental=5)
        for threads in (4, 1):
            warehouse = Path(work) / f"w{threads}"
            for kind in ("first", "repeat"):
                found = build(project, warehouse, threads, options.code)
                rows.append((threads, kind, found))
                print(threads, kind, found, flush=True)
    lines = [
        "## A post-hook cold and warm (where its CPU goes inside a build)",
        "",
        f"`bench/hook_warmth_bench.py --models {options.models}`: a generated project of "
        f"{options.models} tiny table models + 5 incremental merges on the embedded engine, one "
        "dbt process per build; each model's post-hook as dbt calls it (cold), then twice more "
        "at once with the same start facts (warm: the same reads and decisions). Thread CPU "
        "per call, median over the models, the build start's own time left out.",
        "",
        "| threads | build | hooks | cold (us) | warm (us) | warm again (us) | cold / warm |",
        "|---|---|---|---|---|---|---|",
    ]
    for threads, kind, f in rows:
        lines.append(
            f"| {threads} | {kind} | {f['hooks']:.0f} | {f['cold']:.0f} | {f['warm']:.0f} | "
            f"{f['warm again']:.0f} | {f['cold'] / f['warm']:.2f} |"
        )
    if options.write:
        write_section("HOOK-WARMTH", lines, source="bench/hook_warmth_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
