"""Run dbt commands in this (new) process and write their outcomes as JSON.

``python dbt_main.py '<json list of argument lists>' <out>``, or the same under ``spark-submit``
(the classic session of that process is then the one ``mode: attach`` uses). Used by
``project.new_process``: the reach tests' rebuild in a new process, and every dbt run of the
classic-Spark engines (classic Spark cannot share the test process with Spark Connect).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from tests.e2e.reach.project import run_commands


def main() -> int:
    """Run the commands; 0 when all succeeded."""
    steps = run_commands(json.loads(sys.argv[1]))
    Path(sys.argv[2]).write_text(json.dumps([dataclasses.asdict(s) for s in steps]))
    return 0 if all(s.success for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
