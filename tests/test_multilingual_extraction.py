"""Image references of every Wikipedia edition: localized File namespaces, image options and template parameters."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from builder.config import SILVER
from builder.engines.local import build
from builder.extract.parameters import ParameterGroup, read_parameter_table, template_parameters
from builder.extract.wikitext import extract_images
from builder.lang.languages import language_for
from builder.publish.card import SAMPLE_DUMP
from builder.sources.xml import iter_pages

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from languages import census  # noqa: E402
from test_real_excerpt import EXCERPT  # noqa: E402

# Latin, Cyrillic, Greek, Armenian, Georgian, Arabic and Hebrew (right to left), Devanagari, Bengali,
# Kannada, Malayalam, Burmese, Thai, Chinese, Japanese, Korean, Yiddish
SCRIPTS = (
    "ar", "bn", "de", "el", "en", "es", "fa", "fr", "he", "hi", "hy", "ja", "ka", "ko",
    "kn", "ml", "my", "pl", "ru", "sr", "th", "uk", "ur", "yi", "zh",
)  # fmt: skip


@pytest.mark.parametrize("wiki", SCRIPTS)
def test_every_image_link_of_a_real_page_is_found_and_no_caption_is_an_option(wiki: str) -> None:
    found = census(wiki)
    assert found.links_in_text > 0
    assert found.links_found == found.links_in_text, found.missed
    assert found.option_captions == []


def captions(text: str, code: str) -> list[tuple[str, str, str]]:
    return [(ref.file, ref.caption, ref.alt) for ref in extract_images(text, language=language_for(code))]


def test_localized_options_are_never_the_caption() -> None:
    text = "[[Datei:Tor.jpg|mini|hochkant=1.2|links|alternativtext=Ein Tor|Das Brandenburger Tor bei Nacht]]"
    assert captions(text, "de") == [("File:Tor.jpg", "Das Brandenburger Tor bei Nacht", "Ein Tor")]
    assert captions("[[Datei:Tor.jpg|rahmenlos|hochkant]]", "de") == [("File:Tor.jpg", "", "")]
    french = "[[Fichier:Tour.jpg|vignette|redresse=1.2|gauche|La tour Eiffel vue du Trocadéro]]"
    assert captions(french, "fr") == [("File:Tour.jpg", "La tour Eiffel vue du Trocadéro", "")]
    assert captions("[[קובץ:Tower.jpg|ממוזער|שמאל|המגדל בלילה]]", "he") == [("File:Tower.jpg", "המגדל בלילה", "")]
    # English options stay valid on every wiki; read as English, German words are captions
    assert captions("[[Bild:Tor.jpg|thumb|left|Das Tor]]", "de") == [("File:Tor.jpg", "Das Tor", "")]
    assert [ref.caption for ref in extract_images("[[File:Tor.jpg|thumb|hochkant]]")] == ["hochkant"]


def test_an_option_followed_by_a_template_is_an_option() -> None:
    text = "[[Պատկեր:Giraffe.jpg|մինի|250x250փքս{{Չաշխատող արտաքին հղում|bot=InternetArchiveBot }}]]"
    assert captions(text, "hy") == [("File:Giraffe.jpg", "", "")]


def test_localized_template_parameters_give_image_caption_and_their_names() -> None:
    text = (
        "{{Mehrere Bilder|Bild1=Reichstag.jpg|Untertitel1=Das Reichstagsgebäude am Abend|"
        "Bild2=Tor.jpg|Breite2=200|Untertitel2=Das Tor im Winter}}"
    )
    references = extract_images(text, language=language_for("de"))
    assert [(ref.file, ref.caption, ref.parameters) for ref in references] == [
        ("File:Reichstag.jpg", "Das Reichstagsgebäude am Abend", "Bild1/Untertitel1"),
        ("File:Tor.jpg", "Das Tor im Winter", "Bild2/Untertitel2"),
    ]
    assert extract_images(text) == []  # read as English, Bild is no image parameter
    taxobox = "{{Taxobox\n| Bild = Iberian worm lizard.jpg\n| Bildbeschreibung = Zwei Maurische Netzwühlen\n}}"
    assert [(ref.caption, ref.parameters) for ref in extract_images(taxobox, language=language_for("de"))] == [
        ("Zwei Maurische Netzwühlen", "Bild/Bildbeschreibung")
    ]
    russian = "{{НП|изображение=Berlin.jpg|описание изображения=Вид на центр Берлина с телебашни}}"
    assert [(ref.caption, ref.parameters) for ref in extract_images(russian, language=language_for("ru"))] == [
        ("Вид на центр Берлина с телебашни", "изображение/описание изображения")
    ]
    # English's names are read on every wiki, as its templates are imported with them
    assert extract_images("{{Infobox|image=A.jpg|caption=A caption}}", language=language_for("ja"))[0].caption


def test_a_user_table_replaces_a_languages_parameters(tmp_path: Path) -> None:
    table = tmp_path / "parameters.json"
    table.write_text(json.dumps({"languages": {"de": [{"image": "Foto", "caption": "Text"}]}}), encoding="utf-8")
    user = read_parameter_table(table)
    assert template_parameters("de", user)[0] == ParameterGroup("Foto", "Text")
    text = "{{Kasten|Foto=A.jpg|Text=Ein Foto des Doms}}{{Mehrere Bilder|Bild1=B.jpg|Untertitel1=Ein Bild}}"
    references = extract_images(text, language=language_for("de"), parameters=template_parameters("de", user))
    assert [ref.file for ref in references] == ["File:A.jpg"]
    table.write_text(json.dumps({"languages": {"de": [{"caption": "Text"}]}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"parameters.json: languages.de\[0\] needs an 'image' parameter name"):
        read_parameter_table(table)
    with pytest.raises(ValueError, match="parameters.json: languages.de"):
        build([SAMPLE_DUMP], [SILVER], tmp_path / "out", show_progress=False, template_parameters=table)
    assert not (tmp_path / "out").exists()


def test_english_pages_read_the_same_with_or_without_the_english_language() -> None:
    for page in iter_pages(EXCERPT):
        plain = extract_images(page.text, page.title)
        assert extract_images(page.text, page.title, language=language_for("en")) == plain
        assert extract_images(page.text, page.title, language=language_for("enwiki")) == plain


@pytest.mark.parametrize("workers", [1, 2])
def test_a_user_table_reaches_the_pages_of_a_build(tmp_path: Path, write_dump, workers: int) -> None:
    """The user's table is read on every page of a build, not only checked before it (whatever the worker count)."""
    import dataclasses

    from builder.data.make_sample import page_xml

    pages = [
        page_xml("Harbour", ["{{Kasten|Foto=Pier.jpg|Text=The old wooden pier at the harbour at dusk}}"], 1),
        page_xml("Pier", ["{{Kasten|Foto=Pier.jpg|Text=A long wooden pier reaching out into the grey sea}}"], 2),
    ]
    dump = write_dump(pages, multistream=True)
    table = tmp_path / "parameters.json"
    table.write_text(json.dumps({"languages": {"en": [{"image": "Foto", "caption": "Text"}]}}), encoding="utf-8")
    config = dataclasses.replace(SILVER, caption_rule="none", splits=())
    settings = {"workers": workers, "show_progress": False}
    without = build([dump], [config], tmp_path / "without", **settings)
    assert without.rows == {"silver": 0}  # English's own parameters know no Foto/Text
    with_table = build([dump], [config], tmp_path / "with", template_parameters=table, **settings)
    assert with_table.rows == {"silver": 1}
