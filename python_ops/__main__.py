"""``python -m python_ops``: the ops' command line."""

import sys

from python_ops.cli.main import run

sys.exit(run())
