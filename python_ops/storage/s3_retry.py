"""When and how long the signed S3 client waits before it sends a request again.

The AWS SDKs' *standard* retry mode (botocore's ``retries={"mode": "standard"}``, the same in
the Java and Rust SDKs): at most 3 attempts per request by default (``AWS_MAX_ATTEMPTS``
changes it), a retry after an attempt that failed for a transient reason, and before retry *n*
a wait drawn uniformly from ``[0, min(20 s, 2 ** (n - 1) s)]`` ("exponential backoff with full
jitter": 0-1 s, then 0-2 s). Transient reasons: a failed or broken connection (refused, reset,
a body cut short), HTTP 500, 502, 503 or 504, and the throttling and timeout error codes the
SDKs name (``SlowDown``, ``Throttling``, ``RequestTimeout`` ...) whatever their status.
Anything else (403, 404, a redirect, a body the client cannot read) is answered at once.

The wait and the sleep are collaborators of ``RetryPolicy``: tests pass a zero backoff and a
recording sleep, and assert how many attempts the store saw, not how long they took.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

DEFAULT_ATTEMPTS = 3
MAX_BACKOFF_S = 20.0
RETRYABLE_STATUS = frozenset({500, 502, 503, 504})
# botocore's standard mode: its throttling codes and transient error codes
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
TRANSIENT_CODES = frozenset(
    {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete", "InternalError"}
)
_CODE = re.compile(rb"<Code>([^<]{1,100})</Code>")


def full_jitter(retry: int, *, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number ``retry`` (1 for the first), as the AWS SDKs wait.

    Args:
        retry: Which retry this is (1: after the first attempt failed).
        rand: A uniform draw from [0, 1).

    Returns:
        A uniform draw from ``[0, min(20, 2 ** (retry - 1))]`` seconds.
    """
    return rand() * min(MAX_BACKOFF_S, 2.0 ** (retry - 1))


def error_code(body: bytes) -> str:
    """The ``<Code>`` of an S3 error body ("" when it has none)."""
    found = _CODE.search(body[:4096]) if body else None
    return found.group(1).decode("utf-8", "replace") if found else ""


def transient(status: int, code: str) -> bool:
    """Whether an answer is worth another attempt (a 5xx the SDKs retry, throttling, timeout)."""
    return status in RETRYABLE_STATUS or code in THROTTLING_CODES or code in TRANSIENT_CODES


def attempts_from_environment(environ: Mapping[str, str] | None = None) -> int:
    """``AWS_MAX_ATTEMPTS`` (the SDKs' setting) when it is a positive integer, else 3."""
    value = (os.environ if environ is None else environ).get("AWS_MAX_ATTEMPTS", "")
    return int(value) if value.strip().isdigit() and int(value) > 0 else DEFAULT_ATTEMPTS


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a request gets, and the wait before each retry.

    Attributes:
        max_attempts: Attempts per request, the first included (1: no retry).
        backoff: Seconds to wait before retry ``n`` (1 for the first retry).
        sleep: Waits that many seconds.
    """

    max_attempts: int = DEFAULT_ATTEMPTS
    backoff: Callable[[int], float] = field(default=full_jitter, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    @classmethod
    def standard(cls, environ: Mapping[str, str] | None = None) -> RetryPolicy:
        """The SDKs' standard mode, with ``AWS_MAX_ATTEMPTS`` from the environment."""
        return cls(max_attempts=attempts_from_environment(environ))

    def wait(self, retry: int) -> None:
        """Wait before retry number ``retry`` (1 for the first)."""
        self.sleep(self.backoff(retry))
