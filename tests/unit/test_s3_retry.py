"""The retry policy of the signed S3 client: the AWS SDKs' standard mode."""

from __future__ import annotations

import pytest

from python_ops.storage.s3_retry import (
    RetryPolicy,
    attempts_from_environment,
    error_code,
    full_jitter,
    transient,
)


def test_full_jitter_draws_up_to_an_exponential_cap_of_20_s() -> None:
    assert [full_jitter(n, rand=lambda: 1.0) for n in (1, 2, 3, 5, 6, 9)] == [
        1.0,
        2.0,
        4.0,
        16.0,
        20.0,
        20.0,
    ]
    assert full_jitter(4, rand=lambda: 0.0) == 0.0  # full jitter: from zero
    assert full_jitter(3, rand=lambda: 0.25) == 1.0


@pytest.mark.parametrize(
    ("status", "code", "retried"),
    [
        (503, "SlowDown", True),
        (500, "InternalError", True),
        (502, "", True),
        (504, "", True),
        (400, "RequestTimeout", True),  # a transient code whatever the status
        (400, "Throttling", True),
        (429, "TooManyRequestsException", True),
        (403, "AccessDenied", False),
        (404, "NoSuchKey", False),
        (301, "PermanentRedirect", False),
        (400, "InvalidArgument", False),
        (501, "NotImplemented", False),
    ],
)
def test_what_is_retried(status: int, code: str, retried: bool) -> None:
    assert transient(status, code) is retried


def test_error_codes_are_read_from_the_body() -> None:
    body = b'<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>x</Message></Error>'
    assert error_code(body) == "SlowDown"
    assert error_code(b"") == ""
    assert error_code(b"<html>busy</html>") == ""


def test_attempts_come_from_aws_max_attempts() -> None:
    assert attempts_from_environment({}) == 3
    assert attempts_from_environment({"AWS_MAX_ATTEMPTS": "5"}) == 5
    assert attempts_from_environment({"AWS_MAX_ATTEMPTS": "0"}) == 3
    assert attempts_from_environment({"AWS_MAX_ATTEMPTS": "many"}) == 3
    assert RetryPolicy.standard({"AWS_MAX_ATTEMPTS": "1"}).max_attempts == 1


def test_the_wait_asks_the_backoff_for_the_retry_number() -> None:
    slept: list[float] = []
    policy = RetryPolicy(backoff=lambda n: n / 10, sleep=slept.append)
    policy.wait(1)
    policy.wait(2)
    assert slept == [0.1, 0.2]
