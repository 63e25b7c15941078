"""Fuzz: random corruptions of real logs never make an op delete a referenced file or crash.

Each case corrupts one copy of a real table (truncated line, non-object JSON, a required field
dropped, a field of the wrong type, a checkpoint or commit removed, a damaged checkpoint or
``_last_checkpoint``), then runs VACUUM (zero retention, real), log cleanup (real) and
OPTIMIZE through the CLI. Every run must end in a result or a clean refusal (exit 0 or 2), and
every file the uncorrupted table referenced must still exist. The seed is fixed (override with
``FUZZ_SEED``) and the case count bounded (``FUZZ_CASES``, default 96).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from tests.helpers.trust import cli
from tests.helpers.vacuum import age_everything

TABLES = (
    "simple_table_with_checkpoint",
    "delta-0.8.0-partitioned",
    "table-with-dv-small",
    "checkpoint-v2-table",
    "cdf-table",
    "with_checkpoint_no_last_checkpoint",
)
REQUIRED = {
    "add": ("path", "size", "modificationTime", "partitionValues"),
    "remove": ("path",),
    # a missing schemaString is Delta's empty schema (rewrites then refuse), not a broken log
    "metaData": ("partitionColumns",),
    "protocol": ("minReaderVersion", "minWriterVersion"),
}
WRONG_TYPE = {
    "path": 123,
    "size": "12x",
    "modificationTime": "yesterday",
    "partitionValues": [1, 2],
    "deletionTimestamp": "x",
    "schemaString": {"fields": []},
    "partitionColumns": "a",
    "minReaderVersion": "1",
    "minWriterVersion": 7.5,
    "dataChange": "yes",
}
SEED = int(os.environ.get("FUZZ_SEED", "20261122"))
CASES = int(os.environ.get("FUZZ_CASES", "96"))


def _commits(table: Path) -> list[Path]:
    return sorted((table / "_delta_log").glob("*.json"))


def _rewrite_line(rng: random.Random, table: Path, change: Any) -> str:
    """Apply ``change(action) -> new line or None`` to a random line it accepts."""
    lines = [(c, i) for c in _commits(table) for i in range(len(c.read_text().splitlines()))]
    rng.shuffle(lines)
    for commit, index in lines:
        text = commit.read_text().splitlines()
        new = change(json.loads(text[index]))
        if new is not None:
            text[index] = new
            commit.write_text("\n".join(text) + "\n")
            return f"{commit.name}:{index + 1}"
    return "no line applies"


def corrupt(rng: random.Random, table: Path) -> str:
    """One random corruption; returns a description for the failure message."""
    kind = rng.choice(
        [
            "truncate",
            "non-object",
            "drop-field",
            "wrong-type",
            "drop-checkpoint",
            "drop-commit",
            "damage-checkpoint",
            "damage-last-checkpoint",
        ]
    )
    log = table / "_delta_log"
    if kind == "truncate":

        def cut(action: dict[str, Any]) -> str:
            line = json.dumps(action)
            return line[: rng.randint(1, len(line) - 2)]

        return f"{kind} {_rewrite_line(rng, table, cut)}"
    if kind == "non-object":
        shape = rng.choice(["list", "number", "string", "null"])

        def wrap(action: dict[str, Any]) -> str:
            value = {"list": [action], "number": 1, "string": "add", "null": None}[shape]
            return json.dumps(value)

        return f"{kind}/{shape} {_rewrite_line(rng, table, wrap)}"
    if kind in ("drop-field", "wrong-type"):

        def change(action: dict[str, Any]) -> str | None:
            (name,) = action
            body = action[name]
            fields = REQUIRED.get(name, ()) if kind == "drop-field" else tuple(WRONG_TYPE)
            present = [f for f in fields if f in body]
            if not present:
                return None
            field = rng.choice(present)
            if kind == "drop-field":
                del body[field]
            else:
                body[field] = WRONG_TYPE[field]
            return json.dumps({name: body})

        return f"{kind} {_rewrite_line(rng, table, change)}"
    if kind == "drop-checkpoint":
        checkpoints = sorted(log.glob("*.checkpoint*"))
        if checkpoints:
            rng.choice(checkpoints).unlink()
        for commit in _commits(table)[: rng.randint(0, 3)]:
            commit.unlink()
        return kind
    if kind == "drop-commit":
        # never the newest: a log without its newest commit is a valid older table, and the
        # files only that commit referenced are indistinguishable from an uncommitted writer's
        # (which is why VACUUM has a retention check)
        commits = _commits(table)[:-1]
        if not commits:
            return "no older commit"
        victim = rng.choice(commits)
        victim.unlink()
        return f"{kind} {victim.name}"
    if kind == "damage-checkpoint":
        checkpoints = sorted(p for p in log.glob("*.checkpoint*") if p.is_file())
        if not checkpoints:
            return "no checkpoint"
        victim = rng.choice(checkpoints)
        data = victim.read_bytes()
        victim.write_bytes(data[: rng.randint(0, len(data) - 1)])
        return f"{kind} {victim.name}"
    (log / "_last_checkpoint").write_text(
        rng.choice(['{"version": "x"}', "not json", '{"size": 3}', "[10]", '{"version": 99}'])
    )
    return kind


def referenced(table: Path) -> set[str]:
    snap = read_snapshot(str(table))
    out = set()
    for f in snap.files:
        for rel in (
            f.relative_path,
            f.deletion_vector.file_path(snap.location) if f.deletion_vector else None,
        ):
            if rel is not None and (table / rel).exists():
                out.add(rel)
    return out


@pytest.mark.slow
def test_corrupt_logs_never_lose_referenced_files(fixture_table, sail_spark) -> None:
    rng = random.Random(SEED)
    ran = refused = 0
    for case in range(CASES):
        name = TABLES[case % len(TABLES)]
        table = fixture_table(name)
        keep = referenced(table)
        files_before = read_snapshot(str(table)).files
        what = corrupt(rng, table)
        age_everything(table, days=60)
        for argv in (
            ["vacuum", str(table), "--retention-hours", "0", "--allow-short-retention"],
            ["cleanup-logs", str(table), "--retention-days", "0"],
            ["optimize", str(table)],
        ):
            code, out, err = cli(argv, sail_spark)
            context = f"case {case} ({name}, {what}), {argv[0]}: {err[-400:]}"
            assert code in (0, 2), context
            assert "Traceback" not in out + err, context
            refused += code == 2
            ran += 1
            lost = sorted(rel for rel in keep if not (table / rel).exists())
            assert not lost, f"{context}: referenced files deleted: {lost[:3]}"
        try:
            after = read_snapshot(str(table)).files
        except Exception:  # the corruption may leave it unreadable; that is allowed
            after = ()
        # the only change any op may make to a readable table is OPTIMIZE's rewrite
        added = {f.relative_path for f in after} - {f.relative_path for f in files_before}
        assert all((table / rel).exists() for rel in added if rel), what
        (table.parent / "done").mkdir(exist_ok=True)
        table.rename(table.parent / "done" / f"{case}-{name}")
    assert ran == 3 * CASES
    assert refused > CASES  # most corruptions must have been noticed
