"""Direct calls through the op registry (the CLI's and the adapter's path) check their options."""

from __future__ import annotations

import pytest

from python_ops.errors import ConfigError
from python_ops.maintenance.runs.registry import REGISTRY, op_spec


@pytest.mark.parametrize("op", list(REGISTRY))
def test_an_option_the_op_does_not_take_is_refused_before_the_table_is_touched(op: str) -> None:
    with pytest.raises(ConfigError, match=r"'retention_hourz' has bad value 1\. .* takes: "):
        op_spec(op).invoke("/nonexistent/table", spark=None, model="m", retention_hourz=1)


def test_options_are_the_op_functions_own_keywords() -> None:
    spec = op_spec("vacuum")
    with pytest.raises(ConfigError, match="retention_hours, dry_run, partition_filter"):
        spec.invoke("/nonexistent/table", spark=None, model="m", nope=True)


def test_each_op_owns_its_settings_slice() -> None:
    keys = {name: {s.key for s in spec.settings} for name, spec in REGISTRY.items()}
    assert "maintenance_vacuum_retention_hours" in keys["vacuum"]
    assert "maintenance_zorder_by" in keys["optimize"]
    assert "maintenance_log_retention_days" in keys["cleanup_logs"]
    assert not keys["vacuum"] & keys["optimize"]
