"""A measurement worker process's entry point: `python -m dlc.autotune.worker READ_FD WRITE_FD`.

Started by `autotune.measure.WorkerPool` as a fresh interpreter (not a fork of the tuner, and
without re-importing the tuner's main module); it answers requests on the two pipe descriptors
until the first is closed.
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection


def main(argv: list[str]) -> int:
    from dlc.autotune.measure import serve

    read_fd, write_fd = int(argv[1]), int(argv[2])
    serve(Connection(read_fd, writable=False), Connection(write_fd, readable=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
