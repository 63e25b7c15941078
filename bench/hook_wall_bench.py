"""What a post-hook's CPU adds to a build's wall: a known extra cost in every hook, timed.

The fleet bench (``fleet_bench.py``) reads each build's post-hooks' own thread CPU from the
adapter's line. Whether that CPU is also the wall it adds depends on the build: dbt's worker
threads share one interpreter lock, and a hook's Python runs only while it holds it. This bench
answers it on the same generated project (``tests/helpers/fleet_project.py``: N tiny table
models + 5 incremental merges, the maintenance post-hook on each, ``threads: 4``, the embedded
engine): repeat builds in fresh processes, alternating, with every post-hook as it is and with
every post-hook made ``--extra-ms`` longer (a loop of Python holding the lock, counted in the
hook's thread CPU). The wall the extra CPU added, over that CPU, is the share of a hook's CPU
that reaches the build's wall: 1 means every millisecond of it does.

    .venv/bin/python bench/hook_wall_bench.py --models 200 --pairs 6 --write
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
import json, resource, sys, time
project, extra_ms, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
from dbt.adapters.sparkdelta import run_operations as ro
hook = ro.RunOperations.after_build
added = [0.0]

def longer(self, model, invocation_id, history):
    began = time.thread_time()
    while time.thread_time() - began < extra_ms / 1000:
        sum(range(100))  # Python, holding the interpreter's lock as a hook's own code does
    added[0] += time.thread_time() - began
    return hook(self, model, invocation_id, history)

if extra_ms:
    ro.RunOperations.after_build = longer
from dbt.cli.main import dbtRunner
wall = time.perf_counter()
args = ["build", "-q", "--threads", "4", "--project-dir", project, "--profiles-dir", project]
done = dbtRunner().invoke(args)
assert done.success, done.exception
wall = time.perf_counter() - wall
usage = resource.getrusage(resource.RUSAGE_SELF)
json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "added": added[0]}, open(out, "w"))
"""


def build(project: Path, warehouse: Path, extra_ms: float, code: Path) -> dict[str, float]:
    """One repeat build in a fresh process: its wall, CPU and the extra CPU its hooks spent."""
    args = [str(project), str(extra_ms)]
    return dbt_driver(DRIVER, args, project=project, warehouse=warehouse, code=code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--extra-ms", type=float, default=10.0, help="added to every hook")
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code is timed")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    options = parser.parse_args()
    compile_package()
    pairs = []
    with tempfile.TemporaryDirectory() as work:
        project = write_fleet_project(Path(work) / "p", tables=options.models, incremental=5)
        warehouse = Path(work) / "w"
        build(project, warehouse, 0, options.code)  # the tables exist: the rest are repeats
        build(project, warehouse, 0, options.code)
        for i in range(options.pairs):
            order = (0.0, options.extra_ms) if i % 2 == 0 else (options.extra_ms, 0.0)
            found = {ms: build(project, warehouse, ms, options.code) for ms in order}
            plain, longer = found[0.0], found[options.extra_ms]
            pairs.append((plain, longer))
            print(plain, longer, flush=True)
    reach = [(b["wall"] - a["wall"]) / b["added"] for a, b in pairs]
    cpu_reach = [(b["cpu"] - a["cpu"]) / b["added"] for a, b in pairs]
    walls = [a["wall"] for a, _ in pairs]
    added = statistics.median(b["added"] for _, b in pairs)
    hooks = options.models + 5
    lines = [
        "## What a post-hook's CPU adds to a build's wall",
        "",
        f"`bench/hook_wall_bench.py --models {options.models} --pairs {options.pairs} "
        f"--extra-ms {options.extra_ms:g}`: the fleet project of {options.models} tiny table "
        f"models + 5 incremental merges, `threads: 4`, embedded engine; repeat builds in fresh "
        f"processes, alternating, every post-hook as it is and every one {options.extra_ms:g} ms "
        "of thread CPU longer (Python holding the interpreter's lock, as a hook's own code). "
        "The wall the extra CPU added over that CPU: the share of a hook's CPU that reaches "
        "the build's wall.",
        "",
        "| figure | median | lowest | highest |",
        "|---|---|---|---|",
        f"| build wall, hooks as they are (s) | {statistics.median(walls):.2f} | "
        f"{min(walls):.2f} | {max(walls):.2f} |",
        f"| extra CPU in the hooks (s, {hooks} hooks) | {added:.2f} | | |",
        f"| wall added / extra CPU | {statistics.median(reach):.2f} | {min(reach):.2f} | "
        f"{max(reach):.2f} |",
        f"| process CPU added / extra CPU | {statistics.median(cpu_reach):.2f} | "
        f"{min(cpu_reach):.2f} | {max(cpu_reach):.2f} |",
        "",
        f"A post-hook's own CPU reaches the build's wall about {statistics.median(reach):.1f} "
        "for 1: the fleet bench's direct figure divides the hooks' thread CPU by the build's "
        "wall (the share of the wall they add), not only by the process's CPU.",
    ]
    if options.write:
        write_section("HOOK-WALL", lines, source="bench/hook_wall_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
