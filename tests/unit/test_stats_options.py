"""The statistics op's options: one frozen value, checked once (issue 67, the VACUUM shape)."""

from __future__ import annotations

import dataclasses

import pytest

from python_ops.errors import ConfigError
from python_ops.ops.stats.options import StatsOptions, stats_options


def test_the_options_are_one_frozen_value() -> None:
    options = stats_options(columns=["a", "b"], dry_run=True, set_stats_columns=False)
    assert options == StatsOptions(("a", "b"), True, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.dry_run = False  # type: ignore[misc]


@pytest.mark.parametrize(("columns", "shown"), [("user_id", "'user_id'"), (["a", ""], "['a', '']")])
def test_columns_that_are_not_a_list_of_names_are_refused_by_name(
    columns: object, shown: str
) -> None:
    # a bare string would be watched letter by letter: 'u', 's', 'e', ...
    with pytest.raises(ConfigError, match=r"setting 'columns' has bad value") as caught:
        stats_options(columns=columns, dry_run=False, set_stats_columns=True)  # type: ignore[arg-type]
    assert shown in str(caught.value)
