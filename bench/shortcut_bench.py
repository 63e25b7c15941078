"""What each post-hook shortcut saves, in whole ``dbt build`` processes (issue 67, item 3).

The shortcuts on the post-hook's path keep or look ahead at facts a build start or a hook would
otherwise read from the table's log:

- kept looks (``looks_kept``, ``kept_looks``): the command's end keeps each table's version and
  state in ``target/``; the next command's first start takes them for one ``lstat``;
- directory stamps (``log_change``): a start checks that its table is still as the first start
  saw it with one ``lstat`` of ``_delta_log`` instead of two names asked;
- derived checksums (``version_checksum.derived_checksum``, with the first start reading every
  table's checksum ahead): the hook derives the table after the build instead of reading the
  new version's checksum file;
- the build-start look-ahead (``BuildClock._look_ahead``): the command's first start reads
  every selected table's version at once; each later start only checks it;
- history summaries (``history_summary``): the last runs of the history's newest commit kept
  beside it, so a process's first hook does not read the history table.

Each is switched off in a copy of the code under test (``git archive`` of ``--commit``, then the few
lines that take the shortcut replaced, each replacement found exactly once): no switch exists
in the package. The first four depend on one another (a look needs a stamp and a derived
state; a derived state needs the look-ahead's checksum), so they are taken off in that order,
a chain, and each one's saving is the step it makes along the chain; the summary is taken off
alone. A project copy and warehouse per variant (a kept look is of that warehouse's tables),
built once and once again untimed (the second leaves what a repeat build leaves: looks,
summary); then repeat builds, the variants in an order rotated every round, whole fresh
processes. What a shortcut saves is read from the hooks' own thread CPU (the adapter's debug
line: starts, hooks and the command's end; a hook's CPU reaches the wall about 1 for 1,
HOOK-WALL), the median over rounds of each step's difference; the processes' wall and CPU are
given beside it (their noise is larger than the savings).

The four shortcuts of the chain were removed on the verdicts (docs/design.md, "Shortcuts
kept"): the variants are measured on ``--commit`` (86ed063 by default, the last commit with
every shortcut; their lines are not in later ones). The section's runs (bench/results):

    .venv/bin/python bench/shortcut_bench.py --size 1000 --repeats 2 --save r1000.json
    .venv/bin/python bench/shortcut_bench.py --size 200 --repeats 2 --save r200.json
    .venv/bin/python bench/shortcut_bench.py --size 200 --repeats 4 --save r200b.json \
        --variants "-derived checksums" "-build-start look-ahead" none
    .venv/bin/python bench/shortcut_bench.py --size 200 --aged-history 100 --save a200.json
    .venv/bin/python bench/shortcut_bench.py --size 200 --slow --repeats 2 --save s200.json
    .venv/bin/python bench/shortcut_bench.py --report r1000.json r200.json ... --write
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import re  # noqa: E402

from fleet_bench import compile_code, timed  # noqa: E402
from report import write_section  # noqa: E402

from tests.helpers.fleet_project import write_fleet_project  # noqa: E402

BIN = Path(sys.executable).parent

# (file, the lines that take the shortcut, what replaces them)
KEPT_LOOKS = (
    "dbt/adapters/sparkdelta/run_operations.py",
    "looks=LooksKept(self._looks_path)",
    "looks=None",
)
STAMPS = (
    "python_ops/maintenance/facts/log_change.py",
    '    if is_remote(location):\n        return None\n    path = f"{normalize_location',
    '    if True:\n        return None\n    path = f"{normalize_location',
)
DERIVED = (
    "python_ops/maintenance/facts/build_writes.py",
    "    return derived_checksum(before, window) if before is not None else None",
    "    return None",
)
DERIVED_READ_AHEAD = (
    "dbt/adapters/sparkdelta/build_clock.py",
    "checksum = checksum_at(location, version) if version is not None else None",
    "checksum = None",
)
LOOK_AHEAD = (
    "dbt/adapters/sparkdelta/build_clock.py",
    "        invocation = get_invocation_id()\n        with self._seen_lock:",
    "        return None\n        invocation = get_invocation_id()\n        with self._seen_lock:",
)
SUMMARY = (
    "python_ops/maintenance/records/history.py",
    "            summary = read_summary(self.location, head)",
    "            summary = None",
)
SUMMARY_WRITE = (
    "python_ops/maintenance/records/history.py",
    "            if write_summary(self.location, at, last):",
    "            if False:",
)
CHAIN = ("kept looks", "directory stamps", "derived checksums", "build-start look-ahead")
PATCHES = {
    "kept looks": [KEPT_LOOKS],
    "directory stamps": [STAMPS],
    "derived checksums": [DERIVED, DERIVED_READ_AHEAD],
    "build-start look-ahead": [LOOK_AHEAD],
    "history summaries": [SUMMARY, SUMMARY_WRITE],
}
# variant -> the shortcuts taken off (a chain's step takes off the ones before it too)
VARIANTS = {
    "all": (),
    **{f"-{name}": CHAIN[: i + 1] for i, name in enumerate(CHAIN)},
    "-history summaries": ("history summaries",),
    "none": (*CHAIN, "history summaries"),
    "hook off": (),
}
SLOW_VARIANTS = ("all", "none")
AGED_VARIANTS = ("all", "-history summaries")

ONE_ROW = "{{{{ config(materialized='table') }}}}\nselect {i} as id, 'model {i}' as name\n"
# about a second of the engine's work on this host, alone (run_results' execution_time: 1.0-1.1
# s with its post-hook), one row out
SLOW = (
    "{{{{ config(materialized='table') }}}}\nselect {i} + count(*) as id, 'model {i}' as name "
    "from range(0, 200000000) where (id * 7919) % 1000003 = {i}\n"
)


def code_copy(work: Path, variant: str, commit: str) -> Path:
    """The commit's code with the variant's shortcuts taken off, byte-compiled."""
    code = work / f"code-{variant.strip('-').replace(' ', '_')}"
    shutil.rmtree(code, ignore_errors=True)
    code.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(code)], input=archive.stdout, check=True)
    for name in VARIANTS[variant]:
        for file, old, new in PATCHES[name]:
            path = code / file
            text = path.read_text()
            if text.count(old) != 1:
                raise SystemExit(f"{variant}: {file} does not hold the shortcut's lines once")
            path.write_text(text.replace(old, new))
    compile_code(code)
    return code


def project(work: Path, variant: str, size: int, sql: str) -> Path:
    """The variant's project copy (its own target/ and warehouse)."""
    root = work / f"project-{variant.strip('-').replace(' ', '_')}"
    shutil.rmtree(root, ignore_errors=True)
    write_fleet_project(root, tables=size, incremental=0)
    write_sql(root, size, sql)
    if variant == "hook off":
        yml = root / "dbt_project.yml"
        yml.write_text(yml.read_text() + "vars:\n  maintenance_post_hook: false\n")
    return root


def write_sql(root: Path, size: int, sql: str) -> None:
    """Every model's SQL."""
    for i in range(size):
        (root / "models" / f"t_{i:04d}.sql").write_text(sql.format(i=i))


def dbt(root: Path, code: Path, *args: str) -> tuple[float, float]:
    """One dbt command in a fresh process: its wall and CPU seconds."""
    env = {
        **os.environ,
        "PYTHONPATH": str(code),
        "SPARKDELTA_WAREHOUSE": str(root / "warehouse"),
    }
    command = [str(BIN / "dbt"), *args, "--project-dir", str(root), "--profiles-dir", str(root)]
    return timed(command, env=env, cwd=root)


def measure(
    work: Path,
    size: int,
    repeats: int,
    *,
    slow: bool,
    commit: str,
    aged: int = 0,
    only: list[str] | None = None,
) -> dict[str, object]:
    """Set every variant up, then its timed repeat builds, rotated; the raw figures.

    ``aged``: the history aged by that many appends of 2,000 rows first (``history_read_bench``:
    a skip and a bound for each of 1,000 other models), then one more untimed build (whatever
    upkeep of the history is due), for the history summaries alone.
    """
    variants = list(only or (SLOW_VARIANTS if slow else AGED_VARIANTS if aged else VARIANTS))
    codes = {v: code_copy(work, v, commit) for v in variants}
    roots = {v: project(work, v, size, ONE_ROW) for v in variants}
    for v in variants:  # a first and a repeat build, untimed (the slow SQL only after them)
        for args in (("parse",), ("build",), ("build",)):
            dbt(roots[v], codes[v], *args)
        if slow:
            write_sql(roots[v], size, SLOW)
            dbt(roots[v], codes[v], "parse")
        if aged:
            from history_read_bench import make_history

            make_history(str(roots[v] / "warehouse" / "fleet" / "maintenance_history"), aged)
            dbt(roots[v], codes[v], "build")
        hook_line(roots[v])
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    for r in range(repeats):
        shift = r % len(variants)
        order = variants[shift:] + variants[:shift]
        if r % 2:
            order.reverse()
        for v in order:
            load = os.getloadavg()[0]
            wall, cpu = dbt(roots[v], codes[v], "build")
            hooks, looks = hook_line(roots[v])
            one = {
                "wall": wall,
                "cpu": cpu,
                "hooks": hooks,
                "looks": looks,
                "load": load,
                "round": r,
            }
            runs[v].append(one)
            print(f"N={size} slow={slow} round {r} {v}: {one}", flush=True)
    figures = {"size": size, "slow": slow, "aged": aged, "repeats": repeats, "runs": runs}
    figures["only"] = only or []
    return {**figures, "head": head(commit)}


def hook_line(root: Path) -> tuple[float, int]:
    """The last command's hooks' own thread CPU seconds and looks kept (the adapter's line),
    then the log cleared; (0, 0) when no hook ran."""
    log = root / "logs" / "dbt.log"
    text = log.read_text() if log.exists() else ""
    log.write_text("")
    found = re.findall(r"maintenance post-hooks: .*?thread CPU ms total ([0-9.]+)(.*)", text)
    if not found:
        return 0.0, 0
    kept = re.search(r"([0-9]+) table look\(s\) kept", found[-1][1][:400])
    return float(found[-1][0]) / 1000, int(kept.group(1)) if kept else 0


def head(commit: str) -> str:
    """The commit's short name."""
    out = subprocess.run(["git", "rev-parse", "--short", commit], cwd=ROOT, capture_output=True)
    return out.stdout.decode().strip()


def main() -> None:
    """Measure one size and kind, or write the report from saved runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--slow", action="store_true", help="models of about a second each")
    parser.add_argument("--variants", nargs="*", choices=list(VARIANTS), help="these only")
    parser.add_argument("--aged-history", type=int, default=0, help="appends of 2,000 rows")
    parser.add_argument("--commit", default="86ed063", help="the code measured")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--report", type=Path, nargs="*")
    parser.add_argument("--write", action="store_true", help="write SHORTCUTS in benchmarks.md")
    args = parser.parse_args()
    if args.report:
        from shortcut_report import report_lines

        lines = report_lines([json.loads(p.read_text()) for p in args.report])
        print("\n".join(lines))
        if args.write:
            write_section("SHORTCUTS", lines, source="bench/shortcut_bench.py")
        return
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="shortcut-bench-") as work:
        figures = measure(
            Path(work),
            args.size,
            args.repeats,
            slow=args.slow,
            commit=args.commit,
            aged=args.aged_history,
            only=args.variants,
        )
    figures["period"] = f"{started}-{time.strftime('%H:%M', time.gmtime())} UTC"
    text = json.dumps(figures, indent=1)
    if args.save:
        args.save.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
