"""The op registry: each op declared once, its settings slice, name checks, direct-call options."""

from __future__ import annotations

import pytest

from python_ops.errors import ConfigError
from python_ops.maintenance.configuration.config import SETTINGS, MaintenanceConfig
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.runs.registry import OPS, REGISTRY, check_ops, op_spec


def test_the_ops_in_order() -> None:
    assert OPS == ("vacuum", "optimize", "cleanup_logs", "purge", "stats")
    assert [spec.name for spec in REGISTRY.values()] == list(OPS)
    assert {spec.name: spec.needs_spark for spec in REGISTRY.values()} == {
        "vacuum": True,
        "optimize": False,
        "cleanup_logs": False,
        "purge": False,
        "stats": False,
    }


def test_unknown_op_names_the_valid_ones() -> None:
    assert check_ops(None) == ("vacuum", "optimize", "cleanup_logs", "purge", "stats")
    with pytest.raises(ConfigError, match=r"'vacum'.*vacuum, optimize, cleanup_logs.*'vacuum'"):
        check_ops(["vacum"])


def test_check_ops_takes_one_name_or_a_list_and_keeps_their_order() -> None:
    assert check_ops("optimize") == ("optimize",)
    assert check_ops(["cleanup_logs", "vacuum"]) == ("cleanup_logs", "vacuum")
    assert check_ops([]) == OPS  # an empty list means every op, as None does
    with pytest.raises(ConfigError, match=r"setting 'ops' has bad value 'reindex'. Choose from"):
        check_ops(["vacuum", "reindex"])


def test_op_spec_without_a_near_name_gives_no_guess() -> None:
    assert op_spec("vacuum") is REGISTRY["vacuum"]
    with pytest.raises(ConfigError) as err:
        op_spec("xyzzy")
    assert "Choose from: vacuum, optimize, cleanup_logs, purge, stats." in str(err.value)
    assert "Did you mean" not in str(err.value)


def test_settings_slices_belong_to_their_op() -> None:
    keys = {op: {s.key for s in op_spec(op).settings} for op in OPS}
    assert keys == {
        "vacuum": {
            "maintenance_vacuum_enabled",
            "maintenance_vacuum_retention_hours",
            "maintenance_vacuum_allow_short_retention",
            "maintenance_vacuum_record_short_retention",
            "maintenance_vacuum_interval_hours",
            "maintenance_vacuum_mode",
            "maintenance_vacuum_full_interval_days",
        },
        "optimize": {
            "maintenance_optimize_enabled",
            "maintenance_zorder_by",
            "maintenance_cluster_by",
            "maintenance_target_file_size",
            "maintenance_min_small_files",
            "maintenance_memory_budget",
            "maintenance_optimize_interval_hours",
        },
        "cleanup_logs": {
            "maintenance_cleanup_logs_enabled",
            "maintenance_log_retention_days",
            "maintenance_cleanup_logs_interval_hours",
        },
        "purge": {
            "maintenance_purge_enabled",
            "maintenance_purge_deleted_ratio",
            "maintenance_purge_interval_hours",
        },
        "stats": {
            "maintenance_stats",
            "maintenance_stats_columns",
            "maintenance_stats_interval_hours",
        },
    }
    # the slices and the model-wide settings are every setting, each exactly once
    model_wide = {s.key for s in SETTINGS if s.op is None}
    assert model_wide == {
        "maintenance_enabled",
        "maintenance_on_error",
        "maintenance_min_files_written",  # the post-hook's gate, before any op
        "maintenance_post_hook_jvm",  # whether the post-hook may start a JVM, for any op
    }
    assert sum(len(k) for k in keys.values()) + len(model_wide) == len(SETTINGS)


def test_every_op_has_a_switch_and_an_interval() -> None:
    config = MaintenanceConfig(model="m")
    for op in OPS:
        names = {s.name for s in op_spec(op).settings}
        # statistics upkeep's switch is its mode, maintenance_stats: auto | off (default off)
        switch = "stats" if op == "stats" else f"{op}_enabled"
        assert {switch, f"{op}_interval_hours"} <= names
        assert config.op_enabled(op) is (op != "stats")
        assert config.interval_hours(op) >= 0
    assert MaintenanceConfig(model="m", stats="auto").op_enabled("stats")


@pytest.mark.parametrize(
    ("op", "option", "accepted"),
    [
        ("vacuum", "retention_days", "retention_hours"),
        ("optimize", "retention_hours", "zorder_by"),
        ("cleanup_logs", "zorder_by", "retention_days"),
    ],
)
def test_invoke_refuses_an_option_the_op_does_not_take(op: str, option: str, accepted: str) -> None:
    with pytest.raises(
        ConfigError, match=rf"setting '{option}' has bad value 1.*{op} takes: "
    ) as e:
        op_spec(op).invoke("/nonexistent/table", spark=None, model="fct", **{option: 1})
    assert accepted in str(e.value)
    assert "model 'fct'" in str(e.value)


def test_statuses_and_reasons_are_the_strings_history_keeps() -> None:
    assert [s.value for s in Status] == ["succeeded", "failed", "not_due", "skipped", "deferred"]
    assert Status.SUCCEEDED == "succeeded"
    assert {r.value for r in Reason} == {
        "due",
        "requested",
        "not_due",
        "disabled",
        "too_soon",
        "time_budget",
        "needs_jvm",
        "error",
    }
