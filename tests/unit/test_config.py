"""The typed per-model maintenance config: parsing, every validation error, one declaration.

``MaintenanceConfig``'s fields are the only list of settings: ``SETTINGS`` (the adapter's keys,
``parse_config``) and docs/configuration.md's table are read from them.
"""

from __future__ import annotations

import dataclasses

import pytest

from python_ops.errors import ConfigError, ConfigErrors
from python_ops.maintenance.configuration.config import (
    KEYS,
    SETTINGS,
    MaintenanceConfig,
    parse_config,
    parse_size,
    reference_table,
)
from tests.helpers.paths import ROOT


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
    assert (c.vacuum_mode, c.vacuum_full_interval_days) == ("auto", 7)
    lite = parse_config("fct", {"maintenance_vacuum_mode": "LITE"})
    assert (lite.vacuum_mode, lite.vacuum_full_interval_days) == ("lite", 7)


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
        ("maintenance_vacuum_mode", "fast", r"'fast'\. Choose one of: auto, full, lite"),
        ("maintenance_vacuum_mode", 1, r"1\. Choose one of: auto, full, lite"),
        ("maintenance_vacuum_full_interval_days", -1, r"'?-1'?\. Use a number of 0 or more"),
        ("maintenance_vacuum_full_interval_days", "weekly", r"Use a number of 0 or more"),
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


def test_docs_document_every_key_with_its_default() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert (
        reference_table() in page
    )  # regenerate with python_ops.maintenance.configuration.config.reference_table()


def test_every_field_is_a_setting_with_its_default() -> None:
    # the model's name, and the auto clustering mode and the choice the runner resolves for it
    not_settings = ("model", "zorder_auto", "cluster_auto", "auto_choice")
    fields = {
        f.name: f for f in dataclasses.fields(MaintenanceConfig) if f.name not in not_settings
    }
    assert [s.name for s in SETTINGS] == list(fields)
    for s in SETTINGS:
        assert s.default == fields[s.name].default, s.key
        assert s.key.startswith("maintenance_"), s.key
        assert KEYS[s.key] is s
    assert len(KEYS) == len(SETTINGS)  # no two settings share a key
    # one key differs from its field name: the size is given in bytes or units
    assert KEYS["maintenance_target_file_size"].name == "target_file_size_bytes"
    assert parse_config("m", {}) == MaintenanceConfig(model="m")


def test_every_setting_parses_its_default_back() -> None:
    for s in SETTINGS:
        if s.default is None:
            continue
        raw = list(s.default) if isinstance(s.default, tuple) else s.default
        assert s.parse("m", s.key, raw) == s.default, s.key


def test_other_keys_are_ignored_and_nulls_mean_default() -> None:
    c = parse_config(
        "m",
        {
            "materialized": "incremental",
            "unique_key": "id",
            "maintenance_vacuum_retention_hours": None,
            "maintenance_min_small_files": None,
        },
    )
    assert c == MaintenanceConfig(model="m")


def test_values_as_dbt_passes_them() -> None:
    c = parse_config(
        "m",
        {
            "maintenance_enabled": "false",  # from a --vars string
            "maintenance_optimize_enabled": "TRUE",
            "maintenance_zorder_by": "customer_id, order_id",
            "maintenance_vacuum_retention_hours": "240",
            "maintenance_log_retention_days": 7,
            "maintenance_on_error": "fail",
        },
    )
    assert c.enabled is False
    assert c.optimize_enabled is True
    assert not c.op_enabled("optimize")  # the master switch wins
    assert c.zorder_by == ("customer_id", "order_id")
    assert c.vacuum_retention_hours == 240
    assert c.log_retention_days == 7
    assert c.on_error == "fail"
    assert c.interval_hours("vacuum") == 24
    assert c.interval_hours("optimize") == 24  # unset, with Z-order columns: once a day
    assert parse_config("m", {}).interval_hours("optimize") == 0  # compaction: when worth it
    explicit = {"maintenance_zorder_by": ["a"], "maintenance_optimize_interval_hours": 0}
    assert parse_config("m", explicit).interval_hours("optimize") == 0


@pytest.mark.parametrize(
    ("raw", "size"),
    [
        (134217728, 134217728),
        ("128MB", 128_000_000),
        ("1GiB", 1024**3),
        ("1.5 kb", 1500),
        (" 64 mib ", 64 * 1024**2),
        ("42", 42),
    ],
)
def test_sizes(raw: object, size: int) -> None:
    assert parse_size("m", "maintenance_target_file_size", raw) == size


@pytest.mark.parametrize("raw", [0, "0MB", "-1", True, "1TB", "12 parsecs", None])
def test_bad_sizes(raw: object) -> None:
    with pytest.raises(ConfigError, match="maintenance_target_file_size"):
        parse_size("m", "maintenance_target_file_size", raw)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("maintenance_zorder_by", [1, 2]),
        ("maintenance_zorder_by", {"a": 1}),
        ("maintenance_min_small_files", True),
        ("maintenance_min_small_files", 2.5),
        ("maintenance_vacuum_allow_short_retention", 1),
        ("maintenance_log_retention_days", 0),
    ],
)
def test_more_bad_values(key: str, value: object) -> None:
    with pytest.raises(ConfigError, match=rf"model 'fct': setting '{key}' has bad value"):
        parse_config("fct", {key: value})


def test_a_key_like_no_other_lists_the_valid_keys() -> None:
    with pytest.raises(ConfigError, match=r"Unknown key. Valid keys: maintenance_enabled, "):
        parse_config("fct", {"maintenance_" + "q" * 24: 1})


def test_policy_properties_refuse_bad_numbers_from_python_callers() -> None:
    from python_ops.delta.table.recorded_retentions import policy_properties

    with pytest.raises(ConfigError, match="deleted_file_retention_hours"):
        policy_properties(log_retention_days=None, deleted_file_retention_hours=float("nan"))
    assert policy_properties(log_retention_days=7, deleted_file_retention_hours=240) == {
        "delta.logRetentionDuration": "interval 7 days",
        "delta.deletedFileRetentionDuration": "interval 240 hours",
        # what the package recorded, so that it follows the config instead of becoming a floor
        "sparkdelta.recorded.logRetentionDuration": "interval 7 days",
        "sparkdelta.recorded.deletedFileRetentionDuration": "interval 240 hours",
    }
    assert policy_properties(log_retention_days=None, deleted_file_retention_hours=None) == {}


def test_every_bad_setting_of_a_model_is_reported_at_once() -> None:
    config = {
        "maintenance_vacum_retention_hours": 10,  # misspelt
        "maintenance_on_error": "ignore",
        "maintenance_min_small_files": 1,
        "maintenance_zorder_by": ["a"],
        "maintenance_cluster_by": ["b"],
        "maintenance_optimize_enabled": True,  # good values stay out of the list
    }
    with pytest.raises(
        ConfigErrors, match=r"^model 'fct' has 4 bad maintenance settings; fix all of them:\n"
    ) as caught:
        parse_config("fct", config)
    lines = str(caught.value).splitlines()[1:]
    assert lines == [
        "  - model 'fct': setting 'maintenance_vacum_retention_hours' has bad value 10. "
        "Unknown key. Did you mean 'maintenance_vacuum_retention_hours'?",
        "  - model 'fct': setting 'maintenance_min_small_files' has bad value 1. "
        "Use a whole number of 2 or more.",
        "  - model 'fct': setting 'maintenance_on_error' has bad value 'ignore'. "
        "Choose one of: warn, fail.",
        "  - model 'fct': setting 'maintenance_zorder_by' has bad value ['a']. the model also "
        "sets maintenance_cluster_by: a liquid-clustered table is optimized by clustering and "
        "Delta refuses ZORDER BY on it. Keep one of the two.",
    ]
    assert [e.setting for e in caught.value.errors] == [
        "maintenance_vacum_retention_hours",
        "maintenance_min_small_files",
        "maintenance_on_error",
        "maintenance_zorder_by",
    ]
    # still a ConfigError, its fields those of the first item, for callers that catch one
    assert isinstance(caught.value, ConfigError)
    assert (caught.value.model, caught.value.setting) == (
        "fct",
        "maintenance_vacum_retention_hours",
    )


def test_one_bad_setting_keeps_the_single_message() -> None:
    with pytest.raises(ConfigError, match=r"^model 'fct': setting 'maintenance_on_error'") as c:
        parse_config("fct", {"maintenance_on_error": "ignore", "maintenance_enabled": True})
    assert not isinstance(c.value, ConfigErrors)


def test_a_short_vacuum_retention_is_recorded_only_when_asked() -> None:
    from python_ops.delta.table.recorded_retentions import policy_properties

    # below Delta's 168 h default: left out, so the table keeps its own (or Delta's default)
    assert policy_properties(log_retention_days=7, deleted_file_retention_hours=1) == {
        "delta.logRetentionDuration": "interval 7 days",
        "sparkdelta.recorded.logRetentionDuration": "interval 7 days",
    }
    assert policy_properties(log_retention_days=None, deleted_file_retention_hours=167.5) == {}
    assert policy_properties(
        log_retention_days=None, deleted_file_retention_hours=1, record_short_retention=True
    ) == {
        "delta.deletedFileRetentionDuration": "interval 1 hours",
        "sparkdelta.recorded.deletedFileRetentionDuration": "interval 1 hours",
    }
    assert "interval 168 hours" in policy_properties(
        log_retention_days=None, deleted_file_retention_hours=168
    ).get("delta.deletedFileRetentionDuration", "")
    asked = parse_config("fct", {"maintenance_vacuum_record_short_retention": "true"})
    assert asked.vacuum_record_short_retention is True
    assert parse_config("fct", {}).vacuum_record_short_retention is False
