"""S3 response timestamps: the fast ISO 8601 path gives botocore's instants."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.utils import parse_timestamp

from python_ops.storage.s3_pages import iso_timestamp


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-23T15:32:40.000Z",  # a listing's LastModified
        "2026-11-23T15:32:40Z",
        "2026-11-23T15:32:40.123456+02:00",
        "Wed, 12 Oct 2009 17:50:00 GMT",  # a Last-Modified header
        1_700_000_000,
    ],
)
def test_same_instant_as_botocore(value: Any) -> None:
    parsed = iso_timestamp(value)
    assert parsed.tzinfo is not None
    assert parsed == parse_timestamp(value)
    assert parsed.timestamp() == parse_timestamp(value).timestamp()
