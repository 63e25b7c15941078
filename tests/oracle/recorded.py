"""Delta's VACUUM answers on the shared fixtures, recorded, and when the oracle asks Delta live.

The shared fixtures (``../shared/fixtures``) never change between runs, and the oracle ages every
copy by the same 60 days, so Delta 4.4's ``VACUUM ... DRY RUN`` of a fixture table gives the same
paths in every run. Asking it again costs the shared Delta server one or two statements per table
(about 80 tables: minutes of its CPU in every CI run). ``delta_vacuum_answers.json`` keeps what
Delta answered, per case:

- the digest of the case's files (names and contents) it answered on,
- the paths its dry run selected (at zero retention, which equals its selection at the table's
  own retention for every recorded case), or its refusal (first line).

An answer is used only while it cannot have moved: the same Delta version, the same files, and a
selection that no longer depends on the clock (at the table's retention it already equals the
one at zero, the most VACUUM can ever select on those files; a refusal depends on the log
alone). Everything else runs live, and so does a fixed sample of the recorded cases in every run
(``LIVE_EVERY``): there Delta's live answer must equal the recording
(``test_vacuum_oracle.py::test_the_recorded_delta_answers_hold``). ``SPARKDELTA_ORACLE=live``
asks Delta for every case; ``SPARKDELTA_ORACLE=record`` does so and writes the file again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from python_ops.delta_jars import DELTA_VERSION

ANSWERS = Path(__file__).with_name("delta_vacuum_answers.json")
MODE_ENV = "SPARKDELTA_ORACLE"
# one recorded case in this many (by its place in the sorted ids) is asked of Delta in every run
LIVE_EVERY = 6


class OracleMode(Enum):
    """How the VACUUM oracle gets Delta's answers on the shared fixtures."""

    RECORDED = "recorded"  # recorded answers where they hold, Delta live on a sample and the rest
    LIVE = "live"  # Delta live on every case
    RECORD = "record"  # Delta live on every case, and the file written again

    @classmethod
    def from_env(cls) -> OracleMode:
        """``SPARKDELTA_ORACLE`` (default ``recorded``)."""
        value = os.environ.get(MODE_ENV, cls.RECORDED.value)
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"{MODE_ENV}={value!r}: use one of {names}") from None


@dataclass(frozen=True)
class DeltaAnswer:
    """What Delta's dry runs answered on one case's aged copy.

    Attributes:
        tree: ``tree_digest`` of the case's directory.
        at_zero: Paths selected with ``RETAIN 0 HOURS``.
        at_table: Paths selected at the table's own retention.
        refused: Delta's error (first line), or None.
    """

    tree: str
    at_zero: frozenset[str]
    at_table: frozenset[str]
    refused: str | None

    @property
    def settled(self) -> bool:
        """Whether the answer no longer depends on the clock (then it may be recorded)."""
        return self.refused is not None or self.at_table == self.at_zero


def tree_digest(path: Path) -> str:
    """sha256 over every file's relative path and contents, and every link's target, in order."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        here = Path(dirpath)
        for name in sorted(filenames + [d for d in dirnames if (here / d).is_symlink()]):
            item = here / name
            digest.update(item.relative_to(path).as_posix().encode() + b"\0")
            if item.is_symlink():
                digest.update(b"link:" + os.readlink(item).encode() + b"\0")
            else:
                digest.update(hashlib.sha256(item.read_bytes()).digest())
    return digest.hexdigest()


def load_answers(path: Path = ANSWERS) -> dict[str, DeltaAnswer]:
    """The recorded answers of this Delta version (none when recorded with another)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if data.get("delta") != DELTA_VERSION:
        return {}
    return {
        case: DeltaAnswer(
            tree=entry["tree"],
            at_zero=frozenset(entry["at_zero"]),
            at_table=frozenset(entry["at_zero"]),
            refused=entry["refused"],
        )
        for case, entry in data["cases"].items()
    }


def save_answers(answers: dict[str, DeltaAnswer], path: Path = ANSWERS) -> None:
    """Write the settled answers (sorted, one case per entry)."""
    cases = {}
    for case, answer in sorted(answers.items()):
        if not answer.settled:
            continue
        entry: dict[str, object] = {
            "tree": answer.tree,
            "refused": answer.refused,
            "at_zero": sorted(answer.at_zero),
        }
        cases[case] = entry  # settled: at the table's retention the same paths
    text = json.dumps({"delta": DELTA_VERSION, "cases": cases}, indent=1, ensure_ascii=False)
    path.write_text(text + "\n")


def asked_live(case_id: str, ordered_ids: list[str], mode: OracleMode) -> bool:
    """Whether Delta is asked for this recorded case in this run (the fixed sample)."""
    return mode is not OracleMode.RECORDED or ordered_ids.index(case_id) % LIVE_EVERY == 0


def usable(answer: DeltaAnswer | None, tree: str) -> bool:
    """Whether a recorded answer may stand in for Delta on a case whose files digest to ``tree``."""
    return answer is not None and answer.tree == tree and answer.settled
