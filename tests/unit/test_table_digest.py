"""The tests' table digest: equal exactly when two tables hold the same rows, in any order."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.table_digest import table_digest

SCHEMA = pa.schema(
    [
        ("i", pa.int64()),
        ("f", pa.float64()),
        ("s", pa.string()),
        ("d", pa.decimal128(9, 2)),
        ("b", pa.binary()),
        ("l", pa.list_(pa.int32())),
        ("t", pa.timestamp("us", tz="UTC")),
        ("k", pa.dictionary(pa.int8(), pa.string())),
    ]
)
# small pools, so that two generated tables often hold the same rows; the texts hold every
# character the digest escapes or joins with
TEXTS = ["", "a", "\x1f", "\\u", "\\", "\n", "\\n", "\x00", "\\0", "a\x1fb", "null", "ü☃"]
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "i": st.sampled_from([0, 1, -1, 2**62]),
    "f": st.sampled_from([0.0, -0.0, 0.1, 1e16, float("inf")]),
    "s": st.sampled_from(TEXTS),
    "d": st.sampled_from([Decimal("0.00"), Decimal("1.50"), Decimal("-1.05")]),
    "b": st.sampled_from([b"", b"\x00", b"\x1f", b"ab"]),
    "l": st.sampled_from([[], [1], [1, 2], [None]]),
    "t": st.sampled_from(
        [dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(1970, 1, 1, tzinfo=dt.UTC)]
    ),
    "k": st.sampled_from(TEXTS[:4]),
}
ROW = st.fixed_dictionaries({name: st.none() | values for name, values in VALUES.items()})
ROWS = st.lists(ROW, max_size=8)


def _table(rows: list[dict[str, Any]], chunks: int = 1) -> pa.Table:
    parts = [rows[n::chunks] for n in range(chunks)]
    return pa.concat_tables(pa.Table.from_pylist(p, schema=SCHEMA) for p in parts)


def _multiset(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(repr(sorted(r.items())) for r in rows)


@settings(max_examples=150, deadline=None)
@given(ROWS, ROWS)
def test_equal_digests_are_equal_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    same = _multiset(a) == _multiset(b)
    assert (table_digest(_table(a)) == table_digest(_table(b))) is same


@settings(max_examples=100, deadline=None)
@given(ROWS, st.randoms(use_true_random=False), st.integers(1, 3))
def test_order_chunks_and_column_order_do_not_matter(
    rows: list[dict[str, Any]], random: Any, chunks: int
) -> None:
    shuffled = list(rows)
    random.shuffle(shuffled)
    moved = _table(shuffled, chunks)
    moved = moved.select(list(reversed(moved.column_names)))
    assert table_digest(moved) == table_digest(_table(rows))
    assert table_digest(moved)[0] == len(rows)


def test_a_null_is_not_a_value_that_reads_like_one() -> None:
    null = pa.table({"s": pa.array([None], pa.string())})
    for text in ("\x00", "null", "None", ""):
        assert table_digest(null) != table_digest(pa.table({"s": [text]}))


def test_a_value_holding_the_separator_does_not_move_a_column_boundary() -> None:
    def two(x: str, y: str) -> pa.Table:
        return pa.table({"x": [x], "y": [y]})

    assert table_digest(two("a\x1f", "b")) != table_digest(two("a", "\x1fb"))
    assert table_digest(two("a\\", "u")) != table_digest(two("a", "\\u"))
    rows = pa.table({"x": ["a\nb", "c"]})
    assert table_digest(rows) != table_digest(pa.table({"x": ["a", "b\nc"]}))


def test_bytes_that_read_as_another_values_repr_are_not_that_value() -> None:
    utf8 = pa.table({"b": pa.array([b"b'ab'", b"b'\\xff'"], pa.binary())})
    not_utf8 = pa.table({"b": pa.array([b"ab", b"\xff"], pa.binary())})
    assert table_digest(utf8) != table_digest(not_utf8)
