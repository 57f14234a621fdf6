"""The Spark engine's reading of a WARC source (builder/engines/spark/web.py), run in this process on a real WARC
file (tests/data/web/aut-example.warc.gz, see tests/data/web/README.md): its chunks hold every reference row in
order, and its per-source counts are the counts of those rows."""

from __future__ import annotations

import pickle
from collections import Counter
from pathlib import Path

import pytest

from builder.engines.spark import web as sparkweb
from builder.extract.web import web_task
from builder.extract.webrefs import PixelInspector, WebBuildTask
from builder.filters.images import normalize_url

WARC = Path(__file__).parent / "data" / "web" / "aut-example.warc.gz"


def _task(folder: Path) -> WebBuildTask:
    return WebBuildTask(0, web_task(str(WARC), folder, normalize=normalize_url, inspect=PixelInspector(8, None)), "en")


def test_chunks_and_counts_are_the_references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = [item for kind, item in sparkweb.web_partition([_task(tmp_path / "a")]) if kind == "reference"]
    rows = [row for _, row in plain]
    assert len(rows) > 7  # the file has references enough to fill several chunks of 3
    monkeypatch.setattr(sparkweb, "REFERENCE_CHUNK", 3)
    items = list(sparkweb.warc_partition([_task(tmp_path / "b")]))
    chunks = [pickle.loads(item[1]) for kind, item in items if kind == "references"]  # noqa: S301 - our own
    assert [len(chunk) for chunk in chunks] == [3] * (len(rows) // 3) + ([len(rows) % 3] if len(rows) % 3 else [])
    assert [row for chunk in chunks for row in chunk] == rows
    kinds = Counter(kind for kind, _ in items)
    assert kinds["stats"] == kinds["captures"] == kinds["referenced"] == 1 and "reference" not in kinds
    captures = dict(next(item[1] for kind, item in items if kind == "captures"))
    referenced = dict(next(item[1] for kind, item in items if kind == "referenced"))
    assert captures == Counter((row["page"], row["page_id"]) for row in rows)
    assert referenced == Counter(row["image"] for row in rows)
