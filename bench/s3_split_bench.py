"""One unpartitioned S3 prefix listed as key ranges in parallel vs one sequential listing.

An unpartitioned Delta table of ``--objects`` data files directly under its root prefix, named
as Spark names them (``bench/s3_server.py`` ``seed_flat``); its log (one commit, written here)
tracks 90% of them, the rest are untracked. The server is moto with an indexed ListObjectsV2
(see bench/s3_server.py: moto's own sorts the bucket on every request); every request goes
through the counting proxy of tests/helpers/s3.py, which adds ``--latency-ms`` per request.

Measured, per latency (medians of ``--repeats``): the listing VACUUM makes (``list_visible``),
without hints (one sequential paginated listing of the prefix) and with the log's protected
paths as hints (up to 8 key ranges in parallel); requests seen by the proxy for both; and one
VACUUM dry run each way. Results go to docs/benchmarks.md (S3-SPLIT).

    .venv/bin/python bench/s3_split_bench.py --objects 200000 --latency-ms 0 50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import compile_package, write_section  # noqa: E402
from s3_bench import Server, measured  # noqa: E402
from s3_server import flat_names  # noqa: E402

from python_ops.delta.state.file_paths import read_file_paths  # noqa: E402
from python_ops.ops.vacuum import vacuum  # noqa: E402
from python_ops.ops.vacuum.sources.listing import list_visible  # noqa: E402
from python_ops.storage.s3 import S3Storage  # noqa: E402

SEED = 14
KEY = "tables/flat"
LATER_MS = 31 * 24 * 3_600_000


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class OneRange(S3Storage):
    """The same store listed as before: one sequential listing per prefix."""

    lists_key_ranges = False


def make_table(server: Server, objects: int) -> tuple[str, int]:
    """Seed the objects, write a log tracking 90% of them; (table URI, untracked count)."""
    assert server.moto.stdin is not None
    assert server.moto.stdout is not None
    server.moto.stdin.write(f"seed_flat {server.bucket.bucket} {KEY} {objects} {SEED}\n")
    server.moto.stdin.flush()
    assert server.moto.stdout.readline().strip() == "done"
    now = int(time.time() * 1000)
    field = {"name": "v", "type": "long", "nullable": True, "metadata": {}}
    schema = {"type": "struct", "fields": [field]}
    actions: list[dict[str, Any]] = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": str(uuid.uuid4()),
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": now,
            }
        },
    ]
    names = flat_names(objects, SEED)
    tracked = [name for i, name in enumerate(names) if i % 10]
    actions += [
        {
            "add": {
                "path": name,
                "partitionValues": {},
                "size": 10,
                "modificationTime": now,
                "dataChange": True,
            }
        }
        for name in tracked
    ]
    body = "\n".join(json.dumps(a) for a in actions).encode()
    log_key = f"{KEY}/_delta_log/{0:020d}.json"
    server.bucket.client.put_object(Bucket=server.bucket.bucket, Key=log_key, Body=body)
    return server.bucket.uri(KEY), objects - len(tracked)


def scenario(latency_ms: float, objects: int, repeats: int) -> dict[str, Any]:
    server = Server(latency_ms)
    out: dict[str, Any] = {"latency_ms": latency_ms, "load_before": os.getloadavg()[0]}
    try:
        uri, untracked = make_table(server, objects)
        now = int(time.time() * 1000) + LATER_MS
        started = time.perf_counter()
        hints = read_file_paths(S3Storage(uri)).protected(now)
        out["hints_s"], out["hints"] = time.perf_counter() - started, len(hints)

        def listing(split: bool) -> Any:
            storage = S3Storage(uri)
            hinted = hints if split else None
            return list_visible(storage, partition_columns=[], max_workers=8, split_hints=hinted)

        paths: dict[str, set[str]] = {}
        assert server.proxy._process is not None
        pids = {"server": server.moto.pid, "proxy": server.proxy._process.pid}
        for name, split in (("sequential", False), ("ranges", True)):
            before = {who: cpu_seconds(pid) for who, pid in pids.items()}
            before["client"] = time.process_time()
            runs = [measured(server, lambda split=split: listing(split)) for _ in range(repeats)]
            after = {who: cpu_seconds(pid) for who, pid in pids.items()}
            after["client"] = time.process_time()
            out[name + "_cpu"] = {who: (after[who] - before[who]) / repeats for who in after}
            out[name] = statistics.median(r[0] for r in runs)
            out[name + "_runs"] = [r[0] for r in runs]
            out[name + "_gets"] = runs[0][1].get("GET", 0)
            paths[name] = {e.path for e in runs[0][2].entries}
            assert len(paths[name]) == objects, len(paths[name])
        assert paths["sequential"] == paths["ranges"]

        for name, storage_type in (("dry_sequential", OneRange), ("dry_ranges", S3Storage)):
            storage = storage_type(uri)
            seconds, requests, result = measured(
                server, lambda storage=storage: vacuum(storage, dry_run=True, now_ms=now)
            )
            assert result.files_found == untracked, result.files_found
            out[name], out[name + "_requests"] = seconds, requests
        out["load_after"] = os.getloadavg()[0]
    finally:
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 50.0])
    parser.add_argument(
        "--results",
        default="/tmp/s3_split_bench_results.json",
        help="scenario results kept here as they finish; delete it to start over",
    )
    parser.add_argument("--no-report", action="store_true", help="print, leave docs alone")
    args = parser.parse_args()
    compile_package()  # as an installed package is: no recompiling in timed processes
    partial = Path(args.results)
    done: list[dict[str, Any]] = json.loads(partial.read_text()) if partial.exists() else []
    for lat in args.latency_ms:
        if not any(r["latency_ms"] == lat for r in done):
            done.append(scenario(lat, args.objects, args.repeats))
            partial.write_text(json.dumps(done))
    results = [r for lat in args.latency_ms for r in done if r["latency_ms"] == lat]
    n = args.objects
    lines = [
        "## One unpartitioned S3 prefix: key ranges in parallel vs one sequential listing",
        "",
        f"`bench/s3_split_bench.py --objects {n} --repeats {args.repeats} --latency-ms "
        f"{' '.join(f'{x:g}' for x in args.latency_ms)}`: an unpartitioned Delta table, "
        f"{n:,} data files directly under its root prefix (Spark's names: part number, random "
        "UUID), 90% of them in its log. moto in its own process with an indexed ListObjectsV2 "
        "whose XML is written directly (bench/s3_server.py: moto's own sorts the whole bucket "
        "and renders through a generic serializer, about 1 s of server CPU per page at this "
        "size, which would measure moto), every request through the counting proxy adding the "
        "given latency. "
        "Listing = `list_visible` as VACUUM calls it, without hints (one paginated listing, "
        "1,000 keys per request, one after another) and with the log's protected paths as "
        "hints (the prefix cut into up to 8 key ranges at their quantiles, listed on 8 "
        "threads). Times: medians of the repeats (all runs in brackets); VACUUM dry runs: one "
        "each. Requests: HTTP requests seen by the proxy (GET = ListObjectsV2 and reads).",
        "",
        "| latency | what | seconds | requests | load (1 min) |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lat = f"{r['latency_ms']:g} ms"
        load = f"{r['load_before']:.1f} / {r['load_after']:.1f}"
        listings = (("sequential", "listing, one sequential"), ("ranges", "listing, ranges"))
        for name, what in listings:
            runs = ", ".join(f"{x:.2f}" for x in r[name + "_runs"])
            lines.append(
                f"| {lat} | {what} | {r[name]:.2f} ({runs}) | GET {r[name + '_gets']:,} | {load} |"
            )
        for name, what in (
            ("dry_sequential", "VACUUM dry run, one sequential listing"),
            ("dry_ranges", "VACUUM dry run, ranges (as shipped)"),
        ):
            shown = ", ".join(f"{k} {v:,}" for k, v in sorted(r[name + "_requests"].items()) if v)
            lines.append(f"| {lat} | {what} | {r[name]:.2f} | {shown} | {load} |")
    lines += ["", "Ratios:", ""]
    for r in results:
        cpu = {
            name: ", ".join(f"{who} {sec:.1f} s" for who, sec in r[name + "_cpu"].items())
            for name in ("sequential", "ranges")
        }
        lines.append(
            f"- latency {r['latency_ms']:g} ms: listing, one sequential / ranges = "
            f"{r['sequential'] / r['ranges']:.1f}x (GET {r['sequential_gets']:,} vs "
            f"{r['ranges_gets']:,}); VACUUM dry run, one sequential / ranges = "
            f"{r['dry_sequential'] / r['dry_ranges']:.1f}x. CPU per listing: sequential "
            f"{cpu['sequential']}; ranges {cpu['ranges']}. Reading the log and computing "
            f"the hints ({r['hints']:,} paths) took {r['hints_s']:.2f} s (part of every "
            "VACUUM anyway)."
        )
    extra = ", ".join(sorted({str(r["ranges_gets"] - r["sequential_gets"]) for r in results}))
    lines += [
        "",
        "Load: 1-minute load average before / after each latency's runs, on 2 cores shared "
        "with other processes. Requests: the ranges cost at most one request more per cut (a "
        "range stops at the page that crosses its end; that page's later keys are dropped): "
        f"{extra} more for 7 cuts here. Reading: at 0 ms the listing is bound by CPU (the "
        "client parses 1,000-key pages holding one GIL, about 15-20 ms a page; the server; "
        "other processes) and ranges gain little; with latency the ranges overlap the waiting"
        " until the same CPU bounds them again, so the gain depends on the machine's load: "
        "earlier runs of this benchmark at a load of 3-4 (another benchmark on the same 2 "
        "cores) measured 2.0x and 2.6x at 50 ms (both before botocore's 200-error check"
        " stopped parsing each page a second time). Against S3, where the server's CPU is "
        "not on this machine, only the client's remains."
        "",
    ]
    if not args.no_report:
        write_section("S3-SPLIT", lines, source="bench/s3_split_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
