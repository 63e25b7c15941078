"""The typed per-model maintenance config: parsing and every validation error."""

from __future__ import annotations

import pytest

from python_ops.errors import ConfigError
from python_ops.maintenance.config import parse_config, reference_table
from python_ops.maintenance.registry import check_ops
from tests.conftest import ROOT


def test_defaults_and_values() -> None:
    c = parse_config(
        "fct",
        {
            "materialized": "table",
            "maintenance_zorder_by": ["a", "b"],
            "maintenance_target_file_size": "128MB",
            "maintenance_vacuum_enabled": False,
        },
    )
    assert c.zorder_by == ("a", "b")
    assert c.target_file_size_bytes == 128_000_000
    assert not c.op_enabled("vacuum")
    assert c.op_enabled("optimize")
    assert (c.on_error, c.min_small_files, c.vacuum_interval_hours) == ("warn", 10, 24)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("maintenance_vacuum_retention_hours", -1, r"Use a number greater than 0"),
        ("maintenance_vacuum_retention_hours", "nan", r"Use a number greater than 0"),
        ("maintenance_vacuum_retention_hours", float("inf"), r"at most 876000"),
        ("maintenance_log_retention_days", "a week", r"Use a number greater than 0"),
        ("maintenance_vacuum_interval_hours", -0.5, r"Use a number of 0 or more"),
        ("maintenance_on_error", "ignore", r"Choose one of: warn, fail"),
        ("maintenance_min_small_files", 1, r"2 or more"),
        ("maintenance_target_file_size", "big", r"'128MB'"),
        ("maintenance_enabled", "yes", r"true or false"),
        (
            "maintenance_vacum_retention_hours",
            10,
            r"Unknown key. Did you mean 'maintenance_vacuum_retention_hours'\?",
        ),
    ],
)
def test_bad_values_name_model_key_value_and_choices(key: str, value: object, message: str) -> None:
    with pytest.raises(
        ConfigError, match=rf"model 'fct': setting '{key}' has bad value .*{message}"
    ):
        parse_config("fct", {key: value})


def test_unknown_op_names_the_valid_ones() -> None:
    assert check_ops(None) == ("vacuum", "optimize", "cleanup_logs")
    with pytest.raises(ConfigError, match=r"'vacum'.*vacuum, optimize, cleanup_logs.*'vacuum'"):
        check_ops(["vacum"])


def test_readme_documents_every_key_with_its_default() -> None:
    readme = (ROOT / "README.md").read_text()
    assert (
        reference_table() in readme
    )  # regenerate with python_ops.maintenance.config.reference_table()
