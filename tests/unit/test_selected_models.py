"""Applying a selection dbt resolved (the resolution itself: tests/e2e/test_selection_dbt.py).

``python_ops`` does not parse dbt's selection; it keeps the targets whose unique ids dbt
selected, reads the resolver's JSON answer, and knows when there is anything to resolve.
"""

from __future__ import annotations

import json

import pytest

from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import MaintenanceConfig
from python_ops.maintenance.selection.selected_models import (
    ResolvedSelection,
    keep_selected,
    needs_resolution,
)
from python_ops.maintenance.selection.selection_resolver import parse_resolution
from python_ops.maintenance.selection.targets import ModelTarget


def model(name: str) -> ModelTarget:
    return ModelTarget(
        name=name,
        location=f"/wh/shop/{name}",
        config=MaintenanceConfig(model=name),
        unique_id=f"model.shop.{name}",
    )


TARGETS = [model("landing_orders"), model("fct_orders"), model("dim_customers")]


def test_nothing_resolved_keeps_every_target_in_order() -> None:
    assert keep_selected(TARGETS, None) == TARGETS


def test_the_selected_unique_ids_are_kept_in_target_order() -> None:
    chosen = keep_selected(TARGETS, {"model.shop.dim_customers", "model.shop.landing_orders"})
    assert [t.name for t in chosen] == ["landing_orders", "dim_customers"]


def test_an_empty_selection_keeps_nothing() -> None:
    assert keep_selected(TARGETS, frozenset()) == []


def test_the_resolver_answer_is_its_last_line() -> None:
    answer = {"unique_ids": ["model.shop.fct_orders"], "warnings": ["w"], "selector": "nightly"}
    resolved = parse_resolution("some dbt log line\n" + json.dumps(answer) + "\n")
    assert resolved == ResolvedSelection(frozenset({"model.shop.fct_orders"}), ("w",), "nightly")


def test_no_unique_ids_means_every_model() -> None:
    assert parse_resolution('{"unique_ids": null, "warnings": []}').unique_ids is None


def test_a_rejected_selection_is_a_config_error_with_dbt_s_message() -> None:
    with pytest.raises(ConfigError, match="'colour' is not a valid method name"):
        parse_resolution('{"error": "\'colour\' is not a valid method name"}')


def test_dbt_s_refusal_is_said_once_not_wrapped_as_a_bad_setting() -> None:
    # issue 65 item 8: "setting 'select' has bad value \"the selection criterion ... (did you
    # mean 'fct_orders'?) ...\". Use a selection dbt ls accepts." said dbt's message twice over
    said = "the selection criterion 'fct_order' does not match (did you mean 'fct_orders'?)"
    with pytest.raises(ConfigError) as err:
        parse_resolution(json.dumps({"error": said}))
    assert str(err.value) == said


def test_no_answer_says_dbt_may_be_missing() -> None:
    with pytest.raises(ConfigError, match="is the sparkdelta adapter"):
        parse_resolution("ModuleNotFoundError: No module named 'dbt'")


def test_resolution_is_needed_for_a_selection_or_a_default_selector() -> None:
    assert not needs_resolution(None, None, None)
    assert not needs_resolution([], [], None, {"s": {"default": False}})
    assert needs_resolution(["+fct_orders"], None, None)
    assert needs_resolution(None, ["tag:x"], None)
    assert needs_resolution(None, None, "nightly")
    assert needs_resolution(None, None, None, {"s": {"name": "s", "default": True}})
