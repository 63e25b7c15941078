"""Post-hook overhead: per-model time of `dbt run` with the maintenance post-hook on vs off.

Builds the example project once (and runs maintain_all so nothing is due), then runs
`dbt run --select landing marts` ``--repeats`` times with the hook on and off, alternating, each
in a fresh process, and compares the median execution time per table model from
run_results.json; each post-hook's own wall and thread CPU time come from the adapter's line in
dbt.log, in those runs (4 threads) and in as many runs with `--threads 1`. Then, on the same
warehouse, the share of python_ops in it: the runner's ``maintain_model`` for each table model,
in this process (imports done, as inside dbt), with the project's history and configs and
nothing due; what remains of the overhead is the adapter's (locating the table in the catalog,
the history's registration) and dbt's. Results go to
docs/benchmarks.md between the POST-HOOK markers.

    .venv/bin/python bench/posthook_bench.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from report import compile_package, write_section

ROOT = Path(__file__).resolve().parent.parent
DBT = str(ROOT / ".venv" / "bin" / "dbt")
PARTS = ("dbt_project.yml", "models", "seeds", "profiles_example")


def dbt(project: Path, *args: str, hook: bool = True, threads: int = 0) -> dict[str, float]:
    variables = json.dumps({"maintenance_post_hook": hook, "orders_per_batch": 200})
    command = [DBT, *args, *(["--threads", str(threads)] if threads else [])]
    command += ["--project-dir", str(project), "--profiles-dir"]
    command += [str(project / "profiles_example")]
    if args[0] != "run-operation":
        command += ["--vars", variables]
    (project / "logs" / "dbt.log").unlink(missing_ok=True)  # this run's lines only
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=project)
    wall = time.perf_counter() - started
    if args[0] == "run-operation":
        return {}
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    failed = [r["unique_id"] for r in results if r["status"] not in ("success", "pass")]
    if failed:  # a failed model's time says nothing of its post-hook (it never ran)
        raise SystemExit(f"dbt {' '.join(args)}: not all models succeeded: {failed}")
    times = {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results}
    return {**times, WHOLE: wall}


WHOLE = "(whole dbt process)"
HOOK_LINE = re.compile(r"maintenance post-hooks: .*; per model \(wall/CPU ms\): (.*)$", re.M)
HOOK_TIME = re.compile(r"(\w+) ([0-9.]+)/([0-9.]+)")


def hook_times(project: Path) -> dict[str, tuple[float, float]]:
    """Each model's post-hook (wall ms, thread CPU ms) as the adapter logged it in dbt.log.

    The adapter writes one line per dbt command (``report_hook_times``), every hook in it.
    """
    text = (project / "logs" / "dbt.log").read_text(errors="replace")
    return {
        m[1]: (float(m[2]), float(m[3]))
        for line in HOOK_LINE.finditer(text)
        for m in HOOK_TIME.finditer(line[1])
    }


def python_ops_share(project: Path, warehouse: Path, models: list[str], repeats: int) -> dict:
    """Median ms of ``Maintainer.maintain_model`` per model with nothing due (in this process)."""
    import sys

    sys.path.insert(0, str(ROOT))
    from python_ops.invocation import Invocation
    from python_ops.maintenance.configuration.config import parse_config
    from python_ops.maintenance.records.history import HistoryStore
    from python_ops.maintenance.running.runner import Maintainer
    from python_ops.maintenance.selection.targets import ModelTarget, load_manifest, manifest_models

    tables = {p.parent.name: p.parent for p in warehouse.rglob("_delta_log")}
    history = tables.get("maintenance_history")
    maintainer = Maintainer(
        spark=None,
        history=HistoryStore(str(history)) if history else None,
        invocation=Invocation("bench"),
    )
    out: dict[str, float] = {}
    for node in manifest_models(load_manifest(str(project))):
        name = node["name"]
        if name not in models or name not in tables:
            continue
        target = ModelTarget(name, str(tables[name]), parse_config(name, node["config"]))
        maintainer.maintain_model(target)  # warm: the history's last runs are read once
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            outcomes = maintainer.maintain_model(target)
            times.append(time.perf_counter() - started)
            assert not any(o.ran for o in outcomes), [o.detail for o in outcomes if o.ran]
        out[name] = statistics.median(times) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    compile_package()
    work = Path(tempfile.mkdtemp(prefix="posthook-bench-"))
    project = work / "project"
    project.mkdir()
    for part in PARTS:
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, project / part)
    os.environ["SPARKDELTA_WAREHOUSE"] = str(work / "warehouse")
    try:
        dbt(project, "build")
        dbt(project, "run-operation", "maintain_all")
        on: dict[str, list[float]] = {}
        off: dict[str, list[float]] = {}
        inside: dict[str, list[tuple[float, float]]] = {}
        alone: dict[str, list[tuple[float, float]]] = {}
        for i in range(args.repeats):
            for hook in (True, False) if i % 2 == 0 else (False, True):
                times = dbt(project, "run", "--select", "landing", "marts", hook=hook)
                for model, seconds in times.items():
                    (on if hook else off).setdefault(model, []).append(seconds)
                if hook:
                    for model, pair in hook_times(project).items():
                        inside.setdefault(model, []).append(pair)
            # the same with one dbt thread: the hook's own latency, no other model's build
            # competing with it for the interpreter and the two cores
            dbt(project, "run", "--select", "landing", "marts", threads=1)
            for model, pair in hook_times(project).items():
                alone.setdefault(model, []).append(pair)
        tables = ["landing_customers", "landing_orders", "dim_customers", "fct_orders"]
        lines = [
            "## Post-hook overhead when nothing is due (embedded engine)",
            "",
            f"`bench/posthook_bench.py --repeats {args.repeats}`: `dbt run --select landing "
            "marts` on the example project with the maintenance post-hook on and off "
            "(alternating, fresh processes); median model execution time from run_results.",
            "",
            "| model | hook off (s) | hook on (s) | overhead (ms) |",
            "|---|---|---|---|",
        ]
        overheads = []
        hooked = len([m for m in on if m != WHOLE])
        for model in tables:
            a, b = statistics.median(off[model]), statistics.median(on[model])
            overheads.append((b - a) * 1000)
            lines.append(f"| {model} | {a:.3f} | {b:.3f} | {(b - a) * 1000:.0f} |")
        whole_off, whole_on = statistics.median(off[WHOLE]), statistics.median(on[WHOLE])
        share = python_ops_share(project, work / "warehouse", tables, 20)
        lines += [
            "",
            f"Median overhead per model: {statistics.median(overheads):.0f} ms.",
            "",
            f"Whole `dbt run` process (start, parse, {hooked} models): hook off "
            f"{whole_off:.2f} s, hook on {whole_on:.2f} s; the difference, "
            f"{(whole_on - whole_off) * 1000:.0f} ms, is "
            f"{(whole_on - whole_off) * 1000 / hooked:.0f} ms per model (range of the runs: "
            f"off {min(off[WHOLE]):.2f}-{max(off[WHOLE]):.2f} s, "
            f"on {min(on[WHOLE]):.2f}-{max(on[WHOLE]):.2f} s).",
            "",
            "The python_ops share, on the same tables afterwards: `Maintainer.maintain_model` "
            "(read the log, decide every op, nothing due) in one process with imports done, as "
            "inside dbt, median of 20 per model: "
            + ", ".join(f"{m} {v:.1f} ms" for m, v in share.items())
            + f" (median {statistics.median(share.values()):.1f} ms). The rest of the hook's own "
            "time (below) is the adapter's: locating the table (dbt's relation cache, one "
            "stat of its log), the history's store and, the first time in a process, the "
            "first use of the maintenance code.",
        ]
        lines += [
            "",
            "The post-hook's own time in the same fresh `dbt run` processes (hook on), as the "
            "adapter writes it to `logs/dbt.log` (wall from the hook's start to its end, and "
            "its thread's CPU; median of the runs, min-max in brackets), with the project's 4 "
            f"threads and, in {args.repeats} more runs, with `--threads 1` (no other model's "
            "build running beside the hook):",
            "",
            "| model | 4 threads: wall ms | 4 threads: CPU ms | 1 thread: wall ms "
            "| 1 thread: CPU ms |",
            "|---|---|---|---|---|",
        ]

        def spread(values: list[float]) -> str:
            return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

        for model in sorted(inside):
            cells = [
                spread([t[i] for t in runs[model]]) for runs in (inside, alone) for i in (0, 1)
            ]
            lines.append(f"| {model} | {' | '.join(cells)} |")
        for label, runs in (("4 threads", inside), ("1 thread", alone)):
            walls = [w for pairs in runs.values() for w, _ in pairs]
            cpus = [c for pairs in runs.values() for _, c in pairs]
            lines.append("")
            lines.append(
                f"{label}: over all {len(walls)} hooks, median {statistics.median(walls):.1f} ms "
                f"wall (slowest {max(walls):.1f}), {statistics.median(cpus):.1f} ms thread CPU "
                f"(most {max(cpus):.1f}); the first hook of each process (first use of the "
                "maintenance code in that process) included."
            )
        write_section("POST-HOOK", lines, source="bench/posthook_bench.py")
        print("\n".join(lines))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
