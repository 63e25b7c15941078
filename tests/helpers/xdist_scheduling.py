"""A pytest plugin (``-p tests.helpers.xdist_scheduling`` in pyproject's addopts): xdist's units.

It must be a plugin, not a ``tests/conftest.py`` hook: xdist's controller process, which makes the
scheduler, collects no tests and so never loads that conftest.
"""

from __future__ import annotations

from typing import Any

import pytest

# Modules that share a costly session fixture run on one xdist worker, one after another: the
# oracle modules share the Delta-written corpus (minutes of Delta statements), which a second
# worker would otherwise wait for, idle, or build again.
SHARED_WORKER = ("tests/oracle/",)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile``: one file per unit of work, as xdist does, except the groups
    of ``SHARED_WORKER``, each one unit (None: xdist's own scheduler for other modes)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupedFileScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return next((group for group in SHARED_WORKER if path.startswith(group)), path)

    return GroupedFileScheduling(config, log)
