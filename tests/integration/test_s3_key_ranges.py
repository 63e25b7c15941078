"""One prefix listed as key ranges in parallel, on a real S3 API (moto server on 127.0.0.1)."""

from __future__ import annotations

import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from python_ops.errors import StorageError
from python_ops.ops.vacuum import vacuum
from python_ops.ops.vacuum.sources.listing import list_visible
from python_ops.storage import key_ranges
from python_ops.storage.key_ranges import key_ranges as ranges_of
from python_ops.storage.s3 import S3Storage
from python_ops.storage.s3_pages import parse_page
from tests.helpers.s3 import S3Bucket
from tests.helpers.s3proxy import ON_BOTH_SERVERS
from tests.helpers.vacuum import selected_files

LATER = 31 * 24 * 3_600_000  # S3 sets LastModified at upload: judge ages from 31 days ahead
NAMES = [f"part-{i:05d}-c000.snappy.parquet" for i in range(1_200)]


class OneRange(S3Storage):
    """The same store listed the old way: one sequential listing per prefix."""

    lists_key_ranges = False


def put_all(s3: S3Bucket, keys: list[str]) -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda key: s3.put(key, b"x"), keys))


@ON_BOTH_SERVERS
@pytest.mark.parametrize(
    "points",
    [
        [NAMES[1_100]],  # the first range spans two pages
        sorted([NAMES[1_100], "part-00600-a", NAMES[1_150]]),  # "part-00600-a" is no key
        ["0", "part-00600-dir", "zz-late.parquet"],  # cut at a sub-prefix's name; last key
    ],
)
def test_key_ranges_list_every_key_once(s3: S3Bucket, points: list[str]) -> None:
    extra = [
        "0-early.parquet",  # before every boundary
        "zz-late.parquet",
        "zzz-after-all.parquet",  # after every boundary
        "part-00600-dir/x.parquet",  # a sub-prefix between boundaries
        "part-00600-dir/y.parquet",
        "m/",  # a directory marker and its file
        "m/z.parquet",
        "_delta_log/00000000000000000000.json",
    ]
    put_all(s3, [f"tables/t/{name}" for name in NAMES + extra])
    storage = S3Storage(s3.uri("tables/t"))
    for recursive in (False, True):
        whole = storage.list_tree("") if recursive else storage.list_dir("")
        sequential = storage.requests["ListObjectsV2"]
        parts = [
            storage.list_range("", start_after=start, last=last, recursive=recursive)
            for start, last in ranges_of(points)
        ]
        requests = storage.requests["ListObjectsV2"] - sequential
        paths = [e.path for part in parts for e in part]
        assert len(paths) == len(set(paths))  # nothing listed twice
        assert sorted(paths) == sorted(e.path for e in whole)
        assert sorted((e.path, e.size_bytes, e.is_dir) for part in parts for e in part) == sorted(
            (e.path, e.size_bytes, e.is_dir) for e in whole
        )
        for point in points:  # a key equal to a boundary ends its range, once
            assert sum(point in [e.path for e in part] for part in parts) == (point in paths)
        assert sequential == 2  # 1,208 keys: two pages in one listing
        assert requests <= sequential + len(points)  # every cut: one request more at most
        storage.requests.clear()
    assert NAMES[1_100] in paths


@ON_BOTH_SERVERS
def test_a_store_that_ignores_start_after_still_lists_every_key_once(s3: S3Bucket) -> None:
    put_all(s3, [f"tables/t/{name}" for name in NAMES[:300]] + ["tables/t/p=1/x"])
    storage = S3Storage(s3.uri("tables/t"), signed_requests=False)  # boto3 lists: its hook below

    def drop_start_after(params: dict[str, object], **_: object) -> None:
        params.pop("StartAfter", None)  # as a store without StartAfter behaves

    storage._client.meta.events.register(
        "before-parameter-build.s3.ListObjectsV2", drop_start_after
    )
    points = [NAMES[100], NAMES[200]]
    for recursive in (False, True):
        whole = storage.list_tree("") if recursive else storage.list_dir("")
        paths = [
            e.path
            for start, last in ranges_of(points)
            for e in storage.list_range("", start_after=start, last=last, recursive=recursive)
        ]
        assert sorted(paths) == sorted(e.path for e in whole)
        assert len(paths) == len(set(paths))


@ON_BOTH_SERVERS
def test_a_bound_outside_the_prefix_is_refused(s3: S3Bucket) -> None:
    storage = S3Storage(s3.uri("tables/t"))
    with pytest.raises(StorageError, match="key range bound 'p=2/a' is not below 'p=1'"):
        storage.list_range("p=1", start_after="p=2/a", recursive=True)


def delta_rs_table(tmp_path: Path, s3: S3Bucket, appends: int) -> tuple[str, list[str]]:
    """An unpartitioned table (one file per append, named by delta-rs) and strays named alike."""
    local = tmp_path / "events"
    for i in range(appends):
        write_deltalake(str(local), pa.table({"id": [i]}), mode="append")
    strays = [f"part-{i % 3:05d}-{uuid.uuid4()}-c000.snappy.parquet" for i in range(60)]
    strays += ["0-early.parquet", "zz-late.parquet"]  # outside the known names' range
    for name in strays:
        (local / name).write_bytes(b"x" * 10)
    uri = s3.upload_tree(local, "tables/events")
    return uri, strays


@ON_BOTH_SERVERS
def test_vacuum_with_key_ranges_selects_and_deletes_the_same(
    tmp_path: Path, s3: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(key_ranges, "MIN_PER_RANGE", 10)  # 40 tracked names: 4 ranges
    uri, strays = delta_rs_table(tmp_path, s3, appends=40)
    now = int(time.time() * 1000) + LATER
    split, one = S3Storage(uri), OneRange(uri)
    with_ranges = vacuum(split, dry_run=True, now_ms=now)
    without = vacuum(one, dry_run=True, now_ms=now)
    assert selected_files(with_ranges) == selected_files(without) == set(strays)
    assert with_ranges.files_listed == without.files_listed == 40 + len(strays)
    # the root (one page) listed as 4 ranges of one page each: 3 requests more, no other change
    assert split.requests["ListObjectsV2"] == one.requests["ListObjectsV2"] + 3
    assert split.requests["GetObject"] == one.requests["GetObject"]

    listing = list_visible(split, partition_columns=[], max_workers=4, split_hints=strays)
    assert sorted(e.path for e in listing.entries) == sorted(
        e.path for e in list_visible(one, partition_columns=[], max_workers=4).entries
    )

    deleted = vacuum(S3Storage(uri), dry_run=False, now_ms=now)
    assert deleted.files_deleted == len(strays)
    left = {key.removeprefix("tables/events/") for key in s3.keys("tables/events/")}
    assert not left & set(strays)
    assert len([k for k in left if not k.startswith("_delta_log/")]) == 40


@ON_BOTH_SERVERS
def test_cluster_listing_hands_key_ranges_to_tasks(
    tmp_path: Path, s3: S3Bucket, monkeypatch: pytest.MonkeyPatch, sail_spark: Any
) -> None:
    """An unpartitioned table's root is cut into key ranges listed in Spark tasks, not by the
    driver: the same selection and deletes as the driver's own listing."""
    monkeypatch.setattr(key_ranges, "MIN_PER_RANGE", 10)  # 40 tracked names: 4 ranges
    uri, strays = delta_rs_table(tmp_path, s3, appends=40)
    now = int(time.time() * 1000) + LATER
    driver, tasks = OneRange(uri), S3Storage(uri)
    scope = {"now_ms": now, "spark": sail_spark, "engine": "spark"}
    on_driver = vacuum(driver, dry_run=True, **scope)
    in_tasks = vacuum(tasks, dry_run=True, cluster_listing=True, **scope)
    assert selected_files(in_tasks) == selected_files(on_driver) == set(strays)
    assert in_tasks.files_listed == on_driver.files_listed == 40 + len(strays)
    assert in_tasks.diagnostics is not None
    assert in_tasks.diagnostics.num_key_ranges_in_tasks == 4
    assert in_tasks.diagnostics.num_listing_tasks == 4
    # the driver's own client listed only the log: the root's pages were the tasks' requests
    assert tasks.requests["ListObjectsV2"] < driver.requests["ListObjectsV2"]

    deleted = vacuum(S3Storage(uri), dry_run=False, cluster_listing=True, **scope)
    assert deleted.files_deleted == len(strays)
    left = {key.removeprefix("tables/events/") for key in s3.keys("tables/events/")}
    assert not left & set(strays)
    assert len([k for k in left if not k.startswith("_delta_log/")]) == 40


# moto only: S3Proxy answers 400 to StartAfter beside a continuation token (boto3 sends both)
@pytest.mark.parametrize(
    "params",
    [
        {"Prefix": "t/", "Delimiter": "/"},
        {"Prefix": "t/"},
        {"Prefix": "t/", "StartAfter": "t/b", "MaxKeys": 2},
        {"Prefix": "t/", "FetchOwner": True},  # Owner: left to botocore's parser
    ],
)
def test_listing_pages_parse_as_botocore_parses_them(
    s3: S3Bucket, params: dict[str, object]
) -> None:
    names = ["a b&c<d.parquet", "b.parquet", "\u00fc \u20ac.parquet", "p=1/x", "m/", "z%2F.parquet"]
    put_all(s3, [f"t/{name}" for name in names])
    ours = S3Storage(s3.uri("t"))._client  # with parse_listing registered
    page = ours.list_objects_v2(Bucket=s3.bucket, **params)
    plain = s3.client.list_objects_v2(Bucket=s3.bucket, **params)  # botocore's parser
    page.pop("ResponseMetadata")
    plain.pop("ResponseMetadata")
    assert page == plain
    assert page["KeyCount"] >= 2
    if page.get("IsTruncated"):
        token = page["NextContinuationToken"]
        rest = ours.list_objects_v2(Bucket=s3.bucket, ContinuationToken=token, **params)
        plain = s3.client.list_objects_v2(Bucket=s3.bucket, ContinuationToken=token, **params)
        rest.pop("ResponseMetadata")
        plain.pop("ResponseMetadata")
        assert rest == plain


# moto only: an unsigned request (S3Proxy checks every signature)
def test_a_listing_page_is_parsed_without_botocore(s3: S3Bucket) -> None:
    put_all(s3, ["t/a b&c<d.parquet", "t/p=1/x"])
    url = f"{s3.endpoint}/{s3.bucket}?list-type=2&prefix=t/&delimiter=/&encoding-type=url"
    with urllib.request.urlopen(url, timeout=10) as response:
        parsed = parse_page(response.read())
    assert parsed is not None
    assert [c["Key"] for c in parsed["Contents"]] == ["t/a%20b%26c%3Cd.parquet"]
    assert parsed["CommonPrefixes"] == [{"Prefix": "t/p%3D1/"}]
    assert parsed["IsTruncated"] is False
    assert parse_page(b"<Error><Code>SlowDown</Code></Error>") is None
