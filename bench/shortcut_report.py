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
BEFORE = "86ed063"  # the last commit with every shortcut: the variants' code


def _key(run: dict[str, Any]) -> str:
    kind = "slow" if run["slow"] else "one-row"
    aged = f", history aged {run['aged'] * 2000:,} rows" if run.get("aged") else ""
    after = f", after: main at {run['head']}" if run["head"] != BEFORE else ""
    return f"N={run['size']} {kind}{aged}{after}"


def merged(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of one size and kind as one: a variant's builds from every run, in order.

    Pairs are only ever made within a run (each build carries its run and round).
    """
    out: dict[str, dict[str, Any]] = {}
    for n, run in enumerate(runs):
        key = _key(run)
        into = out.setdefault(key, {**run, "runs": {}, "periods": []})
        into["periods"].append(run.get("period", "?"))
        for variant, each in run["runs"].items():
            into["runs"].setdefault(variant, []).extend({**b, "run": n} for b in each)
    return list(out.values())


def _pairs(run: dict[str, Any], on: str, off: str) -> list[tuple[dict[str, Any], Any]]:
    """The builds of ``on`` and ``off`` of the same run and round."""
    offs = {(b.get("run", 0), b["round"]): b for b in run["runs"][off]}
    return [
        (a, offs[(a.get("run", 0), a["round"])])
        for a in run["runs"][on]
        if (a.get("run", 0), a["round"]) in offs
    ]


def saving(run: dict[str, Any], on: str, off: str) -> dict[str, float] | None:
    """What taking a shortcut off cost, per round (same round: adjacent in time), medians.

    ``hooks_ms``: the hooks' own thread CPU per model; ``pct``: that over the build's median
    wall with it on; ``wall_ms``/``cpu_ms``: the processes' wall and CPU per model.
    """
    runs = run["runs"]
    if on not in runs or off not in runs:
        return None
    size = run["size"]
    pairs = _pairs(run, on, off)

    def per_model(field: str) -> float:
        return statistics.median((b[field] - a[field]) * 1000 / size for a, b in pairs)

    wall = min(a["wall"] for a in runs[on])  # the build, least slowed by the shared host
    hooks = statistics.median(b["hooks"] - a["hooks"] for a, b in pairs)
    # the least disturbed build of each (a full collection of dbt's heap or a busy host lands
    # in one build's hooks, not in its variant's)
    least = min(b["hooks"] for b in runs[off]) - min(a["hooks"] for a in runs[on])
    return {
        "hooks_ms": per_model("hooks"),
        "least_ms": least * 1000 / size,
        "pct": hooks / wall * 100,
        "least_pct": least / wall * 100,
        "wall_ms": per_model("wall"),
        "cpu_ms": per_model("cpu"),
    }


def _cell(found: dict[str, float] | None) -> str:
    if found is None:
        return "not measured"
    return (
        f"{found['hooks_ms']:+.3f} ms ({found['pct']:+.2f} %), least {found['least_ms']:+.3f} "
        f"ms ({found['least_pct']:+.2f} %); wall {found['wall_ms']:+.1f}, CPU "
        f"{found['cpu_ms']:+.1f} ms"
    )


def verdict(name: str, runs: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether the shortcut meets the bar in any run, by either figure: kept if it does."""
    on, off = next((s[1], s[2]) for s in STEPS if s[0] == name)
    met = []
    for run in runs:
        found = saving(run, on, off)
        if found is None:
            continue
        for ms, pct in ((found["hooks_ms"], found["pct"]), (found["least_ms"], found["least_pct"])):
            if (run["size"] >= 1000 and ms >= BAR_MS) or pct >= BAR_PCT:
                met.append(_key(run))
                break
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
    pairs = _pairs(run, variant, "hook off")
    pct = statistics.median((a["wall"] - b["wall"]) / b["wall"] * 100 for a, b in pairs)
    own = statistics.median(a["hooks"] / b["wall"] * 100 for a, b in pairs)
    per = statistics.median(a["hooks"] * 1000 / run["size"] for a, _ in pairs)
    return f"wall {pct:+.1f} %; hooks' own CPU {own:.2f} % of the hook-off wall, {per:.2f} ms/model"


def report_lines(runs: list[dict[str, Any]]) -> list[str]:
    """The section: savings per shortcut and run, verdicts, the raw medians, the overhead."""
    heads = sorted({r["head"] for r in runs if r["head"] == BEFORE})
    runs = merged(runs)
    periods = "; ".join(f"{_key(r)}: {' and '.join(r['periods'])}" for r in runs)
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
        "over rounds of the same round's difference, and its share of the build's wall with the "
        "shortcut on (its fastest build: the least slowed by the shared host); then the same "
        "from each variant's least disturbed build "
        "('least': a full collection of dbt's heap lands in one build's hooks); beside it the "
        "processes' wall and CPU per model (noise larger "
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
    for run in runs:
        found = saving(run, "all", "none") if run["slow"] else None
        if found is not None:
            fastest = min(r["wall"] for r in run["runs"]["all"])
            lines += [
                "",
                f"1,000 slow models were not run (a build of about {fastest * 5 / 60:.0f} "
                f"minutes here, per variant and round). Extrapolated, not measured: what the "
                f"shortcuts save is per model (a hook's reads do not depend on how long the "
                f"model's SQL ran: {found['hooks_ms']:+.3f} ms per model at {run['size']} slow, "
                "against the one-row figures above), and a build of 1,000 slow models is about "
                f"5 times this one: the same share, {found['pct']:+.2f} % of the build for all "
                "five together.",
            ]
    lines += ["", *_variants_table(runs), ""]
    for run in runs:
        if "hook off" not in run["runs"]:
            continue
        if run["head"] != BEFORE:
            found = overhead(run, "all")
            lines.append(f"- {_key(run)}, post-hook overhead over hook off: {found}.")
            continue
        lines.append(
            f"- {_key(run)}, post-hook overhead over hook off: before (every shortcut) "
            f"{overhead(run, 'all')}; the chain removed, summaries kept "
            f"{overhead(run, '-build-start look-ahead')}; none {overhead(run, 'none')}."
        )
    return lines
