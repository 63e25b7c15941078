"""VACUUM on S3: requests and wall time, ours vs delta-rs, on a local S3 server (moto).

A Delta table with 8 partition directories (one live file each, written by delta-rs) plus
``--objects`` untracked objects spread over the partitions, on moto in its own process. Each
scenario starts a fresh server. Every request, ours and delta-rs's, goes through a counting
proxy (tests/helpers/s3.py), optionally adding ``--latency-ms`` per request: moto on localhost
answers in about a millisecond where S3 takes tens, which hides what parallel listing is for.

Measured, per latency: listing alone, sequential (one prefix at a time) vs parallel (8 threads);
VACUUM dry run (ours, parallel listing) vs delta-rs's dry run; a real VACUUM with batched
``DeleteObjects`` vs one ``DeleteObject`` per key; delta-rs's real vacuum. Results go to
docs/benchmarks.md (S3) and feed docs/scaling.md.

    .venv/bin/python bench/s3_bench.py --objects 100000 --latency-ms 0 50

``--server s3proxy`` runs it against S3Proxy 2.6.0 (a real S3 API server, Java; its
``filesystem-nio2`` backend in a temporary directory) instead: the untracked objects are
uploaded through its API (16 threads), and the results go to the S3-S3PROXY section. delta-rs's
real VACUUM fails there (S3Proxy answers 501 to its ``DeleteObjects``): reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import compile_package, write_section  # noqa: E402

from python_ops.ops.vacuum import vacuum  # noqa: E402
from python_ops.ops.vacuum.sources.listing import list_visible  # noqa: E402
from python_ops.spark_sessions import SailEngine  # noqa: E402
from python_ops.storage.s3 import S3Storage  # noqa: E402
from python_ops.storage.settings import S3Settings  # noqa: E402
from tests.helpers.s3 import FaultyProxy, free_port, new_bucket, s3_environment  # noqa: E402
from tests.helpers.s3proxy import s3proxy_environment, start_s3proxy  # noqa: E402

PARTITIONS = 8
LATER_MS = 31 * 24 * 3_600_000


class OneByOne(S3Storage):
    """Deletes with one ``DeleteObject`` request per key (what batching replaces)."""

    def delete_files(self, rels: list[str]) -> list[str]:
        failed = []
        for rel in rels:
            try:
                self._client.delete_object(Bucket=self.bucket, Key=self._key(rel))
            except Exception:
                failed.append(rel)
        return failed


class Server:
    """moto (bench/s3_server.py) behind a counting proxy with added latency."""

    def __init__(self, latency_ms: float) -> None:
        port = free_port()
        self.moto = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "s3_server.py"), str(port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.moto.stdout is not None
        assert self.moto.stdout.readline().strip() == "ready"
        self.upstream = f"http://127.0.0.1:{port}"
        self.proxy = FaultyProxy(self.upstream, delay_ms=latency_ms).start()
        os.environ.update(s3_environment(self.proxy.endpoint))
        self.bucket = new_bucket(self.upstream)

    def seed(self, prefix: str, count: int) -> None:
        assert self.moto.stdin is not None
        assert self.moto.stdout is not None
        self.moto.stdin.write(f"seed {self.bucket.bucket} {prefix} {count} {PARTITIONS}\n")
        self.moto.stdin.flush()
        assert self.moto.stdout.readline().strip() == "done"

    def requests(self) -> dict[str, int]:
        methods: dict[str, int] = self.proxy.stats()["by_method"]
        return methods

    def stop(self) -> None:
        self.proxy.stop()
        self.moto.terminate()
        self.moto.wait(timeout=10)


class S3ProxyServer(Server):
    """S3Proxy (filesystem backend) behind the counting proxy; objects uploaded through its API."""

    def __init__(self, latency_ms: float) -> None:
        import tempfile

        self.workdir = Path(tempfile.mkdtemp(prefix="s3-bench-s3proxy-"))
        self.moto, self.upstream = start_s3proxy(self.workdir, backend="filesystem-nio2")
        self.proxy = FaultyProxy(self.upstream, delay_ms=latency_ms).start()
        os.environ.update({**s3_environment(self.proxy.endpoint), **s3proxy_environment()})
        self.bucket = new_bucket(self.upstream)

    def seed(self, prefix: str, count: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        names = [f"{prefix}/p={i % PARTITIONS}/part-stray-{i:07d}.parquet" for i in range(count)]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda name: self.bucket.put(name, b"x" * 100), names))

    def stop(self) -> None:
        import shutil

        super().stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def make_table(server: Server, objects: int) -> str:
    import pyarrow as pa
    from deltalake import write_deltalake

    uri = server.bucket.uri("tables/events")
    rows = pa.table({"p": [str(i) for i in range(PARTITIONS)], "v": list(range(PARTITIONS))})
    options = S3Settings.resolve().delta_storage_options()
    write_deltalake(uri, rows, partition_by=["p"], storage_options=options)
    server.seed("tables/events", objects)
    return uri


def measured(server: Server, work: Callable[[], Any]) -> tuple[float, dict[str, int], Any]:
    """(seconds, requests by HTTP method, result) of one piece of work."""
    before = server.requests()
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    after = server.requests()
    return seconds, {k: v - before.get(k, 0) for k, v in after.items()}, result


def scenario(
    latency_ms: float,
    objects: int,
    repeats: int,
    spark: Any,
    *,
    one_by_one: bool,
    on_s3proxy: bool = False,
) -> dict[str, Any]:
    server = S3ProxyServer(latency_ms) if on_s3proxy else Server(latency_ms)
    out: dict[str, Any] = {"latency_ms": latency_ms}
    try:
        uri = make_table(server, objects)
        from deltalake import DeltaTable

        options = S3Settings.resolve().delta_storage_options()
        now = int(time.time() * 1000) + LATER_MS

        def listing(workers: int) -> Callable[[], Any]:
            def run() -> Any:
                storage = S3Storage(uri)
                return list_visible(storage, partition_columns=["p"], max_workers=workers)

            return run

        for name, workers in (("list_sequential", 1), ("list_parallel", 8)):
            runs = [measured(server, listing(workers)) for _ in range(repeats)]
            out[name] = statistics.median(r[0] for r in runs)
            out[name + "_gets"] = runs[0][1].get("GET", 0)
            assert len(runs[0][2].entries) == objects + PARTITIONS

        ours = [
            measured(server, lambda: vacuum(uri, spark=spark, dry_run=True, now_ms=now))
            for _ in range(repeats)
        ]
        assert ours[0][2].files_found == objects
        out["dry_ours"] = statistics.median(r[0] for r in ours)
        out["dry_ours_requests"] = ours[0][1]

        def delta_rs_dry() -> Any:
            table = DeltaTable(uri, storage_options=options)
            return table.vacuum(
                retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True
            )

        theirs = [measured(server, delta_rs_dry) for _ in range(repeats)]
        assert len(theirs[0][2]) == objects
        out["dry_delta_rs"] = statistics.median(r[0] for r in theirs)
        out["dry_delta_rs_requests"] = theirs[0][1]

        batched = S3Storage(uri)
        seconds, requests, result = measured(
            server, lambda: vacuum(batched, spark=spark, dry_run=False, now_ms=now)
        )
        assert result.files_deleted == objects
        out["real_batched"], out["real_batched_requests"] = seconds, requests
        out["delete_objects_calls"] = batched.requests["DeleteObjects"]

        if one_by_one:
            server.seed("tables/events", objects)
            one = OneByOne(uri)
            seconds, requests, result = measured(
                server, lambda: vacuum(one, spark=spark, dry_run=False, now_ms=now)
            )
            assert result.files_deleted == objects
            out["real_one_by_one"], out["real_one_by_one_requests"] = seconds, requests

        server.seed("tables/events", objects)

        def delta_rs_real() -> Any:
            table = DeltaTable(uri, storage_options=options)
            return table.vacuum(
                retention_hours=0, dry_run=False, enforce_retention_duration=False, full=True
            )

        try:
            seconds, requests, deleted = measured(server, delta_rs_real)
        except OSError as err:  # delta-rs's DeleteObjects on S3Proxy: 501 NotImplemented
            if not on_s3proxy:
                raise
            plain = re.sub(r"\x1b\[[0-9;]*m", "", str(err))  # delta-rs's colours
            out["real_delta_rs_error"] = " ".join(plain.split())[-300:]
        else:
            assert len(deleted) == objects
            out["real_delta_rs"], out["real_delta_rs_requests"] = seconds, requests
    finally:
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 50.0])
    parser.add_argument(
        "--results",
        default="/tmp/s3_bench_results.json",
        help="scenario results kept here as they finish; delete it to start over",
    )
    parser.add_argument("--server", choices=["moto", "s3proxy"], default="moto")
    args = parser.parse_args()
    on_s3proxy = args.server == "s3proxy"
    if on_s3proxy and args.results == parser.get_default("results"):
        args.results = "/tmp/s3_bench_s3proxy_results.json"
    compile_package()  # as an installed package is: no recompiling in timed processes
    # each scenario's result is kept as it finishes (a later failure loses nothing)
    partial = Path(args.results)
    done: list[dict[str, Any]] = json.loads(partial.read_text()) if partial.exists() else []
    engine = SailEngine()
    try:
        for i, lat in enumerate(args.latency_ms):
            if any(r["latency_ms"] == lat for r in done):
                continue
            done.append(
                scenario(
                    lat,
                    args.objects,
                    args.repeats,
                    engine.spark,
                    one_by_one=i == 0,
                    on_s3proxy=on_s3proxy,
                )
            )
            partial.write_text(json.dumps(done))
    finally:
        engine.stop()
    results = [r for lat in args.latency_ms for r in done if r["latency_ms"] == lat]
    n = args.objects
    server = "S3Proxy 2.6.0, filesystem backend" if on_s3proxy else "moto, local S3 API"
    lines = [
        f"## VACUUM on S3 ({server})",
        "",
        f"`bench/s3_bench.py{' --server s3proxy' if on_s3proxy else ''} --objects {n} "
        f"--repeats {args.repeats} --latency-ms "
        f"{' '.join(f'{x:g}' for x in args.latency_ms)}`: a Delta table with {PARTITIONS} "
        f"partition directories and {n:,} untracked objects, "
        f"{'S3Proxy' if on_s3proxy else 'moto'} in its own process, every "
        "request through a counting proxy that adds the given latency per request. Requests "
        "are HTTP requests seen by the proxy (GET = LIST and reads, POST = DeleteObjects, "
        "DELETE = DeleteObject). Times are medians of the repeats (real runs: one each).",
        "",
        "| latency | what | seconds | requests | objects / request |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lat = f"{r['latency_ms']:g} ms"

        def row(
            what: str, seconds: float, requests: dict[str, int], per: str, lat: str = lat
        ) -> None:
            shown = ", ".join(f"{k} {v:,}" for k, v in sorted(requests.items()) if v)
            lines.append(f"| {lat} | {what} | {seconds:.2f} | {shown} | {per} |")

        row(
            "listing, sequential (1 prefix at a time)",
            r["list_sequential"],
            {"GET": r["list_sequential_gets"]},
            f"{n / r['list_sequential_gets']:,.0f}",
        )
        row(
            "listing, parallel (8 threads, by partition)",
            r["list_parallel"],
            {"GET": r["list_parallel_gets"]},
            f"{n / r['list_parallel_gets']:,.0f}",
        )
        row("VACUUM dry run, ours", r["dry_ours"], r["dry_ours_requests"], "")
        row("VACUUM dry run, delta-rs", r["dry_delta_rs"], r["dry_delta_rs_requests"], "")
        deletes = r["real_batched_requests"].get("POST", 0)
        row(
            "VACUUM, ours, batched DeleteObjects",
            r["real_batched"],
            r["real_batched_requests"],
            f"{n / max(deletes, 1):,.0f} deleted / DELETE request",
        )
        if "real_one_by_one" in r:
            row(
                "VACUUM, ours, one DeleteObject per key (8 threads)",
                r["real_one_by_one"],
                r["real_one_by_one_requests"],
                "1 deleted / DELETE request",
            )
        if "real_delta_rs" in r:
            row("VACUUM, delta-rs", r["real_delta_rs"], r["real_delta_rs_requests"], "")
        else:
            lines.append(f"| {lat} | VACUUM, delta-rs | failed: {r['real_delta_rs_error']} | | |")
    lines += ["", "Ratios:", ""]
    for r in results:
        batching = (
            f"batched deletes {r['real_one_by_one'] / r['real_batched']:.1f}x faster than "
            "one-by-one; "
            if "real_one_by_one" in r
            else ""
        )
        lines.append(
            f"- latency {r['latency_ms']:g} ms: parallel listing "
            f"{r['list_sequential'] / r['list_parallel']:.1f}x faster than sequential; dry run "
            f"ours / delta-rs {r['dry_ours'] / r['dry_delta_rs']:.2f}x; {batching}real run "
            + (
                f"ours / delta-rs {r['real_batched'] / r['real_delta_rs']:.2f}x."
                if "real_delta_rs" in r
                else "ours only (delta-rs failed)."
            )
        )
    lines.append("")
    marker = "S3-S3PROXY" if on_s3proxy else "S3"
    write_section(marker, lines, source="bench/s3_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
