"""The Common Crawl–shaped crawl of benchmarks/web_scale.py: Table 4.1's shape, read by the toolkit as written."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.web_scale import pool_size, write_cc_crawl
from builder.config import WEB
from builder.engines.local import build


def test_the_pool_gives_the_reuse_asked_for() -> None:
    """The Zipf pool's expected distinct images are the references over the reuse (bisection to 0.1%)."""
    import numpy as np

    for references, reuse in ((48_000, 8.0), (3_000, 11.0)):
        size = pool_size(references, reuse)
        weights = 1.0 / np.arange(1, size + 1)
        distinct = (1.0 - (1.0 - weights / weights.sum()) ** references).sum()
        assert abs(distinct - references / reuse) <= references / reuse * 0.002


def test_the_crawl_has_table_4_1_s_shape_and_the_build_reads_all_of_it(
    tmp_path: Path, perceptron_available: None
) -> None:
    held = write_cc_crawl(tmp_path / "crawl", 150, seed=0, per_page=24.1, reuse=8.0, page_kb=10.0, per_file=50)
    files = sorted(str(path) for path in (tmp_path / "crawl").glob("*.warc.gz"))
    assert len(files) == 3 and held["pages"] == 150
    assert 20 <= held["references"] / held["pages"] <= 28 and 6.5 <= held["reuse"] <= 9.5
    build(files, [WEB], tmp_path / "out", tagger="perceptron", workers=2, show_progress=False)
    record = json.loads((tmp_path / "out" / "web" / "funnel.json").read_text(encoding="utf-8"))
    crawl = record["crawl"]
    assert crawl["html_pages"] == 150 and crawl["warc_files"] == 3 and crawl["warc_files_failed"] == 0
    assert crawl["references"] == held["captioned"]  # every figure caption and alt text the generator wrote
    assert record["funnel"][-1]["pairs"] > 0
