"""The SHORTCUTS section of docs/benchmarks.md, from ``shortcut_bench.py``'s saved runs."""

from __future__ import annotations

import statistics
from typing import Any

BAR_MS = 0.5  # a shortcut pays if it saves this much per model at 1,000 models
BAR_PCT = 0.5  # or this share of the build
# each step of the chain takes one more shortcut off: (shortcut, with it, without it)
STEPS = (
    ("kept looks", "all", "-kept looks"),
    ("directory stamps", "-kept looks", "-directory stamps"),
    ("derived checksums", "-directory stamps", "-derived checksums"),
    ("build-start look-ahead", "-derived checksums", "-build-start look-ahead"),
    ("history summaries", "all", "-history summaries"),
)
EVERY = ("all five", "all", "none")


def _key(run: dict[str, Any]) -> str:
    kind = "slow" if run["slow"] else "one-row"
    aged = f", history aged {run['aged'] * 2000:,} rows" if run.get("aged") else ""
    return f"N={run['size']} {kind}{aged}"


def saving(run: dict[str, Any], on: str, off: str) -> dict[str, float] | None:
    """What taking a shortcut off cost, per round (same round: adjacent in time), medians.

    ``hooks_ms``: the hooks' own thread CPU per model; ``pct``: that over the build's median
    wall with it on; ``wall_ms``/``cpu_ms``: the processes' wall and CPU per model.
    """
    runs = run["runs"]
    if on not in runs or off not in runs:
        return None
    size = run["size"]
    pairs = list(zip(runs[on], runs[off], strict=True))

    def per_model(field: str) -> float:
        return statistics.median((b[field] - a[field]) * 1000 / size for a, b in pairs)

    wall = statistics.median(a["wall"] for a in runs[on])
    hooks = statistics.median(b["hooks"] - a["hooks"] for a, b in pairs)
    return {
        "hooks_ms": per_model("hooks"),
        "pct": hooks / wall * 100,
        "wall_ms": per_model("wall"),
        "cpu_ms": per_model("cpu"),
    }


def _cell(found: dict[str, float] | None) -> str:
    if found is None:
        return "not measured"
    return (
        f"{found['hooks_ms']:+.3f} ms ({found['pct']:+.2f} %); "
        f"wall {found['wall_ms']:+.1f}, CPU {found['cpu_ms']:+.1f} ms"
    )


def verdict(name: str, runs: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether the shortcut meets the bar in any run at 1,000 models, or 0.5 % anywhere."""
    on, off = next((s[1], s[2]) for s in STEPS if s[0] == name)
    met = []
    for run in runs:
        found = saving(run, on, off)
        if found is None:
            continue
        if (run["size"] >= 1000 and found["hooks_ms"] >= BAR_MS) or found["pct"] >= BAR_PCT:
            met.append(_key(run))
    return bool(met), ("kept: " + "; ".join(met)) if met else "removed"


def _variants_table(runs: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| run | variant | builds | wall s (median) | process CPU s | hooks' own CPU s | "
        "hooks ms per model | load (1 min) |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for run in runs:
        for variant, each in run["runs"].items():
            walls = [r["wall"] for r in each]
            hooks = statistics.median(r["hooks"] for r in each)
            loads = ", ".join(f"{r['load']:.1f}" for r in each)
            lines.append(
                f"| {_key(run)} | {variant} | {len(each)} | {statistics.median(walls):.2f} | "
                f"{statistics.median(r['cpu'] for r in each):.2f} | {hooks:.3f} | "
                f"{hooks * 1000 / run['size']:.3f} | {loads} |"
            )
    return lines


def overhead(run: dict[str, Any], variant: str) -> str:
    """A variant's post-hook overhead over hook off: per-round wall and the hooks' CPU."""
    runs = run["runs"]
    if variant not in runs or "hook off" not in runs:
        return "not measured"
    pairs = list(zip(runs[variant], runs["hook off"], strict=True))
    pct = statistics.median((a["wall"] - b["wall"]) / b["wall"] * 100 for a, b in pairs)
    own = statistics.median(a["hooks"] / b["wall"] * 100 for a, b in pairs)
    per = statistics.median(a["hooks"] * 1000 / run["size"] for a, _ in pairs)
    return f"wall {pct:+.1f} %; hooks' own CPU {own:.2f} % of the hook-off wall, {per:.2f} ms/model"


def report_lines(runs: list[dict[str, Any]]) -> list[str]:
    """The section: savings per shortcut and run, verdicts, the raw medians, the overhead."""
    heads = sorted({r["head"] for r in runs})
    periods = "; ".join(f"{_key(r)}: {r.get('period', '?')}" for r in runs)
    lines = [
        "## Post-hook shortcuts: what each saves (issue 67, item 3)",
        "",
        f"`bench/shortcut_bench.py` on {', '.join(heads)} (the code before the verdicts), "
        f"{periods}. Each shortcut switched off in a `git archive` copy of that commit (its "
        "lines replaced; no switch in the package), a project copy and warehouse per variant, "
        "built twice untimed, then repeat builds (`dbt build`, whole fresh processes, `threads: "
        "4`, the variants' order rotated every round). A saving is what taking the shortcut off "
        "cost: the hooks' own thread CPU per model (starts, hooks and the command's end: the "
        "adapter's line; a hook's CPU reaches the wall about 1 for 1, HOOK-WALL), the median "
        "over rounds of the same round's difference, and its share of the build's median wall "
        "with the shortcut on; beside it the processes' wall and CPU per model (noise larger "
        "than the savings on a shared 2-core host: the load averages are in the second table). "
        "The first four are a chain (a kept look needs a stamp and a derived state, a derived "
        "state needs the look-ahead's checksum): each is taken off after the ones before it. "
        f"Bar: {BAR_MS} ms per model at 1,000 models, or {BAR_PCT} % of the build.",
        "",
    ]
    cols = [_key(r) for r in runs]
    lines += [
        "| shortcut | " + " | ".join(cols) + " | verdict |",
        "|---|" + "---|" * len(cols) + "---|",
    ]
    for name, on, off in (*STEPS, EVERY):
        cells = [_cell(saving(r, on, off)) for r in runs]
        ruled = verdict(name, runs)[1] if name != "all five" else ""
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ruled} |")
    lines += ["", *_variants_table(runs), ""]
    for run in runs:
        if "hook off" not in run["runs"]:
            continue
        lines.append(
            f"- {_key(run)}, post-hook overhead over hook off: before (every shortcut) "
            f"{overhead(run, 'all')}; the chain removed, summaries kept "
            f"{overhead(run, '-build-start look-ahead')}; none {overhead(run, 'none')}."
        )
    return lines
