"""S3 connection settings from the usual places, for every client the ops use.

One ``S3Settings`` feeds our own S3 calls (boto3: listing, reads, batched deletes), Parquet
reads and writes (``pyarrow.fs.S3FileSystem``) and the Delta writer (delta-rs
``storage_options``). Settings come from, in order: the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``/``AWS_DEFAULT_REGION``,
``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``), the Spark session's
``spark.hadoop.fs.s3a.*`` settings where an op runs inside one, and boto3's credential chain
(``AWS_PROFILE`` and ``~/.aws``, instance roles). Secrets never appear in ``repr``, logs or
error messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from python_ops import runtime
from python_ops.errors import ConfigError

# Spark (Hadoop S3A) setting -> our field
_SPARK_KEYS = {
    "spark.hadoop.fs.s3a.access.key": "access_key_id",
    "spark.hadoop.fs.s3a.secret.key": "secret_access_key",
    "spark.hadoop.fs.s3a.session.token": "session_token",
    "spark.hadoop.fs.s3a.endpoint": "endpoint_url",
    "spark.hadoop.fs.s3a.endpoint.region": "region",
}
DEFAULT_MAX_ATTEMPTS = 8


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class S3Settings:
    """How to reach S3 (or an S3-compatible store).

    Attributes:
        access_key_id: Access key (never shown).
        secret_access_key: Secret key (never shown).
        session_token: Session token for temporary credentials (never shown).
        region: Region name.
        endpoint_url: Endpoint of an S3-compatible store; None for AWS.
        allow_http: Allow a plain-http endpoint.
        max_attempts: Attempts per request (throttling and 5xx are retried with backoff).
    """

    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    endpoint_url: str | None = None
    allow_http: bool = False
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    @classmethod
    def resolve(cls, *, environ: Mapping[str, str] | None = None, spark: Any = None) -> S3Settings:
        """Settings from the environment, then the Spark session, then boto3's chain.

        Args:
            environ: The environment (default ``os.environ``).
            spark: A Spark session whose ``spark.hadoop.fs.s3a.*`` settings fill gaps.

        Returns:
            The settings; credentials may still be missing (see ``require_credentials``).
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            "access_key_id": env.get("AWS_ACCESS_KEY_ID"),
            "secret_access_key": env.get("AWS_SECRET_ACCESS_KEY"),
            "session_token": env.get("AWS_SESSION_TOKEN"),
            "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
            "endpoint_url": env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"),
        }
        if spark is not None:
            for key, name in _SPARK_KEYS.items():
                if not values[name]:
                    values[name] = _spark_conf(spark, key)
        if not (values["access_key_id"] and values["secret_access_key"]):
            chain = _credential_chain(env.get("AWS_PROFILE"))
            if chain is not None:
                values["access_key_id"], values["secret_access_key"], values["session_token"] = (
                    chain
                )
        endpoint = values["endpoint_url"]
        return cls(
            **values,
            allow_http=_truthy(env.get("AWS_ALLOW_HTTP"))
            or bool(endpoint and endpoint.startswith("http://")),
        )

    def require_credentials(self, location: str) -> None:
        """Refuse to go on without credentials, naming what is missing.

        Raises:
            ConfigError: When the access key or the secret key is missing.
        """
        missing = [
            name
            for name, value in (
                ("AWS_ACCESS_KEY_ID", self.access_key_id),
                ("AWS_SECRET_ACCESS_KEY", self.secret_access_key),
            )
            if not value
        ]
        if missing:
            raise ConfigError(
                setting=" and ".join(missing),
                value="(not set)",
                fix=f"No S3 credentials for {location}: set {' and '.join(missing)} in the "
                "environment, AWS_PROFILE with ~/.aws/credentials, or spark.hadoop.fs.s3a."
                "access.key/secret.key in the Spark session.",
            )

    def boto3_client(self) -> Any:
        """A boto3 S3 client with standard retries (throttling and 5xx, with backoff)."""
        import boto3
        from botocore.config import Config

        config = Config(
            retries={"mode": "standard", "max_attempts": self.max_attempts},
            max_pool_connections=64,
            s3={"addressing_style": "path"} if self.endpoint_url else None,
        )
        # one botocore session per process (``runtime.BOTO3``); sessions are not thread-safe,
        # clients are
        with runtime.BOTO3.lock:
            if runtime.BOTO3.value is None:
                import botocore.session
                from botocore.hooks import HierarchicalEmitter

                from python_ops.storage.s3_pages import iso_timestamp, parse_listing

                events = HierarchicalEmitter()
                # registered before botocore's own handlers (the session adds them next): see
                # s3_pages; botocore's check for errors in 200 responses then sees a tiny body
                events.register_first("before-parse.s3.*", parse_listing)
                core = botocore.session.Session(event_hooks=events)
                parsers = core.get_component("response_parser_factory")
                parsers.set_parser_defaults(timestamp_parser=iso_timestamp)
                runtime.BOTO3.value = boto3.session.Session(botocore_session=core)
            return runtime.BOTO3.value.client(
                "s3",
                aws_access_key_id=self.access_key_id,
                aws_secret_access_key=self.secret_access_key,
                aws_session_token=self.session_token,
                region_name=self.region or "us-east-1",
                endpoint_url=self.endpoint_url,
                config=config,
            )

    def arrow_filesystem(self) -> Any:
        """A ``pyarrow.fs.S3FileSystem`` for Parquet reads and writes."""
        from pyarrow import fs as pafs

        endpoint, scheme = self.endpoint_url, "https"
        if endpoint and "://" in endpoint:
            scheme, endpoint = endpoint.split("://", 1)
        return pafs.S3FileSystem(
            access_key=self.access_key_id,
            secret_key=self.secret_access_key,
            session_token=self.session_token,
            region=self.region or "us-east-1",
            endpoint_override=endpoint,
            scheme=scheme,
            retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=self.max_attempts),
        )

    def delta_storage_options(self) -> dict[str, str]:
        """delta-rs ``storage_options``; commits use S3 conditional writes (put-if-absent)."""
        options = {"AWS_REGION": self.region or "us-east-1", "AWS_MAX_RETRIES": "10"}
        for key, value in (
            ("AWS_ACCESS_KEY_ID", self.access_key_id),
            ("AWS_SECRET_ACCESS_KEY", self.secret_access_key),
            ("AWS_SESSION_TOKEN", self.session_token),
            ("AWS_ENDPOINT_URL", self.endpoint_url),
        ):
            if value:
                options[key] = value
        if self.allow_http:
            options["AWS_ALLOW_HTTP"] = "true"
        return options


def _spark_conf(spark: Any, key: str) -> str | None:
    try:
        value = spark.conf.get(key, None)
    except Exception:  # Spark Connect raises for settings it does not know
        return None
    return str(value) if value else None


def _credential_chain(profile: str | None) -> tuple[str, str, str | None] | None:
    """Credentials from boto3's chain (profile, config files, instance role), if any."""
    try:
        import boto3

        credentials = boto3.session.Session(profile_name=profile).get_credentials()
    except Exception:  # a missing profile is reported as missing credentials
        return None
    if credentials is None:
        return None
    frozen = credentials.get_frozen_credentials()
    return frozen.access_key, frozen.secret_key, frozen.token
