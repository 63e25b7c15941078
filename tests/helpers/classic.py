"""Classic (JVM) Spark in a test process that also uses Spark Connect."""

from __future__ import annotations

import os


def classic_env() -> dict[str, str]:
    """This process's environment minus the switches PySpark sets once Connect is used."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")
    }
