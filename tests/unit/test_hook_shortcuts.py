"""Shortcuts on every post-hook's path, each against the rule as it was written before.

A post-hook that finds nothing due pays for every check it makes; these give the common case
(a protocol of two versions, a table without retentions the package recorded, an op that
never ran) its answer sooner. Hypothesis compares each with the old rule, kept here as the
oracle, over generated inputs (the common case and every other).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.log.actions import optional_int
from python_ops.delta.log.metadata import _string_list, parse_protocol
from python_ops.delta.table.recorded_retentions import (
    DELETED_FILE_RETENTION,
    LOG_RETENTION,
    recorded_by_package,
    recorded_marker,
)
from python_ops.errors import DeltaLogError
from python_ops.maintenance.configuration.config import MaintenanceConfig, parse_config
from python_ops.maintenance.configuration.policy import _pending, stale_policy_of
from python_ops.maintenance.rules.reclaim import _utc

# --- the protocol action ----------------------------------------------------------------------


def _old_parse_protocol(raw: Mapping[str, Any]) -> dict[str, Any]:
    optional_int(raw, "minReaderVersion", "protocol", required=True)
    optional_int(raw, "minWriterVersion", "protocol", required=True)
    _string_list(raw, "readerFeatures")
    _string_list(raw, "writerFeatures")
    return {k: list(v) if isinstance(v, tuple) else v for k, v in raw.items()}


def _outcome(rule: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "value", rule(*args)
    except DeltaLogError as err:
        return "refused", str(err)


versions = st.one_of(
    st.integers(min_value=-2, max_value=8),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.text(max_size=3),
)
features = st.one_of(
    st.lists(st.sampled_from(["deletionVectors", "v2Checkpoint", "x"]), max_size=3),
    st.tuples(st.text(max_size=4)),
    st.lists(st.integers(), min_size=1, max_size=2),
    st.none(),
    st.text(max_size=3),
)


@st.composite
def protocols(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for key in ("minReaderVersion", "minWriterVersion"):
        if draw(st.integers(0, 5)):  # mostly present
            raw[key] = draw(st.integers(0, 7) if draw(st.booleans()) else versions)
    for key in ("readerFeatures", "writerFeatures", "other"):
        if draw(st.integers(0, 3)) == 0:
            raw[key] = draw(features)
    return raw


@settings(max_examples=3000, deadline=None)
@given(raw=protocols())
def test_a_protocol_is_read_as_the_old_rule_read_it(raw: dict[str, Any]) -> None:
    assert _outcome(parse_protocol, raw) == _outcome(_old_parse_protocol, raw)


def test_the_two_versions_alone_are_a_copy() -> None:
    raw = {"minReaderVersion": 1, "minWriterVersion": 2}
    parsed = parse_protocol(raw)
    assert parsed == raw
    assert parsed is not raw
    assert _outcome(parse_protocol, {"minReaderVersion": True, "minWriterVersion": 2})[0] == (
        "refused"
    )
    assert _outcome(parse_protocol, {"minReaderVersion": -1, "minWriterVersion": 2})[0] == (
        "refused"
    )


# --- stale retentions -------------------------------------------------------------------------


def _old_stale_policy_of(
    protocol: Mapping[str, Any],
    configuration: Mapping[str, str],
    location: str,
    config: MaintenanceConfig,
) -> dict[str, str]:
    changes = _pending(protocol, configuration, location, config)
    stale = {
        prop
        for prop in changes
        if prop.startswith("delta.") and recorded_by_package(configuration, prop)
    }
    return changes if stale else {}


VALUES = ["interval 7 days", "interval 30 days", "interval 168 hours", "interval 200 hours", "x"]


@st.composite
def configurations(draw: st.DrawFn) -> dict[str, str]:
    out: dict[str, str] = {}
    for prop in (DELETED_FILE_RETENTION, LOG_RETENTION):
        value = draw(st.sampled_from([None, *VALUES]))
        if value is not None:
            out[prop] = value
        marker = draw(st.sampled_from([None, "same", *VALUES]))
        if marker == "same":
            marker = value
        if marker is not None:
            out[recorded_marker(prop)] = marker
    for key in draw(st.lists(st.sampled_from(["delta.appendOnly", "owner", "a.b"]), max_size=2)):
        out[key] = draw(st.sampled_from(["true", "me"]))
    return out


settings_of_models = st.fixed_dictionaries(
    {},
    optional={
        "maintenance_log_retention_days": st.sampled_from([1, 7, 30, 45.5]),
        "maintenance_vacuum_retention_hours": st.sampled_from([1, 24, 168, 200]),
        "maintenance_vacuum_record_short_retention": st.booleans(),
        "maintenance_vacuum_allow_short_retention": st.just(True),
    },
)
protocol_actions = st.sampled_from(
    [
        {"minReaderVersion": 1, "minWriterVersion": 2},
        {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["appendOnly"]},
        {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["no-such-feature"]},
        {"minReaderVersion": 1, "minWriterVersion": 1},
    ]
)


@settings(max_examples=2000, deadline=None)
@given(configuration=configurations(), model=settings_of_models, protocol=protocol_actions)
def test_stale_retentions_are_found_as_the_old_rule_found_them(
    configuration: dict[str, str], model: dict[str, Any], protocol: dict[str, Any]
) -> None:
    config = parse_config("m", {"materialized": "table", **model})
    assert stale_policy_of(protocol, configuration, "/t", config) == _old_stale_policy_of(
        protocol, configuration, "/t", config
    )


# --- the times in a decision's reasons ---------------------------------------------------------


def _utc_as_before(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


@settings(max_examples=2000)
@given(st.integers(min_value=-(10**12), max_value=10**14))
def test_a_reason_s_time_is_written_as_the_old_rule_wrote_it(ms: int) -> None:
    assert _utc(ms) == _utc_as_before(ms)
