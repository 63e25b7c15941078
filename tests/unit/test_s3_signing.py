"""Our Signature Version 4 for S3 requests against botocore's own signer (the reference)."""

from __future__ import annotations

import datetime

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from python_ops.storage.s3_http import EMPTY_SHA256, SignedRequests, sign
from python_ops.storage.settings import S3Settings

KEYS = [
    "tables/t/_delta_log/00000000000000000002.json",
    "tables/t/p=a b/part-0.parquet",
    "tables/t/p=100%/x+y,z;w~v.parquet",
    "tables/t/\u00fc \u20ac/\u2603.parquet",
    "",
]
LISTINGS = [
    {"list-type": "2", "prefix": "tables/t/_delta_log/"},
    {"list-type": "2", "prefix": "tables/t/p=a b/", "delimiter": "/", "start-after": "x=1/y"},
    {"list-type": "2", "prefix": "t/", "continuation-token": "1a+b/c==", "max-keys": "2"},
]


def _botocore_headers(
    reads: SignedRequests, path: str, query: dict[str, str], settings: S3Settings
) -> dict[str, str]:
    scheme = "https" if reads.https else "http"
    request = AWSRequest(
        method="GET",
        url=f"{scheme}://{reads.host}{path}",
        params=query,
        headers={"X-Amz-Content-SHA256": EMPTY_SHA256},
    )
    credentials = Credentials(
        settings.access_key_id, settings.secret_access_key, settings.session_token
    )
    S3SigV4Auth(credentials, "s3", reads.region).add_auth(request)
    return dict(request.headers.items())


@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEJr//session+token=="])
@pytest.mark.parametrize(
    ("endpoint", "bucket", "region"),
    [
        ("http://127.0.0.1:9000", "bucket", None),
        (None, "my-bucket", "eu-west-1"),
        (None, "dotted.bucket.name", "us-east-2"),
    ],
)
def test_signatures_match_botocore(
    endpoint: str | None, bucket: str, region: str | None, token: str | None
) -> None:
    settings = S3Settings(
        access_key_id="AKIDEXAMPLE",
        secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        session_token=token,
        region=region,
        endpoint_url=endpoint,
    )
    reads = SignedRequests(settings, bucket, count=lambda _: None)
    requests = [(key, {}) for key in KEYS] + [("", q) for q in LISTINGS]
    for key, query in requests:
        path = f"{reads._base}/{key}"
        from urllib.parse import quote

        theirs = _botocore_headers(reads, quote(path, safe="/-_.~"), query, settings)
        now = datetime.datetime.strptime(theirs["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
            tzinfo=datetime.UTC
        )
        ours = sign(
            method="GET",
            host=reads.host,
            path=path,
            query=query,
            settings=settings,
            region=reads.region,
            now=now,
        )
        assert ours["authorization"] == theirs["Authorization"], (key, query)
        if token:
            assert ours["x-amz-security-token"] == theirs["X-Amz-Security-Token"]


def test_addressing_follows_the_endpoint() -> None:
    keys = S3Settings(access_key_id="a", secret_access_key="b")
    on_aws = SignedRequests(keys, "my-bucket", count=lambda _: None)
    assert (on_aws.https, on_aws.host, on_aws._base) == (
        True,
        "my-bucket.s3.us-east-1.amazonaws.com",
        "",
    )
    local = S3Settings(access_key_id="a", secret_access_key="b", endpoint_url="http://h:9/s3")
    compatible = SignedRequests(local, "b", count=lambda _: None)
    assert (compatible.https, compatible.host, compatible._base) == (False, "h:9", "/s3/b")


@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEJr//session+token=="])
@pytest.mark.parametrize(
    ("method", "path", "query", "body", "content_type"),
    [
        (  # DeleteObjects
            "POST",
            "/",
            {"delete": ""},
            b"<Delete><Quiet>true</Quiet><Object><Key>a &amp; b</Key></Object></Delete>",
            "application/xml",
        ),
        ("PUT", "/t/_delta_log/_last_vacuum_info", {}, b'{"a":1}\n', None),  # PutObject
    ],
)
def test_a_request_with_its_body_is_signed_as_botocore_signs_it(
    token: str | None,
    method: str,
    path: str,
    query: dict[str, str],
    body: bytes,
    content_type: str | None,
) -> None:
    import base64
    import hashlib

    settings = S3Settings(
        access_key_id="AKIDEXAMPLE",
        secret_access_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        session_token=token,
        region="eu-west-1",
    )
    signer = SignedRequests(settings, "my-bucket", count=lambda _: None)
    digest = hashlib.sha256(body).hexdigest()
    md5 = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()
    extra = {"content-md5": md5}
    headers = {"X-Amz-Content-SHA256": digest, "Content-MD5": md5}
    if content_type is not None:
        extra["content-type"] = headers["Content-Type"] = content_type
    request = AWSRequest(
        method=method, url=f"https://{signer.host}{path}", params=query, data=body, headers=headers
    )
    credentials = Credentials(
        settings.access_key_id, settings.secret_access_key, settings.session_token
    )
    S3SigV4Auth(credentials, "s3", signer.region).add_auth(request)
    now = datetime.datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.UTC
    )
    ours = sign(
        method=method,
        host=signer.host,
        path=path,
        query=query,
        settings=settings,
        region=signer.region,
        now=now,
        payload_sha256=digest,
        extra=extra,
    )
    assert ours["authorization"] == request.headers["Authorization"]
