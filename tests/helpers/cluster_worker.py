"""The driver of a local multi-process Spark cluster, running VACUUM on request (see spark_cluster).

Started with the master URL as its argument. Prints one JSON line when the session and both
executors are up, then answers one JSON request per line (``table``, ``kwargs`` of ``vacuum``)
with the result, and the /proc ancestry of every process id in its diagnostics, read while the
executors (and their idle Python workers) are still alive.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict

from python_ops.errors import MaintenanceError
from python_ops.ops.vacuum import vacuum
from tests.helpers.spark_cluster import ancestry

EXECUTORS = 2


def main() -> None:
    from pyspark.sql import SparkSession

    started = time.perf_counter()
    spark = (
        SparkSession.builder.master(sys.argv[1])
        .appName("python_ops-cluster-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # wait for both executors: tasks should have two processes to go to (test-only JVM call)
    deadline = time.monotonic() + 120
    while spark.sparkContext._jsc.sc().getExecutorIds().size() < EXECUTORS:
        if time.monotonic() > deadline:
            raise SystemExit("executors did not register within 120 s")
        time.sleep(0.2)
    ready = {
        "version": spark.version,
        "driver_pid": os.getpid(),
        "master": spark.sparkContext.master,
        "startup_s": time.perf_counter() - started,
    }
    print(json.dumps({"ready": ready}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            began = time.perf_counter()
            result = vacuum(request["table"], spark=spark, **request["kwargs"])
            seconds = time.perf_counter() - began
            d = result.diagnostics
            pids = set(d.listing_pids) | set(d.delete_pids) if d else set()
            reply = {
                "result": result.to_dict(),
                "seconds": seconds,
                "processes": {str(p): [asdict(x) for x in ancestry(p)] for p in sorted(pids)},
            }
        except MaintenanceError as err:
            reply = {"error": type(err).__name__, "message": str(err)}
        print(json.dumps(reply), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
