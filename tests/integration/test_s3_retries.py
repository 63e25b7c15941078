"""The signed S3 client under faults, against S3Proxy (a real S3 server) behind the fault proxy.

The retry policy's backoff is zero and its sleep records the waits asked for: every count here
is of requests the proxy saw (its log), never of time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from python_ops.errors import StorageError
from python_ops.storage.s3 import S3Storage
from python_ops.storage.s3_http import SignedRequests, Unanswered
from python_ops.storage.s3_retry import RetryPolicy
from tests.helpers.s3 import S3Bucket
from tests.helpers.s3_faults import FaultProxy
from tests.helpers.s3proxy import ON_S3PROXY

pytestmark = ON_S3PROXY


class Waits:
    """A retry policy's sleep that records the waits (the backoff says retry number n)."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def policy(self, attempts: int = 3) -> RetryPolicy:
        return RetryPolicy(max_attempts=attempts, backoff=float, sleep=self.asked.append)


@pytest.fixture
def proxy(s3: S3Bucket, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    with FaultProxy(s3.endpoint) as running:
        monkeypatch.setenv("AWS_ENDPOINT_URL", running.endpoint)
        yield running


def storage(s3: S3Bucket, waits: Waits, attempts: int = 3) -> S3Storage:
    return S3Storage(s3.uri("t"), retry=waits.policy(attempts))


OPS: dict[str, Any] = {
    "GetObject": lambda st: st.read_bytes("p=0/a.parquet") == b"a",
    "ListObjectsV2": lambda st: sorted(e.path for e in st.list_tree()) == sorted(FILES),
    "PutObject": lambda st: st.replace_file("_delta_log/x", b"x") is None,
    "DeleteObjects": lambda st: st.delete_files(["p=1/b.parquet"]) == [],
}
FILES = ["p=0/a.parquet", "p=1/b.parquet"]


@pytest.mark.parametrize("fault", ["slowdown", "internal", "reset"])
@pytest.mark.parametrize("op", list(OPS))
def test_a_transient_fault_is_retried_until_the_third_attempt(
    s3: S3Bucket, proxy: FaultProxy, op: str, fault: str
) -> None:
    for rel in FILES:
        s3.put(f"t/{rel}", rel[4].encode())
    waits = Waits()
    st = storage(s3, waits)
    proxy.faults({"op": op, "fault": fault, "times": 2})
    assert OPS[op](st)
    assert proxy.count(op) == 3  # two faulted attempts, the third answered
    assert proxy.count(op, fault=fault) == 2
    assert waits.asked == [1.0, 2.0]  # backoff asked for retry 1, then retry 2
    assert st._boto3 is None  # no other client repeated anything
    assert {e["client"] for e in proxy.log()} == {"signed"}
    if op == "DeleteObjects":
        assert "t/p=1/b.parquet" not in s3.keys("t/")  # reset: the store deleted, the answer lost


@pytest.mark.parametrize("fault", ["slowdown", "internal", "reset"])
def test_a_lasting_fault_stops_after_three_attempts_naming_the_request(
    s3: S3Bucket, proxy: FaultProxy, fault: str
) -> None:
    for rel in FILES:
        s3.put(f"t/{rel}")
    waits = Waits()
    st = storage(s3, waits)
    proxy.faults({"fault": fault, "times": -1})
    with pytest.raises(StorageError, match=r"cannot read s3://.*/t/p=0/a.parquet: .*3 attempts"):
        st.read_bytes("p=0/a.parquet")
    with pytest.raises(StorageError, match=r"cannot list s3://.*/t/.*3 attempts"):
        st.list_tree()
    assert st.delete_files(FILES) == FILES  # reported as not deleted
    assert [e["op"] for e in proxy.log()] == ["GetObject"] * 3 + ["ListObjectsV2"] * 3 + [
        "DeleteObjects"
    ] * 3
    assert waits.asked == [1.0, 2.0] * 3
    assert st._boto3 is None  # boto3 would only have repeated the same attempts
    if fault != "reset":  # a reset one was forwarded: the store deleted them
        assert s3.keys("t/") == {f"t/{rel}" for rel in FILES}


def test_aws_max_attempts_sets_the_attempts(
    s3: S3Bucket, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3.put("t/p=0/a.parquet", b"a")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "5")
    st = S3Storage(s3.uri("t"))
    assert st.retry.max_attempts == 5
    proxy.faults({"op": "GetObject", "fault": "slowdown", "times": 4})
    st = S3Storage(s3.uri("t"), retry=RetryPolicy(max_attempts=5, backoff=float, sleep=abs))
    assert st.read_bytes("p=0/a.parquet") == b"a"
    assert proxy.count("GetObject") == 5


def test_a_partial_delete_reports_the_keys_the_store_did_not_delete(
    s3: S3Bucket, proxy: FaultProxy
) -> None:
    rels = [f"p=0/part-{i}.parquet" for i in range(6)]
    for rel in rels:
        s3.put(f"t/{rel}")
    waits = Waits()
    st = storage(s3, waits)
    proxy.faults({"op": "DeleteObjects", "fault": "partial", "code": "AccessDenied"})
    assert st.delete_files(rels) == rels[::2]  # keys 0, 2, 4 listed under <Error>
    assert s3.keys("t/") == {f"t/{rel}" for rel in rels[::2]}
    assert proxy.count("DeleteObjects") == 1  # AccessDenied is final: not asked again
    assert waits.asked == []


def test_keys_a_delete_failed_for_a_transient_reason_are_asked_again(
    s3: S3Bucket, proxy: FaultProxy
) -> None:
    rels = [f"p=0/part-{i}.parquet" for i in range(6)]
    for rel in rels:
        s3.put(f"t/{rel}")
    waits = Waits()
    st = storage(s3, waits)
    proxy.faults({"op": "DeleteObjects", "fault": "partial", "code": "SlowDown", "times": 2})
    assert st.delete_files(rels) == []
    assert s3.keys("t/") == set()
    deletes = [e for e in proxy.log() if e["op"] == "DeleteObjects"]
    assert [e["fault"] for e in deletes] == ["partial", "partial", ""]
    assert waits.asked == [1.0, 2.0]


def test_refused_keys_stay_reported_when_a_later_attempt_fails_whole(
    s3: S3Bucket, proxy: FaultProxy
) -> None:
    rels = [f"p=0/part-{i}.parquet" for i in range(4)]
    for rel in rels:
        s3.put(f"t/{rel}")
    st = storage(s3, Waits())
    # key 0: AccessDenied (final), key 2: SlowDown (asked again), keys 1 and 3: deleted; the
    # request asking for key 2 again then fails whole (503 on each of its three attempts)
    proxy.faults(
        {"op": "DeleteObjects", "fault": "partial", "codes": ["AccessDenied", "SlowDown"]},
        {"op": "DeleteObjects", "fault": "slowdown", "skip": 1, "times": -1},
    )
    assert st.delete_files(rels) == [rels[0], rels[2]]
    assert s3.keys("t/") == {f"t/{rels[0]}", f"t/{rels[2]}"}
    assert proxy.count("DeleteObjects") == 1 + 3  # the partial answer, then three 503s


def test_a_refusal_that_is_no_fault_goes_to_boto3(s3: S3Bucket, proxy: FaultProxy) -> None:
    s3.put("t/p=0/a.parquet", b"a")
    st = storage(s3, Waits())
    proxy.faults({"op": "GetObject", "client": "signed", "fault": "forbidden", "times": -1})
    assert st.read_bytes("p=0/a.parquet") == b"a"
    assert [(e["client"], e.get("status")) for e in proxy.log()] == [
        ("signed", 403),
        ("boto3", 200),
    ]
    assert st._signed is None  # boto3 takes the later requests


def test_unanswered_says_it_was_retried(s3: S3Bucket, proxy: FaultProxy) -> None:
    s3.put("t/a")
    counted: list[str] = []
    waits = Waits()
    reads = SignedRequests(
        S3Storage(s3.uri("t")).settings, s3.bucket, count=counted.append, retry=waits.policy(2)
    )
    proxy.faults({"fault": "internal", "times": -1})
    with pytest.raises(Unanswered, match=r"GetObject: HTTP 500 InternalError \(2 attempts\)") as e:
        reads.get_object("t/a")
    assert e.value.retried
    assert counted == ["GetObject"] * 2
