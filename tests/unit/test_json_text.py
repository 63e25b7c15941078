"""``json_text.loads``: ``json.loads``' values and errors over generated text, valid or not."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.log.json_text import loads, loads_bytes

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
SPACE = st.text(alphabet=" \t\r\n", max_size=3)
NOISE = st.text(alphabet=' {}[]",:0123456789.eE+-tfnrul\\\ufeff\x00é', max_size=20)


def _dumped(value: Any, indent: int | None, ascii_only: bool) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only)


def _outcome(parse: Any, text: Any) -> tuple[str, Any]:
    try:
        return "value", parse(text)
    except json.JSONDecodeError as err:
        return "error", (err.msg, err.pos, err.lineno, err.colno)
    except UnicodeDecodeError as err:
        return "unicode", (err.encoding, err.start, err.reason)


def _same(a: Any, b: Any) -> bool:
    """Equal values, a NaN (``NaN`` in the text) equal to itself."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=400, deadline=None)
@given(
    value=VALUES,
    indent=st.sampled_from([None, 0, 2]),
    ascii_only=st.booleans(),
    before=SPACE,
    after=SPACE,
    extra=NOISE,
    cut=st.integers(0, 200),
    shape=st.sampled_from(["whole", "cut", "extra", "noise"]),
)
def test_loads_is_json_loads_on_any_text(
    value: Any,
    indent: int | None,
    ascii_only: bool,
    before: str,
    after: str,
    extra: str,
    cut: int,
    shape: str,
) -> None:
    text = before + _dumped(value, indent, ascii_only) + after
    if shape == "cut":  # truncated anywhere: an error where json.loads finds it
        text = text[: cut % (len(text) + 1)]
    elif shape == "extra":
        text += extra
    elif shape == "noise":
        text = extra
    expected, got = _outcome(json.loads, text), _outcome(loads, text)
    assert expected[0] == got[0]
    assert _same(expected[1], got[1]) if expected[0] == "value" else expected == got
    data = text.encode("utf-8", "surrogatepass")
    for encoded in (data, text.encode("utf-16", "surrogatepass"), b"\xef\xbb\xbf" + data):
        expected, got = _outcome(json.loads, encoded), _outcome(loads_bytes, encoded)
        assert expected[0] == got[0]
        assert _same(expected[1], got[1]) if expected[0] == "value" else expected == got


@pytest.mark.parametrize(
    "text", ["\ufeff{}", "", " ", "NaN", "-Infinity", '{"a": 1} x', "[1,]", '"\\ud800"', "1 2"]
)
def test_edge_texts_as_json_loads(text: str) -> None:
    expected, got = _outcome(json.loads, text), _outcome(loads, text)
    assert expected[0] == got[0]
    assert _same(expected[1], got[1]) if expected[0] == "value" else expected == got


@settings(max_examples=200, deadline=None)
@given(
    parameters=st.dictionaries(
        st.text(max_size=5), VALUES | st.builds(object) | st.datetimes(), max_size=5
    )
)
def test_history_parameters_are_json_dumps_sorted_with_text_for_the_rest(
    parameters: dict[str, Any],
) -> None:
    from python_ops.maintenance.records.history import parameters_json

    assert parameters_json(parameters) == json.dumps(parameters, sort_keys=True, default=str)
