"""moto's S3 server for the benchmarks, with a fast way to create many objects.

``python bench/s3_server.py <port>`` serves the S3 API on 127.0.0.1:<port> and reads commands
on stdin: ``seed <bucket> <prefix> <count> <partitions>`` creates ``count`` small objects
``<prefix>/p=<i % partitions>/part-stray-<i>.parquet`` directly in moto's store (creating 100k
objects through HTTP would take minutes and measure nothing of interest), then prints ``done``.
All measured requests still go through HTTP.
"""

from __future__ import annotations

import logging
import sys


def main() -> None:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=int(sys.argv[1]), verbose=False)
    server.start()
    print("ready", flush=True)
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    for line in sys.stdin:
        command, bucket, prefix, count, partitions = line.split()
        if command == "seed":
            for i in range(int(count)):
                key = f"{prefix}/p={i % int(partitions)}/part-stray-{i:07d}.parquet"
                backend.put_object(bucket, key, b"0123456789")
        print("done", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
