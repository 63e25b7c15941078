"""VACUUM LITE on S3: a 1,000,000-file table with 1,000 expired tombstones, whole processes.

The table's log references ``--files`` data files (a checkpoint at version 1 holding every
``add``; version 1's JSON commit cleaned away, as log cleanup leaves a big table), and version 2
removes ``--removed`` of them, 40 days ago. ``_delta_log/_last_vacuum_info`` says the previous
VACUUM handled everything up to version 1, so LITE reads version 2 only. Only the removed files
exist as objects (LITE never lists the data prefixes, so the other 999,000 need not exist; a
listing would find them missing and the counts below would show it). The data objects are
created directly in moto's store (``bench/s3_server.py seed``); the log is uploaded to moto
directly too; every request the measured processes make goes through the counting proxy
(``tests/helpers/s3.py``), which counts LIST requests by prefix.

Measured, each a fresh process timed from outside (interpreter start, imports, the op), ours and
delta-rs alternating, python_ops byte-compiled first as an installed package is
(``report.compile_package``):

- ``python -m python_ops vacuum s3://... --mode lite --dry-run`` and delta-rs's
  ``vacuum(full=False, dry_run=True)`` (its default mode), ``--repeats`` times;
- ``--real-repeats`` real runs each (default 3), each on its own copy of the table (delta-rs commits
  its VACUUM to the log), ours and delta-rs alternating.

LIST requests are reported by prefix: the ``_delta_log/`` prefix (reading the snapshot lists the
log) and everything else (data prefixes: must be none for LITE). Results go to
docs/benchmarks.md between the S3-LITE markers.

``--server s3proxy`` runs the same against S3Proxy (a real S3 API server, Java; its
``filesystem-nio2`` backend in a temporary directory) instead of moto: the removed files are
uploaded through its API (16 threads), and the results go between the S3-LITE-S3PROXY markers.

    .venv/bin/python bench/s3_lite_bench.py --files 1000000 --removed 1000 --repeats 5
    .venv/bin/python bench/s3_lite_bench.py --server s3proxy --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import compile_package, write_section  # noqa: E402

from tests.helpers.s3 import FaultyProxy, free_port, new_bucket, s3_environment  # noqa: E402
from tests.helpers.s3proxy import s3proxy_environment, start_s3proxy  # noqa: E402

PARTITIONS = 8
DAY_MS = 86_400_000
PER_COMMIT_JSON = 100_000  # adds per line batch while writing version 1 (removed after)

DELTA_RS = """
import json, os, sys
from deltalake import DeltaTable
options = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
options.pop("AWS_EC2_METADATA_DISABLED", None)
files = DeltaTable(sys.argv[1], storage_options=options).vacuum(
    retention_hours=0, dry_run=sys.argv[2] == "dry", enforce_retention_duration=False, full=False
)
print(json.dumps({"files_found": len(files)}))
"""


def removed_name(i: int) -> str:
    """The data file of the ``i``-th removed file: the name ``s3_server.py seed`` creates."""
    return f"p={i % PARTITIONS}/part-stray-{i:07d}.parquet"


def live_name(i: int) -> str:
    return f"p={i % PARTITIONS}/part-{i:07d}.parquet"


def build_log(log: Path, files: int, removed: int) -> None:
    """Write the table's ``_delta_log`` locally (see the module docstring); delta-rs checkpoints."""
    from deltalake import DeltaTable

    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "p", "type": "integer", "nullable": True, "metadata": {}},
        ],
    }
    old = int((time.time() - 40 * 86400) * 1000)
    create = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "lite-bench",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": ["p"],
                "configuration": {},
                "createdTime": old,
            }
        },
        {"commitInfo": {"timestamp": old, "operation": "CREATE TABLE"}},
    ]
    (log / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in create) + "\n")
    with open(log / f"{1:020d}.json", "w") as out:
        for i in range(files):
            name = removed_name(i) if i < removed else live_name(i)
            add = {
                "path": name,
                "partitionValues": {"p": str(i % PARTITIONS)},
                "size": 10,
                "modificationTime": old,
                "dataChange": True,
            }
            out.write(json.dumps({"add": add}) + "\n")
        out.write(json.dumps({"commitInfo": {"timestamp": old, "operation": "WRITE"}}) + "\n")
    DeltaTable(str(log.parent)).create_checkpoint()
    (log / f"{1:020d}.json").unlink()  # cleaned: the checkpoint stands for it
    removes = [
        {
            "remove": {
                "path": removed_name(i),
                "deletionTimestamp": old + 1,
                "dataChange": True,
                "size": 10,
                "partitionValues": {"p": str(i % PARTITIONS)},
            }
        }
        for i in range(removed)
    ]
    removes.append({"commitInfo": {"timestamp": old + 1, "operation": "DELETE"}})
    (log / f"{2:020d}.json").write_text("\n".join(json.dumps(a) for a in removes) + "\n")
    # the previous VACUUM handled everything up to version 1: LITE continues at version 2
    info = {"latestCommitVersionOutsideOfRetentionWindow": 1}
    (log / "_last_vacuum_info").write_text(json.dumps(info) + "\n")


class Server:
    """moto (bench/s3_server.py) behind the counting proxy, the environment pointing at it."""

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
        self.env = {**os.environ, **s3_environment(self.proxy.endpoint)}
        self.bucket = new_bucket(self.upstream)  # uploads go to moto directly: not counted

    def upload_table(self, log: Path, key: str, removed: int) -> str:
        for path in sorted(log.iterdir()):
            if path.is_file() and not path.name.endswith(".crc"):
                self.bucket.client.put_object(
                    Bucket=self.bucket.bucket,
                    Key=f"{key}/_delta_log/{path.name}",
                    Body=path.read_bytes(),
                )
        assert self.moto.stdin is not None
        assert self.moto.stdout is not None
        self.moto.stdin.write(f"seed {self.bucket.bucket} {key} {removed} {PARTITIONS}\n")
        self.moto.stdin.flush()
        assert self.moto.stdout.readline().strip() == "done"
        return self.bucket.uri(key)

    def stats(self) -> dict[str, Any]:
        return self.proxy.stats()

    def stop(self) -> None:
        self.proxy.stop()
        self.moto.terminate()
        self.moto.wait(timeout=10)


class S3ProxyServer(Server):
    """S3Proxy (filesystem backend) behind the counting proxy; objects uploaded through its API."""

    def __init__(self, latency_ms: float, workdir: Path) -> None:
        self.moto, self.upstream = start_s3proxy(workdir, backend="filesystem-nio2")
        self.proxy = FaultyProxy(self.upstream, delay_ms=latency_ms).start()
        os.environ.update(s3proxy_environment())  # boto3's uploads here: no CRC32 headers
        self.env = {**os.environ, **s3_environment(self.proxy.endpoint), **s3proxy_environment()}
        self.bucket = new_bucket(self.upstream)  # uploads go to S3Proxy directly: not counted

    def upload_table(self, log: Path, key: str, removed: int) -> str:
        from concurrent.futures import ThreadPoolExecutor

        for path in sorted(log.iterdir()):
            if path.is_file() and not path.name.endswith(".crc"):
                self.bucket.put(f"{key}/_delta_log/{path.name}", path.read_bytes())
        with ThreadPoolExecutor(16) as pool:
            names = [f"{key}/{removed_name(i)}" for i in range(removed)]
            list(pool.map(lambda name: self.bucket.put(name, b"x" * 100), names))
        return self.bucket.uri(key)


def _ours(uri: str, mode: str) -> list[str]:
    argv = [sys.executable, "-m", "python_ops", "vacuum", uri, "--mode", "lite"]
    argv += ["--retention-hours", "0", "--allow-short-retention", "--json"]
    return argv + (["--dry-run"] if mode == "dry" else [])


def _theirs(uri: str, mode: str) -> list[str]:
    return [sys.executable, "-c", DELTA_RS, uri, mode]


def measure(server: Server, argv: list[str], table_key: str) -> dict[str, Any]:
    """One whole process: wall, CPU, peak RSS (``wait4``), files found, requests, LISTs."""
    before = server.stats()
    with tempfile.TemporaryFile(mode="w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=err, cwd=ROOT, text=True, env=server.env
        )
        out = proc.stdout.read() if proc.stdout else ""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[:6]} exited {proc.returncode}: {err.read()[-2000:]}")
    after = server.stats()
    payload = json.loads(out.strip().splitlines()[-1])
    log_prefix = f"{server.bucket.bucket}/{table_key}/_delta_log/"

    def new(kind: str) -> dict[str, int]:
        return {
            k: v - before[kind].get(k, 0)
            for k, v in after[kind].items()
            if v - before[kind].get(k, 0)
        }

    lists = new("lists")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "files": payload["files_found"],
        "log_lists": sum(v for k, v in lists.items() if k.startswith(log_prefix)),
        "data_lists": sum(v for k, v in lists.items() if not k.startswith(log_prefix)),
        "data_list_prefixes": sorted(k for k in lists if not k.startswith(log_prefix)),
        "requests": new("by_method"),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="lite-bench-", dir=ROOT / "bench"))
    try:
        if args.server == "s3proxy":
            (work / "s3proxy").mkdir()
            server: Server = S3ProxyServer(args.latency_ms, work / "s3proxy")
        else:
            server = Server(args.latency_ms)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    try:
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"import s3_lite_bench as b; from pathlib import Path; "
                f"b.build_log(Path({str(work / 't' / '_delta_log')!r}), {args.files}, "
                f"{args.removed})",
            ],
            cwd=ROOT / "bench",
            check=True,
        )
        checkpoint = next((work / "t" / "_delta_log").glob("*.checkpoint.parquet"))
        checkpoint_mb = checkpoint.stat().st_size / 1e6
        built = time.perf_counter() - started
        tools = {"ours": _ours, "delta-rs": _theirs}
        # one copy per real run (a real run deletes), each tool alternating with the other
        keys = {"shared": "tables/lite"} | {
            f"{name}-{i}": f"tables/lite-{name}-{i}"
            for i in range(args.real_repeats)
            for name in tools
        }
        uris = {
            name: server.upload_table(work / "t" / "_delta_log", key, args.removed)
            for name, key in keys.items()
        }
        dry: dict[str, list[dict[str, Any]]] = {name: [] for name in tools}
        for _ in range(args.repeats):
            for name, argv in tools.items():
                dry[name].append(measure(server, argv(uris["shared"], "dry"), keys["shared"]))
        real: dict[str, list[dict[str, Any]]] = {name: [] for name in tools}
        failures: dict[str, str] = {}
        for i in range(args.real_repeats):
            for name, argv in tools.items():
                copy = f"{name}-{i}"
                try:
                    real[name].append(measure(server, argv(uris[copy], "real"), keys[copy]))
                except RuntimeError as err:  # delta-rs's DeleteObjects on S3Proxy: 501
                    if name == "ours":
                        raise
                    plain = re.sub(r"\x1b\[[0-9;]*m", "", str(err))  # delta-rs's colours
                    failures[name] = " ".join(plain.split())[-400:]
        left = {
            name: max(
                len(
                    [
                        k
                        for k in server.bucket.keys(keys[f"{name}-{i}"] + "/")
                        if "/_delta_log/" not in k
                    ]
                )
                for i in range(args.real_repeats)
            )
            for name in tools
        }
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return {
        "server": args.server,
        "files": args.files,
        "removed": args.removed,
        "latency_ms": args.latency_ms,
        "checkpoint_mb": checkpoint_mb,
        "built_s": built,
        "dry": dry,
        "real": real,
        "objects_left": left,
        "failures": failures,
    }


def write_report(r: dict[str, Any], repeats: int) -> list[str]:
    def med(rows: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(row[key] for row in rows))

    o, d = r["dry"]["ours"], r["dry"]["delta-rs"]
    on_s3proxy = r["server"] == "s3proxy"
    server = (
        "S3Proxy 2.6.0 (filesystem-nio2 backend; tests/helpers/s3proxy.py)"
        if on_s3proxy
        else "moto (bench/s3_server.py)"
    )
    lines = [
        "## VACUUM LITE on S3"
        + (" (S3Proxy)" if on_s3proxy else "")
        + ": 1,000,000-file table, 1,000 expired tombstones (whole processes)",
        "",
        f"`bench/s3_lite_bench.py{' --server s3proxy' if on_s3proxy else ''} --files "
        f"{r['files']} --removed {r['removed']} --repeats "
        f"{repeats} --latency-ms {r['latency_ms']:g}`: the log references {r['files']:,} data "
        "files (a checkpoint at version 1, its JSON commit cleaned away; "
        f"{r['checkpoint_mb']:.1f} MB) and version 2 removes {r['removed']:,} of them, 40 days "
        "ago; `_delta_log/_last_vacuum_info` says the last VACUUM handled version 1. Only the "
        f"{r['removed']:,} removed files exist as objects (LITE never lists the data prefixes). "
        f"{server} behind the counting proxy (tests/helpers/s3.py), which "
        f"adds {r['latency_ms']:g} ms per request and counts LIST requests by prefix. Each run "
        "is a fresh process timed from outside (interpreter start, imports, the op), ours and "
        "delta-rs alternating; dry runs: medians of the repeats (all runs in brackets); real "
        f"runs: medians of {len(r['real']['ours'])} each (all in brackets), each on its own "
        "copy of the table. Ours: `python -m python_ops vacuum "
        "s3://... --mode lite --retention-hours 0 --allow-short-retention --json`; delta-rs: "
        "`vacuum(full=False)`, its default (LITE-like) mode.",
        "",
        "| run | files selected | wall s | CPU s | peak RSS MB | LIST `_delta_log/` | "
        "LIST data prefixes | requests |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]

    def row(what: str, rows: list[dict[str, Any]]) -> None:
        walls = ", ".join(f"{x['wall']:.2f}" for x in rows)
        wall = f"{med(rows, 'wall'):.2f}" + (f" ({walls})" if len(rows) > 1 else "")
        requests = ", ".join(f"{k} {v:,}" for k, v in sorted(rows[0]["requests"].items()))
        lines.append(
            f"| {what} | {rows[0]['files']:,} | {wall} | {med(rows, 'cpu'):.2f} | "
            f"{med(rows, 'peak_mb'):.0f} | {rows[0]['log_lists']} | {rows[0]['data_lists']} | "
            f"{requests} |"
        )

    row("ours, LITE dry run", o)
    row("delta-rs, vacuum(full=False) dry run", d)
    ro, rd = r["real"]["ours"], r["real"]["delta-rs"]
    row("ours, LITE real run", ro)
    if rd:
        row("delta-rs, vacuum(full=False) real run", rd)
    else:
        lines.append("| delta-rs, vacuum(full=False) real run | failed (below) | | | | | | |")
    data_prefixes = sorted({p for x in [*d, *rd] for p in x["data_list_prefixes"]})
    real_ratio = f"{med(ro, 'wall') / med(rd, 'wall'):.2f}x" if rd else "(delta-rs failed)"
    lines += [
        "",
        f"Ours / delta-rs, dry run: wall {med(o, 'wall') / med(d, 'wall'):.2f}x, CPU "
        f"{med(o, 'cpu') / med(d, 'cpu'):.2f}x, peak RSS "
        f"{med(o, 'peak_mb') / med(d, 'peak_mb'):.2f}x. "
        f"Real run: wall {real_ratio}. "
        f"Data objects left after a real run (most of any copy): ours "
        f"{r['objects_left']['ours']}, delta-rs {r['objects_left']['delta-rs']} (of "
        f"{r['removed']:,}). Target: ours whole process <= 1 s and no LIST of a data prefix: dry "
        f"run {'met' if med(o, 'wall') <= 1 else 'not met'} ({med(o, 'wall'):.2f} s), real run "
        f"{'met' if med(ro, 'wall') <= 1 else 'not met'} ({med(ro, 'wall'):.2f} s); "
        f"{sum(x['data_lists'] for x in [*o, *ro])} data-prefix LISTs over the {len(o)} dry "
        f"runs and {len(ro)} real runs. "
        + (
            f"delta-rs's LISTs outside the log: {', '.join(data_prefixes)}."
            if data_prefixes
            else "delta-rs listed no data prefix either."
        ),
        f"1-minute load average before / after: {r['load'][0]:.1f} / {r['load'][1]:.1f} (2 cores).",
        "",
    ]
    for name, error in r.get("failures", {}).items():
        lines += [f"{name}'s real run failed on this server: `{error}`", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--removed", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--real-repeats", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument(
        "--server", choices=["moto", "s3proxy"], default="moto", help="the S3 server"
    )
    args = parser.parse_args()
    compile_package()
    load = [os.getloadavg()[0]]
    result = run(args)
    load.append(os.getloadavg()[0])
    result["load"] = load
    print(json.dumps(result, indent=1, default=str))
    lines = write_report(result, args.repeats)
    marker = "S3-LITE-S3PROXY" if args.server == "s3proxy" else "S3-LITE"
    write_section(marker, lines, source="bench/s3_lite_bench.py")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
