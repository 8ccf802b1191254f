"""The Parquet writer thread of ingest's tasks (``spark_ingest.background``): writes run
in the order given, and the first failure is raised in the task, the writes after it
dropped."""
from __future__ import annotations

import threading

import pytest

from spark_ingest.background import Background


def test_writes_run_in_order_in_another_thread():
    done, threads = [], set()

    def write(i):
        threads.add(threading.get_ident())
        done.append(i)
    background = Background()
    for i in range(50):
        background.submit(write, i)
    background.close()
    assert done == list(range(50))
    assert threads and threading.get_ident() not in threads


def test_a_failed_write_is_raised_and_the_rest_dropped():
    done = []
    background = Background(depth=1)
    background.submit(done.append, 1)
    background.submit(lambda: 1 / 0)
    background.submit(done.append, 2)
    with pytest.raises(ZeroDivisionError):
        for _ in range(100):            # raised by a later call once the thread got there
            background.submit(done.append, 3)
        background.close()
    background.close()                  # raised once
    assert done == [1]
