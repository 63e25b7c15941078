"""A pytest plugin (``-p tests.helpers.xdist_scheduling`` in pyproject's addopts): xdist's units,
and the end of the servers the workers share.

It must be a plugin, not a ``tests/conftest.py`` hook: xdist's controller process, which makes the
scheduler and outlives every worker, collects no tests and so never loads that conftest.
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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In xdist's controller, after every worker is done: stop the servers they shared."""
    config = session.config
    if hasattr(config, "workerinput") or config.getvalue("dist") in (None, "no"):
        return  # a worker, or a run without xdist (its fixtures stop their own servers)
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:
        return
    from tests.helpers.shared_servers import stop_shared_servers

    stop_shared_servers(factory.getbasetemp())
