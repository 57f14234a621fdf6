"""Inline templates of other editions rendered, and no caption published with a hole (issue 27).

The pages are DBpedia's real excerpts of Wikipedia editions (tests/data/minidumps, CC BY-SA).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.config import PipelineConfig
from builder.engines.local import build
from builder.extract.cleaning import clean_caption, render_caption
from builder.extract.inline import CaptionRules, caption_rules, inline_templates, read_inline_table
from builder.extract.wikitext import ExtractStats, extract_images
from builder.lang.languages import language_for
from builder.sources.xml import DumpReader

MINIDUMPS = Path(__file__).parent / "data" / "minidumps"
ALL = PipelineConfig(name="all", caption_rule="none", min_references=1)


def captions(folder: str, rules: CaptionRules | None = None, stats: ExtractStats | None = None) -> list[str]:
    """Every caption the extractor publishes from one excerpt."""
    language = language_for(f"{folder}wiki")
    found = []
    for page in DumpReader(MINIDUMPS / folder / "wiki.xml.bz2", (0,)):
        references = extract_images(page.text, page.title, language=language, stats=stats, rules=rules)
        found += [reference.caption for reference in references]
    return found


def test_the_three_captions_of_the_issue_read_as_on_the_real_berlin_pages() -> None:
    french = captions("fr")
    assert (
        "Évolution de la population berlinoise pendant les dernières 130 années (1880-2010). La croissance "
        "« administrative » de 1920 et la chute spectaculaire de la fin de la guerre." in french
    )
    assert "Cérémonie de fermeture du 84e Congrès mondial d'espéranto, en 1999." in french
    assert "ゲイを表したクマ。ベルリンのゲイエリア、ノレンドルフ広場" in captions("ja")


def test_the_authors_cleaning_left_holes_there() -> None:
    """What the captions were before the table: the templates cut out, the sentence broken."""
    french = captions("fr", CaptionRules(None, False))
    assert "Cérémonie de fermeture du mondial d'espéranto, en 1999." in french
    assert "ゲイを表したクマ。ベルリンのゲイエリア、" in captions("ja", CaptionRules(None, False))


def test_a_caption_with_a_template_no_table_renders_is_dropped_and_counted() -> None:
    """Neapolitan's {{v}} ("d{{v}}a ferruvia") is in no table: its three captions go, counted under its title."""
    stats = ExtractStats()
    published = captions("nap", stats=stats)
    assert not any("Stazziona Centrale d" in caption for caption in published)
    assert stats.captions_with_an_unrendered_template == 3
    assert stats.unrendered_templates == {"V": 3}
    cut = captions("nap", CaptionRules(None, False))
    assert "Stazziona Centrale da ferruvia (Berlin Hauptbahnhof)" in cut  # the hole the rule prevents


def test_english_keeps_the_authors_cleaning_unless_asked() -> None:
    caption = "A plate: {{lang|zh-cn|{{linktext|使}}}} (diplomatic)"
    assert caption_rules("en") == CaptionRules(None, False)
    assert clean_caption(caption) == "A plate: (diplomatic)"
    stats = ExtractStats()
    text = f"[[File:Plate.jpg|thumb|{caption}]]"
    assert extract_images(text, stats=stats)[0].caption == "A plate: (diplomatic)"
    assert stats.captions_with_an_unrendered_template == 0
    dropped = extract_images(text, stats=stats, rules=caption_rules("en", "drop"))
    assert dropped[0].caption == "" and stats.unrendered_templates == {"Linktext": 1}
    assert caption_rules("en", crosslingual=True).whole  # the cross-lingual config holds English to the rule


def test_parser_functions_print_their_text_in_every_language() -> None:
    table = inline_templates("it")
    text = "{{formatnum:4666175}} abitanti, {{uc:abc}} {{lcfirst:Xyz}} {{ucfirst:xyz}}{{#tag:ref|nota}}"
    assert clean_caption(text, table) == "4666175 abitanti, ABC xyz Xyz"
    assert clean_caption("{{FORMATNOMBRE:98659}} {{MINUS:ÉTÉ}}", inline_templates("fr")) == "98659 été"
    rendering = render_caption("a {{#if:x|b}} c", table)
    assert rendering.text == "a c" and rendering.unrendered == ("#if",)


def test_shapes_of_the_shipped_table() -> None:
    french = inline_templates("fr")
    text = "au {{s-|XIX}}, à {{heure|4|30}}, {{unité|10|km}}"
    assert clean_caption(text, french) == "au XIXe siècle, à 4 h 30, 10 km"
    assert clean_caption("{{langue|de|Österreich}} et {{1er|Empire}}", french) == "Österreich et 1er Empire"
    russian = inline_templates("ru")
    text = "{{iw|Институт имени Отто Гана|||Max Planck Institute}}"
    assert clean_caption(text, russian) == "Институт имени Отто Гана"
    assert clean_caption("{{нп5|Новая синагога (Берлин)|Новая синагога|de|Neue Synagoge}}", russian) == "Новая синагога"
    # a title of an edition wins over an English template of the same title: French {{date}} is no English date
    assert clean_caption("le {{date|12|mai|2000}}", french) == "le 12 mai 2000"


def test_every_edition_of_the_parameter_table_has_inline_templates() -> None:
    parameters = json.loads((Path(__file__).parent.parent / "builder/data/template_parameters.json").read_text())
    shipped = read_inline_table(Path(__file__).parent.parent / "builder/data/inline_templates.json")
    assert set(parameters["languages"]) <= set(shipped)
    for code, entries in shipped.items():
        assert code == "en" or entries, code


def test_a_user_table_extends_the_shipped_one(tmp_path: Path) -> None:
    table = tmp_path / "inline.json"
    seen = "Berlino: 'Stazziona Centrale d{{v}}a ferruvia'"
    entry = {"names": ["v"], "shape": "format", "text": "'", "seen": seen}
    table.write_text(json.dumps({"languages": {"nap": [entry]}}))
    rules = caption_rules("nap", user=read_inline_table(table), user_source=str(table))
    stats = ExtractStats()
    assert "Stazziona Centrale d'a ferruvia (Berlin Hauptbahnhof)" in captions("nap", rules, stats)
    assert stats.captions_with_an_unrendered_template == 0
    assert str(table) in rules.describe()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('{"languages": {"fr": [{"names": ["x"]}]}}', r"languages\.fr\[0\] needs a 'shape'"),
        ('{"languages": {"fr": [{"shape": "joined"}]}}', r"languages\.fr\[0\] needs either 'names'"),
        ('{"languages": {"fr": [{"pattern": "(", "shape": "joined"}]}}', r"'pattern' is not a regular expression"),
        ('{"languages": {"fr": [{"names": ["x"], "shape": "format"}]}}', r"a 'format' template needs its 'text'"),
        ('{"fr": []}', r"an inline template table is"),
        ("{", r"cannot read the inline template table"),
    ],
)
def test_a_bad_user_table_is_refused_in_one_line(tmp_path: Path, table: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(table)
    with pytest.raises(ValueError, match=message) as error:
        read_inline_table(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ValueError, match=message):
        build([MINIDUMPS / "nap" / "wiki.xml.bz2"], [ALL], tmp_path / "out", languages="nap", inline_templates=path)


def test_the_funnel_and_the_card_count_the_dropped_captions(tmp_path: Path) -> None:
    output = tmp_path / "out"
    build([MINIDUMPS / "nap" / "wiki.xml.bz2"], [ALL], output, languages="nap", show_progress=False)
    record = json.loads((output / "all" / "funnel.json").read_text(encoding="utf-8"))
    assert record["skipped"]["captions_with_an_unrendered_template"] == 3
    assert record["unrendered_templates"] == {"V": 3}
    assert "a caption holding another template is dropped" in record["caption_cleaning"]["nap"]
    card = (output / "README.md").read_text(encoding="utf-8")
    assert "captions with an unrendered template: 3" in card
    assert "- Caption cleaning: `nap`: the inline templates of builder/data/inline_templates.json" in card
    assert "`V` (3)" in card


def test_a_history_counts_the_dropped_captions_as_extraction_from_scratch() -> None:
    """Revisions that reuse a parsed page (RevisionExtractor) count unrendered templates as parsing each would."""
    from builder.extract.incremental import RevisionExtractor

    rules = caption_rules("fr")
    base = "Texte.\n[[Fichier:A.jpg|vignette|Le {{inconnu|x}} pont]]\n[[Fichier:B.jpg|Le {{nombre|3|ponts}}]]\n"
    history = [base, base.replace("{{inconnu|x}} pont", "pont {{autre}}"), base.replace("{{inconnu|x}}", "vieux")]
    extractor, total = RevisionExtractor(language=language_for("fr"), rules=rules), ExtractStats()
    for text in history:
        extractor.extract(1, text, "Pont", total)
    scratch = ExtractStats()
    for text in history:
        extract_images(text, "Pont", stats=scratch, language=language_for("fr"), rules=rules)
    assert total.unrendered_templates == scratch.unrendered_templates == {"Inconnu": 1, "Autre": 1}
    assert total.captions_with_an_unrendered_template == scratch.captions_with_an_unrendered_template == 2
