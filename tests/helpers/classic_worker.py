"""A worker process that runs VACUUM on a classic local JVM Spark session.

PySpark switches its column functions to Spark Connect for the whole process once a Connect
session exists, so classic Spark cannot share the test process with the embedded engine. The
tests talk to this worker over stdin/stdout: one JSON request per line, one JSON result per line.
"""

from __future__ import annotations

import json
import sys

from python_ops.errors import MaintenanceError
from python_ops.ops.vacuum import vacuum
from python_ops.spark_sessions import classic_session


def main() -> None:
    spark = classic_session("python_ops-classic-tests")
    spark.sparkContext.setLogLevel("ERROR")
    print(json.dumps({"ready": spark.version}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            result = vacuum(request["table"], spark=spark, **request["kwargs"])
            reply = {"result": result.to_dict()}
        except MaintenanceError as err:
            reply = {"error": type(err).__name__, "message": str(err)}
        print(json.dumps(reply), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
