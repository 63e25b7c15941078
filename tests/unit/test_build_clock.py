"""Which builds record their start for the post-hook (``build_clock.has_post_hook``).

A materialization records the table's version before the build only for a model whose
post-hook may maintain it; a model without any post-hook records nothing (no listing of its
log). The node arrives as the materialization's ``model`` (a dict, dbt's ``post-hook`` key) or
as dbt's node object (``config.post_hook``); both are read.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from dbt.artifacts.resources import Hook, NodeConfig

from dbt.adapters.sparkdelta.build_clock import has_post_hook

HOOK = "{{ maintain_model() }}"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"materialized": "table", "post-hook": [{"sql": HOOK, "transaction": True}]}, True),
        ({"materialized": "table", "post-hook": []}, False),
        ({"materialized": "table"}, False),
    ],
)
def test_a_materialization_s_model_dict(config: dict[str, object], expected: bool) -> None:
    assert has_post_hook({"unique_id": "model.p.m", "config": config}) is expected


@pytest.mark.parametrize(
    ("config", "expected"),
    [(NodeConfig(post_hook=[Hook(sql=HOOK)]), True), (NodeConfig(), False)],
)
def test_dbt_s_node_config(config: NodeConfig, expected: bool) -> None:
    assert has_post_hook(SimpleNamespace(unique_id="model.p.m", config=config)) is expected
