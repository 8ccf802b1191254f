"""The Spark examples of docs/api.md (fenced ```python spark```) run with the Spark
tests' session as ``spark``; the page's other examples run in tests/binlog/test_api.py."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "api.md"
EXAMPLES = re.findall(r"```python spark\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_page_has_spark_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_spark_example_runs(spark, index, monkeypatch):
    monkeypatch.chdir(REPO)           # the examples name samples/ relative to the root
    exec(compile(EXAMPLES[index], f"{PAGE}:spark example {index + 1}", "exec"),
         {"__name__": "__example__", "spark": spark})
