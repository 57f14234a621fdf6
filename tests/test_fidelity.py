"""The deviations table is the same in docs/pipeline.md and in every generated dataset card."""

from __future__ import annotations

from pathlib import Path

from builder.config import GOLD
from builder.engines.local import build
from builder.publish.card import SAMPLE_DUMP
from builder.publish.fidelity import DEVIATIONS, markdown_table

ROOT = Path(__file__).resolve().parents[1]


def test_the_pipeline_page_shows_the_deviations_table() -> None:
    assert markdown_table() in (ROOT / "docs" / "pipeline.md").read_text(encoding="utf-8")


def test_every_deviation_names_a_reason() -> None:
    for deviation in DEVIATIONS:
        assert all((deviation.step, deviation.authors, deviation.ours, deviation.why)), deviation


def test_the_generated_card_carries_the_table(tmp_path: Path, perceptron_available: None) -> None:
    report = build([SAMPLE_DUMP], [GOLD], tmp_path / "out", tagger="perceptron", show_progress=False)
    card = (report.output / "README.md").read_text(encoding="utf-8")
    assert "## Fidelity" in card
    assert markdown_table() in card
