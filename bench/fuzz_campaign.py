"""Differential fuzz campaign: mixed-writer Delta tables, one of our ops each, Delta as the oracle.

The property of ``tests/integration/test_differential_fuzz.py`` (``tests.helpers.mixed_writers``)
run with many examples: hypothesis draws a table written by a random interleaving of Delta 4.4 on
Spark, delta-rs and Sail, and one of our ops (VACUUM full/lite, compaction, Z-order, log
cleanup, statistics); Delta must read the same rows afterwards, a refusal must leave every file
as it was, and our VACUUM must never select a path Delta's own zero-retention dry run keeps.

It starts its own Delta Connect server (as the tests' ``delta_server`` fixture does, from
``tests.helpers.spark_servers``, with the tests' JVM options) unless ``--connect`` names one, and
an embedded Sail engine. Explored examples take the ops in turn (each gets its share);
hypothesis draws the table and the op's variant. A failure is shrunk by hypothesis to a minimal
example and recorded; the campaign goes on with a new seed, counting later failures of the same
kind without shrinking them again, until ``--examples`` explored examples (or ``--minutes``)
are done. The results table (tables generated, per op ran / refused / failed, refusal reasons,
writer combinations that failed, each failure's minimal example) goes to stdout and to
``bench/results/fuzz_campaign.md``; it is also rewritten every 25 examples while it runs.
SIGTERM or Ctrl-C ends it early, with the table written.

    .venv/bin/python bench/fuzz_campaign.py --examples 2000
    .venv/bin/python bench/fuzz_campaign.py --examples 50 --connect sc://127.0.0.1:15002
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.helpers.mixed_writers import (  # noqa: E402
    MAX_STEPS,
    OPS,
    WITH_SESSION,
    GenerationFailed,
    OpSpec,
    StepFailed,
    TableSpec,
    apply_steps,
    describe,
    first_line,
    for_op,
    ops,
    run_op,
    tables,
)

RESULTS = ROOT / "bench" / "results" / "fuzz_campaign.md"
WRITE_EVERY = 25


class _Shrunk(Exception):
    """Raised to hypothesis for the failure being shrunk (wraps the original error)."""


class _Broken(BaseException):
    """The Delta server or a session broke: the campaign stops (hypothesis passes it on)."""


#: Errors that say the Delta server or a session broke, not a table or an op.
BROKEN = (
    "Cannot call methods on a stopped SparkContext",
    "OutOfMemoryError",
    "StatusCode.UNAVAILABLE",
    "Connection refused",
)


@dataclass
class Failure:
    """One kind of failure: how often, its minimal example and the error it raised."""

    signature: str
    count: int = 0
    example: str = ""
    error: str = ""
    table: str = ""
    shrunk: bool = False


@dataclass
class Campaign:
    """The campaign's state: sessions, counters and the failures found."""

    delta: Any
    sail: Any
    workdir: Path
    examples: int
    minutes: float | None
    max_steps: int
    ops: tuple[str, ...] = OPS
    rs_on_dv: bool = False
    out: Path = RESULTS
    started: float = field(default_factory=time.monotonic)
    commit: str = field(default_factory=lambda: _commit())  # the code under test, at the start
    explored: int = 0
    shrink_runs: int = 0
    generated: int = 0
    per_op: dict[str, Counter[str]] = field(default_factory=dict)
    refusals: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    writers: Counter[str] = field(default_factory=Counter)
    failures: dict[str, Failure] = field(default_factory=dict)
    while_shrinking: dict[str, Failure] = field(default_factory=dict)  # other kinds met then
    current: str | None = None  # the signature being shrunk
    current_op: str | None = None  # its op
    broken: str | None = None  # why the campaign stopped early
    seeds: list[int] = field(default_factory=list)
    stopped_by_time: bool = False
    seconds: list[float] = field(default_factory=list)
    phase_s: dict[str, float] = field(default_factory=dict)
    known: Counter[str] = field(default_factory=Counter)
    known_why: dict[str, tuple[str, str]] = field(default_factory=dict)
    note_examples: dict[str, str] = field(default_factory=dict)
    refusal_examples: dict[str, str] = field(default_factory=dict)

    def _spent(self, seconds: dict[str, float]) -> None:
        for what, s in seconds.items():
            self.phase_s[what] = self.phase_s.get(what, 0.0) + s

    def out_of_time(self) -> bool:
        if self.minutes is None:
            return False
        return time.monotonic() - self.started > self.minutes * 60

    def example(self, spec: TableSpec, op: OpSpec) -> None:
        """One example: write the table, run the op, count; raise only what is being shrunk."""
        shrinking = self.current is not None
        if not shrinking and (self.explored >= self.examples or self.out_of_time()):
            self.stopped_by_time = self.stopped_by_time or self.out_of_time()
            return  # the budget is spent: hypothesis runs out its examples at no cost
        if shrinking:
            self.shrink_runs += 1
        else:
            self.explored += 1
        spec = for_op(spec, op)  # a purge gets a table with deletion vectors
        path = Path(tempfile.mkdtemp(prefix="t", dir=self.workdir)) / "table"
        begun = time.monotonic()
        signature, error = None, None
        try:
            applied = apply_steps(
                spec, path, delta=self.delta, sail=self.sail, rs_on_dv=self.rs_on_dv
            )
            generation = time.monotonic() - begun
            if not shrinking:
                self.generated += 1
                self._spent({"write the table": generation})
                for _index, step, reason in applied.skipped:
                    self.skipped[f"{step.engine} {step.action}: {reason}"] += 1
                for step in spec.steps:
                    self.writers[f"{step.engine} {step.action}"] += 1
            outcome = run_op(op, path, delta=self.delta, rows_before=applied.rows)
            if not shrinking:
                counts = self.per_op.setdefault(_variant(op), Counter())
                counts[outcome.status] += 1
                counts["changed"] += outcome.changed
                self._spent(outcome.seconds)
                if outcome.refusal:
                    key = f"{_variant(op)}: {_normalised(outcome.refusal, path)}"
                    self.refusals[key] += 1
                    if key not in self.refusal_examples:
                        self.refusal_examples[key] = f"{describe(spec, op)}\n# {outcome.refusal}"
                for note in outcome.notes:
                    key = f"{_variant(op)}: {_normalised(note, path)}"
                    self.notes[key] += 1
                    if key not in self.note_examples:
                        detail = {
                            k: v
                            for k, v in outcome.detail.items()
                            if "diff" in k or k.endswith("only")
                        }
                        self.note_examples[key] = f"{describe(spec, op)}\n# {note}\n# {detail}"
        except GenerationFailed as err:
            where = (
                f"writer {err.step.engine} {err.step.action} fails"
                if isinstance(err, StepFailed)
                else "Delta cannot read the generated table"
            )
            signature = f"{where}: {_normalised(first_line(err.err), path)}"
            error = f"{err}\n\n{traceback.format_exception_only(err.err)[-1][-3000:]}"
            if err.known is not None:  # understood: counted with its first example, not shrunk
                if not shrinking:
                    self.known[signature] += 1
                    self.known_why.setdefault(signature, (err.known, describe(spec, op)))
                signature = None
        except AssertionError as err:
            message = str(err)
            signature = f"{_variant(op)}: " + _normalised(message.split(":")[0], path)
            error = message
            if not shrinking:
                self.per_op.setdefault(_variant(op), Counter())["failed"] += 1
        except Exception as err:
            signature = f"{_variant(op)}: crashed: {_normalised(first_line(err), path)}"
            error = traceback.format_exc()[-4000:]
            if not shrinking:
                self.per_op.setdefault(_variant(op), Counter())["failed"] += 1
        finally:
            if not shrinking:
                self.seconds.append(time.monotonic() - begun)
        if signature is None:
            shutil.rmtree(path.parent, ignore_errors=True)
            if not shrinking and self.explored % WRITE_EVERY == 0:
                self.write()
            return
        broken = next((sign for sign in BROKEN if sign in (error or "")), None)
        if broken is not None:
            self.broken = f"{signature}\n{(error or '')[:1500]}"
            raise _Broken(broken)
        failure = self.failures.get(signature)
        if failure is None and not shrinking:  # a new kind: shrink it
            failure = self.failures[signature] = Failure(signature)
            self.current, self.current_op = signature, op.name
            print(f"\n[{self.explored}] new failure, shrinking: {signature}", flush=True)
        if failure is not None and not shrinking:
            failure.count += 1
        if failure is not None and signature == self.current:
            failure.example = describe(spec, op)
            failure.error = (error or "")[:4000]
            failure.table = str(path)
            raise _Shrunk(signature)
        if failure is None and signature not in self.while_shrinking:
            self.while_shrinking[signature] = Failure(
                signature, 1, describe(spec, op), error or "", str(path)
            )
            return  # the table is kept: this example is all there is of this kind so far
        if failure is not None and not failure.example:  # seen before it was shrunk
            failure.example, failure.error, failure.table = (
                describe(spec, op),
                error or "",
                str(path),
            )
        shutil.rmtree(path.parent, ignore_errors=True)

    def run(self, first_seed: int) -> None:
        """Hypothesis runs (a new seed after each failure) until the budget is spent.

        The op is not left to hypothesis's choice (it favours the first choice of a
        ``sampled_from`` in many examples): explored examples take the ops in turn, and the
        examples that shrink a failure keep its op. Hypothesis draws the op's variant.
        """
        run = 0
        while self.explored < self.examples and not self.out_of_time():
            run_seed = first_seed + run
            self.seeds.append(run_seed)
            run += 1

            @settings(
                max_examples=self.examples - self.explored,
                deadline=None,
                database=None,
                report_multiple_bugs=False,
                phases=[Phase.generate, Phase.shrink],
                suppress_health_check=list(HealthCheck),
            )
            @hypothesis_seed(run_seed)
            @given(spec=tables(max_steps=self.max_steps), data=st.data())
            def prop(spec: TableSpec, data: st.DataObject) -> None:
                name = self.current_op or self.ops[self.explored % len(self.ops)]
                self.example(spec, data.draw(ops(name), label="op"))

            try:
                prop()
                return  # hypothesis ran out its examples without a failure being shrunk
            except _Shrunk:
                pass
            except _Broken as err:
                print(f"stopped: the Delta server or a session broke ({err})", flush=True)
                if self.current is not None:  # its shrinking did not finish: not a finding
                    del self.failures[self.current]
                return
            except Exception as err:  # hypothesis itself (flaky failure, ...): noted
                print(f"hypothesis ended the run: {first_line(err)}", flush=True)
                self.notes[f"hypothesis ended a run: {first_line(err)[:120]}"] += 1
                if self.current is not None:
                    self.failures[self.current].error += f"\n(hypothesis: {first_line(err)})"
            if self.current is not None:
                self.failures[self.current].shrunk = True
                print(f"shrunk: {self.current}\n{self.failures[self.current].example}", flush=True)
            self.current = self.current_op = None
            self.write()

    def write(self) -> str:
        text = self.report()
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(text)
        return text

    def report(self) -> str:
        wall = time.monotonic() - self.started
        lines = [
            "# Differential fuzz campaign: mixed writers, our ops, Delta 4.4 as the oracle",
            "",
            f"Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `bench/fuzz_campaign.py` at "
            f"commit `{self.commit}` (the code as the run started). {_versions()}.",
            "",
            f"- examples asked: {self.examples}; explored: {self.explored}"
            + (" (stopped by the time limit)" if self.stopped_by_time else "")
            + f"; extra runs while shrinking: {self.shrink_runs}",
            f"- tables generated (every step written): {self.generated}",
            f"- hypothesis runs: {len(self.seeds)} (seeds {_span(self.seeds)}; a new run after "
            "each failure shrunk; explored examples take the ops in turn); steps per table "
            f"1-{self.max_steps}; ops drawn: {', '.join(self.ops)}; delta-rs steps on tables "
            f"with deletion vectors: {'run' if self.rs_on_dv else 'skipped'}",
            f"- wall time: {wall / 60:.1f} min; per explored example: median "
            f"{_median(self.seconds):.1f} s",
            "",
            "## Per op",
            "",
            "| op | ran | of which changed the table | refused | failed |",
            "|---|---:|---:|---:|---:|",
        ]
        for variant in sorted(self.per_op):
            c = self.per_op[variant]
            lines.append(
                f"| {variant} | {c['ran']} | {c['changed']} | {c['refused']} | {c['failed']} |"
            )
        if self.phase_s and self.explored:
            spent = ", ".join(
                f"{what} {total / self.explored:.1f} s" for what, total in self.phase_s.items()
            )
            lines += ["", f"Mean seconds per explored example: {spent}."]
        if self.broken:
            lines += ["", "**Stopped early: the Delta server or a session broke.** Last error:"]
            lines += ["", "```text", self.broken, "```"]
        lines += ["", "## Failures (minimal examples)", ""]
        if not self.failures:
            lines.append("None.")
        for failure in self.failures.values():
            state = "minimal example" if failure.shrunk else "example (not shrunk)"
            lines += [
                f"### {failure.signature}",
                "",
                f"Seen {failure.count} times while exploring; {state}"
                + (f" (table kept at `{failure.table}`)" if failure.table else "")
                + ":",
                "",
                "```python",
                failure.example,
                "```",
                "",
                "```text",
                failure.error.strip(),
                "```",
                "",
            ]
        others = [f for s, f in self.while_shrinking.items() if s not in self.failures]
        if others:
            lines += ["", "## Other failures met only while shrinking (not shrunk)", ""]
        for failure in others:
            lines += [f"### {failure.signature}", "", "```python", failure.example, "```", ""]
            lines += ["```text", failure.error.strip()[:2000], "```", ""]
        lines += ["", "## Known writer failures (tables the writers could not make)", ""]
        if not self.known:
            lines.append("None.")
        for signature, n in self.known.most_common():
            why, example = self.known_why[signature]
            lines += [f"### {signature}", "", f"{n} tables. {why}. First example:", ""]
            lines += ["```python", example, "```", ""]
        lines += _counted("Refusals (the table unchanged)", self.refusals)
        for key, example in self.refusal_examples.items():
            lines += ["", f"First example of refusal '{key}':", "", "```python", example, "```"]
        lines += _counted("Notes (not failures)", self.notes)
        for key, example in self.note_examples.items():
            lines += ["", f"First example of note '{key}':", "", "```python", example, "```"]
        lines += _counted("Steps skipped by a known limit", self.skipped)
        lines += _counted("Steps drawn (explored tables)", self.writers)
        return "\n".join(lines) + "\n"


def _variant(op: OpSpec) -> str:
    if op.name == "vacuum":
        return f"vacuum {op.mode}"
    if op.name in WITH_SESSION:
        return f"{op.name} ({'Delta session' if op.delta_sql else 'no session'})"
    return op.name


def _normalised(text: str, path: Path) -> str:
    """One kind of message for every table: paths, versions and numbers made generic."""
    text = text.replace(str(path), "<table>").replace(str(path.parent), "<dir>")
    text = re.sub(r"(file:)?/tmp/\S+", "<path>", text)
    text = re.sub(r"(Illegal character in \w+) at index.*", r"\1", text)
    return re.sub(r"\d+", "N", text)[:160]


def _counted(title: str, counts: Counter[str]) -> list[str]:
    lines = ["", f"## {title}", ""]
    if not counts:
        return [*lines, "None."]
    lines += ["| count | what |", "|---:|---|"]
    for what, n in counts.most_common():
        lines.append(f"| {n} | {what.replace('|', '/')} |")
    return lines


def _span(seeds: list[int]) -> str:
    return f"{seeds[0]}-{seeds[-1]}" if seeds else "-"


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else 0.0


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def _versions() -> str:
    from importlib.metadata import version

    names = ("deltalake", "pysail", "pyspark", "hypothesis")
    return ", ".join(f"{n} {version(n)}" for n in names) + ", Delta 4.4 jars"


def _start_delta(workdir: Path) -> tuple[Any, str]:
    """The tests' Delta Connect server (their JVM settings), and its address."""
    from tests.conftest import pytest_configure
    from tests.helpers.spark_servers import start_connect_server

    pytest_configure(None)  # type: ignore[arg-type]  # the tests' JVM options; config unused
    server = start_connect_server(workdir / "delta-server", long_lived=True)
    print(f"Delta server on port {server.port} (started in {server.start_s:.0f} s)", flush=True)
    return server, f"sc://127.0.0.1:{server.port}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="explored examples")
    parser.add_argument("--seed", type=int, default=None, help="first hypothesis seed")
    parser.add_argument("--minutes", type=float, default=None, help="stop exploring after")
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS)
    parser.add_argument("--ops", default=",".join(OPS), help="the ops drawn (comma-separated)")
    parser.add_argument(
        "--rs-on-dv", action="store_true", help="run delta-rs steps on tables with DVs too"
    )
    parser.add_argument("--connect", default=None, help="a running Delta Connect server")
    parser.add_argument(
        "--server-memory",
        default="4g",
        help="the Delta server's heap (its DeltaLog cache "
        "keeps every table's snapshot: Spark's default 1g ran out after about 300 tables)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="tables (default: temp)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results table")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # not our ops' warnings (the short retention)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="fuzz-campaign-"))
    workdir.mkdir(parents=True, exist_ok=True)
    first_seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"workdir {workdir}; seed {first_seed}; ops {args.ops}", flush=True)

    from pyspark.sql import SparkSession

    from python_ops.spark_sessions import SailEngine

    os.environ["SPARK_DRIVER_MEMORY"] = args.server_memory  # spark-submit's driver heap
    server, url = (None, args.connect) if args.connect else _start_delta(workdir)
    sail = SailEngine()
    delta = SparkSession.builder.remote(url).create()
    delta.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    names = tuple(n.strip() for n in args.ops.split(",") if n.strip())
    unknown = set(names) - set(OPS)
    if unknown:
        parser.error(f"unknown ops {sorted(unknown)}; choose from {', '.join(OPS)}")
    campaign = Campaign(
        delta,
        sail.spark,
        workdir / "tables",
        args.examples,
        args.minutes,
        args.max_steps,
        names,
        args.rs_on_dv,
        args.out,
    )
    campaign.workdir.mkdir(exist_ok=True)
    signal.signal(signal.SIGTERM, _interrupt)  # a SIGTERM ends the run as Ctrl-C does
    try:
        campaign.run(first_seed)
    except KeyboardInterrupt:
        print("\ninterrupted", flush=True)
    text = campaign.write()
    print(text)
    print(f"written to {args.out}", flush=True)
    # A client session stopped after an interrupted call can hang (pyspark's retries): each
    # stop gets a bounded wait, the server is stopped in any case.
    clean = _bounded(delta.stop) and _bounded(sail.stop)
    if server is not None:
        server.stop()
    code = 1 if campaign.failures else 0
    if not clean:
        _stop_local_writer()
        os._exit(code)  # a hung stop keeps the interpreter from exiting
    return code


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _bounded(stop: Any, seconds: float = 60) -> bool:
    """Run ``stop`` in a thread; False when it did not return within ``seconds``."""
    thread = threading.Thread(target=stop, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        print(
            f"{getattr(stop, '__qualname__', stop)} did not return in {seconds:.0f} s", flush=True
        )
    return not thread.is_alive()


def _stop_local_writer() -> None:
    """Stop the local Delta writer (a child JVM our ops start for tables delta-rs cannot write)."""
    from python_ops import runtime

    if runtime.LOCAL_WRITER.value is not None:
        runtime.LOCAL_WRITER.value.stop()


if __name__ == "__main__":
    sys.exit(main())
