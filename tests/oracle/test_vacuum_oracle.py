"""Our VACUUM against Delta Lake 4.4's own, on Delta-written corpus tables and every fixture table.

For each table (the corpus Delta writes in this session, every ``_delta_log`` at any depth under
``../shared/fixtures/delta-tables`` and ``../shared/fixtures/golden``), on copies with identical
files and times:

- our dry run selects exactly the files and directories Delta's ``VACUUM ... DRY RUN`` lists,
  (a) at the table's own ``delta.deletedFileRetentionDuration`` and (b) with ``RETAIN 0 HOURS``
  and the check off;
- on the corpus tables, our real run at zero on copy A and Delta's real run on copy B leave the
  same files and directories (``_delta_log`` aside: Delta commits ``VACUUM START``/``END``
  there, we never touch it); on the shared fixtures our real run deletes exactly the selection
  both dry runs agreed on.

On the shared fixtures (aged 60 days, tombstones years old) Delta's answers are recorded
(``tests.oracle.recorded``: used only while they cannot have moved) and Delta is asked live on
a fixed sample of them in every run, where it must answer as recorded. Asked live, Delta runs one
statement per table to keep the run short: its dry run at zero (a real run costs it half as
much again, for its two commits); our selection at the table's retention equals ours at zero
there, and when it does not, Delta's dry run at the table's retention is asked for too
(``runs.compare_vacuum``). The corpus tables (planted, with fresh tombstones and 48-hour
retentions, where the two retentions select differently) get both Delta dry runs and Delta's
real run, live in every run.

Where we answer differently on purpose, the difference is named here with its reason (the
``ON_PURPOSE`` rules and the ``*_KNOWN`` tables); nothing is compared loosely. The comparisons
run once per session, a few tables at a time (``vacuum_comparisons``); each table's test then
only checks its own record, so a failure names the table.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.delta_corpus import TABLES
from tests.helpers.paths import DELTA_TABLES, GOLDEN
from tests.oracle.recorded import (
    MODE_ENV,
    DeltaAnswer,
    OracleMode,
    asked_live,
    load_answers,
    save_answers,
    tree_digest,
    usable,
)
from tests.oracle.runs import (
    Case,
    VacuumComparison,
    compare_vacuum,
    find_cases,
    on_purpose_real_run,
    real_run_differences,
)

# the module's comparisons run once, in its first test's setup: minutes of Delta statements on
# a 2-core machine shared with the other worker
pytestmark = [pytest.mark.slow, pytest.mark.classic_spark, pytest.mark.timeout(1800)]

FIXTURE_CASES = find_cases("delta-tables", DELTA_TABLES) + find_cases("golden", GOLDEN)
CASE_IDS_FIXTURES = [c.id for c in FIXTURE_CASES]
CASE_IDS = [f"corpus/{t.name}" for t in TABLES] + CASE_IDS_FIXTURES

# Tables we refuse although Delta vacuums them: gaps, each with why we refuse.
GAPS_KNOWN: dict[str, str] = {
    "golden/table-with-icebegCompatV2Enabled": (
        "Project rule (python_ops.delta.table.protocol): UniForm (icebergCompatV2) keeps Iceberg "
        "metadata beside the data that the Delta log does not reference; VACUUM it with Delta"
    ),
}
# Tables Delta refuses but we vacuum: each must say why that is right.
DELTA_REFUSES_KNOWN: dict[str, str] = {
    "golden/collations-preview-table": (
        "Delta 4.4 no longer supports the writer feature collations-preview and refuses even a "
        "dry run (DELTA_UNSUPPORTED_FEATURES_FOR_WRITE); collations change string ordering and "
        "statistics, not which files the log references, and our protocol gate supports it "
        "for VACUUM"
    ),
}


@pytest.fixture(scope="module")
def vacuum_comparisons(
    oracle_spark: Any, delta_corpus: dict[str, Path]
) -> Iterator[dict[str, VacuumComparison]]:
    """Every case compared once (three at a time), by case id."""
    cases = [Case(f"corpus/{name}", path, age=False) for name, path in delta_corpus.items()]
    cases += FIXTURE_CASES
    full = {c.id for c in cases if c.id.startswith("corpus/")}
    mode = OracleMode.from_env()
    answers = load_answers()
    trees = {c.id: tree_digest(c.path) for c in FIXTURE_CASES}
    work = Path(tempfile.mkdtemp(prefix="vacuum-oracle-"))
    try:

        def one(index_case: tuple[int, Case]) -> VacuumComparison:
            index, case = index_case
            scratch = work / str(index)
            scratch.mkdir()
            answer = answers.get(case.id)
            recorded = None
            if case.id not in full and usable(answer, trees[case.id]):
                recorded = None if asked_live(case.id, CASE_IDS_FIXTURES, mode) else answer
            try:
                return compare_vacuum(
                    oracle_spark,
                    case,
                    scratch,
                    delta_real_run=case.id in full,
                    recorded=recorded,
                    ask_table=mode is OracleMode.RECORD,
                )
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

        with ThreadPoolExecutor(max_workers=3) as pool:
            results = list(pool.map(one, enumerate(cases)))
        if mode is OracleMode.RECORD:
            save_answers({r.case: _answer(r, trees[r.case]) for r in results if r.case in trees})
        yield {r.case: r for r in results}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _answer(c: VacuumComparison, tree: str) -> DeltaAnswer:
    """Delta's live answer in a comparison, as it is recorded."""
    return DeltaAnswer(
        tree, frozenset(c.delta_at_zero), frozenset(c.delta_at_table), c.delta_refused
    )


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_vacuum_matches_delta(case_id: str, vacuum_comparisons: dict[str, Any]) -> None:
    c: VacuumComparison = vacuum_comparisons[case_id]
    verdict = c.verdict
    if verdict == "not a table":
        assert c.delta_refused, c
        assert c.ours_refused, c
        assert "TableNotFoundError" in c.ours_refused
        return
    if verdict == "both refuse":
        return  # a broken or foreign log: a clear refusal on both sides is the right answer
    if verdict == "refused":
        assert case_id in GAPS_KNOWN, (
            f"gap: we refuse a table Delta vacuums: {c.ours_refused} "
            f"(Delta would delete {len(c.delta_at_zero)} files at zero)"
        )
        return
    assert case_id not in GAPS_KNOWN, f"no longer refused: drop it from GAPS_KNOWN ({c})"
    if verdict == "delta refuses":
        assert case_id in DELTA_REFUSES_KNOWN, f"Delta refuses, we ran: {c.delta_refused}"
        return
    assert case_id not in DELTA_REFUSES_KNOWN, "Delta vacuums it now: drop it"
    assert c.ours_at_table == c.delta_at_table, (
        f"at the table's retention: only ours {sorted(c.ours_at_table - c.delta_at_table)}, "
        f"only Delta's {sorted(c.delta_at_table - c.ours_at_table)}"
    )
    assert c.ours_at_zero == c.delta_at_zero, (
        f"at zero: only ours {sorted(c.ours_at_zero - c.delta_at_zero)}, "
        f"only Delta's {sorted(c.delta_at_zero - c.ours_at_zero)}"
    )
    assert not c.ours_log_changed, "our VACUUM deleted or rewrote _delta_log files"
    if not c.delta_real_run:
        deleted, selected = real_run_differences(c)
        assert deleted == selected, (
            f"our real run: deleted unselected {sorted(deleted - selected)}, "
            f"left selected {sorted(selected - deleted)}"
        )
        return
    # we add only what Delta's run adds too (_last_vacuum_info); Delta also commits
    assert c.ours_log_added <= c.delta_log_added, (c.ours_log_added, c.delta_log_added)
    ours, delta = on_purpose_real_run(c)
    assert ours == delta, (
        f"after the real runs: only in ours {sorted(ours - delta)}, "
        f"only in Delta's {sorted(delta - ours)}"
    )
    # the selection is the planted and tombstoned files, not nothing
    if case_id.startswith("corpus/"):
        assert "untracked-old.parquet" in c.ours_at_table
        assert "untracked-young.parquet" not in c.ours_at_table
        assert {".hidden", "_tmp/x.parquet"} <= c.after_ours
        assert "empty-old-dir/" not in c.after_ours


def test_vacuum_oracle_summary(vacuum_comparisons: dict[str, VacuumComparison]) -> None:
    """The counts (printed with ``-s``), and the corpus: Delta vacuums every table it wrote."""
    counts = Counter(c.verdict for c in vacuum_comparisons.values())
    slowest = max(vacuum_comparisons.values(), key=lambda c: c.seconds)
    print(f"vacuum oracle: {dict(counts)}; slowest {slowest.case} {slowest.seconds:.1f} s")
    for c in vacuum_comparisons.values():
        if c.verdict in ("refused", "delta refuses", "both refuse"):
            print(f"  {c.case}: {c.verdict}: ours {c.ours_refused} / Delta {c.delta_refused}")
    corpus = [c for c in vacuum_comparisons.values() if c.case.startswith("corpus/")]
    assert len(corpus) == len(TABLES)
    assert all(c.delta_refused is None for c in corpus), [c.delta_refused for c in corpus]


def test_the_recorded_delta_answers_hold(
    vacuum_comparisons: dict[str, VacuumComparison],
) -> None:
    """Every fixture case has a current recording, or is asked of Delta in every run, and where
    Delta was asked live in this run (the fixed sample at least) it answered as recorded."""
    answers = load_answers()
    live = [c for c in vacuum_comparisons.values() if not c.delta_recorded]
    recorded = [c for c in vacuum_comparisons.values() if c.delta_recorded]
    print(f"vacuum oracle: Delta live on {len(live)} cases, recorded on {len(recorded)}")
    fix = f"run tests/oracle/test_vacuum_oracle.py with {MODE_ENV}=record and commit the file"
    for case in FIXTURE_CASES:
        answer = answers.get(case.id)
        c = vacuum_comparisons[case.id]
        if answer is None or answer.tree != tree_digest(case.path):
            assert not c.delta_recorded
            unsettled = c.delta_refused is None and c.delta_at_table != c.delta_at_zero
            assert unsettled, f"{case.id}: no current recording of Delta's answer; {fix}"
            continue
        if not c.delta_recorded:
            assert c.delta_refused == answer.refused, (case.id, c.delta_refused, answer, fix)
            assert c.delta_at_zero == answer.at_zero, (case.id, fix)
            assert c.delta_at_table == answer.at_table, (case.id, fix)
    if FIXTURE_CASES and OracleMode.from_env() is OracleMode.RECORDED:
        sampled = {
            c.id for c in FIXTURE_CASES if asked_live(c.id, CASE_IDS_FIXTURES, OracleMode.RECORDED)
        }
        assert sampled <= {c.case for c in live}
