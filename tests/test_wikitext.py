"""Stage 2: image references in wikitext."""

from __future__ import annotations

import pytest

from builder.config import PRESETS, PipelineConfig, preset
from builder.extract.wikitext import MAX_SPAN, ExtractStats, extract_images, normalize_title


def refs(wikitext: str, **kwargs) -> list[tuple[str, str, str, str]]:
    return [(r.file, r.caption, r.alt, r.source) for r in extract_images(wikitext, **kwargs)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("File:Easter Bunny Postcard 1907.jpg", "File:Easter Bunny Postcard 1907.jpg"),
        ("Image:Easter_Bunny_Postcard_1907.jpg", "File:Easter Bunny Postcard 1907.jpg"),
        ("file: easter%20Bunny  Postcard_1907.jpg ", "File:Easter Bunny Postcard 1907.jpg"),
        ("IMAGE:Caf&eacute;.png", "File:Café.png"),
        ("Talk:Something", None),
        ("File:", None),
        ("File:\ufeffBridge\u200b.jpg\x00", "File:Bridge.jpg"),
        ("File:\u200eBridge\u200f at\tnight.jpg", "File:Bridge at night.jpg"),
    ],
)
def test_normalize_title(raw: str, expected: str | None) -> None:
    assert normalize_title(raw) == expected


def test_bare_names_need_an_extension() -> None:
    assert normalize_title("Postcard_1907.jpg", bare=True) == "File:Postcard 1907.jpg"
    assert normalize_title("none", bare=True) is None


def test_extended_image_syntax_options_and_caption() -> None:
    text = (
        "Intro. [[File:Easter_Bunny_Postcard_1907.jpg|thumb|upright=1.2|left|220px|alt=A hare carrying branches"
        "|A 1907 postcard featuring the [[Easter Bunny]]]] more text"
    )
    assert refs(text) == [
        (
            "File:Easter Bunny Postcard 1907.jpg",
            "A 1907 postcard featuring the Easter Bunny",
            "A hare carrying branches",
            "link",
        )
    ]


def test_caption_is_the_last_non_option_and_pipes_inside_links_do_not_split() -> None:
    text = "[[Image:X.png|Old caption|frameless|x120px|The [[River Thames|Thames]] at {{convert|5|km}}|link=Foo]]"
    assert refs(text) == [("File:X.png", "The Thames at 5 km", "", "link")]


def test_leading_colon_is_a_link_not_a_use_and_commented_images_do_not_count() -> None:
    text = "See [[:File:A.jpg]] and <!-- [[File:Old.jpg|thumb|Old one]] --> [[Category:Images]]"
    assert refs(text) == []


def test_nested_file_link_is_its_own_reference() -> None:
    text = "[[File:Map.png|thumb|The route, marked by [[File:Icon.svg|20px]] icons, crosses the river]]"
    assert refs(text) == [
        ("File:Map.png", "The route, marked by icons, crosses the river", "", "link"),
        ("File:Icon.svg", "", "", "link"),
    ]


def test_template_keys_bare_names_and_full_links() -> None:
    text = """{{Infobox person
| name = Dieric Bouts
| image = Dieric_Bouts.jpg <!-- portrait -->
| alt = A man in a red hat
| caption = Bouts as painted by himself
| image2 = [[File:Last Supper.jpg|220px|alt=A table]]
| caption2 = The Last Supper was painted by Bouts
}}
'''Dieric Bouts''' was a painter."""
    assert refs(text) == [
        ("File:Dieric Bouts.jpg", "Bouts as painted by himself", "A man in a red hat", "template"),
        ("File:Last Supper.jpg", "The Last Supper was painted by Bouts", "A table", "template"),
    ]
    assert {reference.template for reference in extract_images(text)} == {"Infobox person"}


def test_gallery_lines() -> None:
    text = "<gallery mode=packed>\nFile:A.jpg|The first image shows a bridge|alt=A bridge\nB.jpg\n\n</gallery>"
    assert refs(text) == [
        ("File:A.jpg", "The first image shows a bridge", "A bridge", "gallery"),
        ("File:B.jpg", "", "", "gallery"),
    ]


def test_localized_namespace_alias() -> None:
    assert refs("[[Datei:Brücke.jpg|mini|Eine Brücke]]", file_aliases=("File", "Image", "Datei")) == [
        ("File:Brücke.jpg", "Eine Brücke", "", "link")
    ]


def test_unclosed_markup_is_counted_and_the_rest_of_the_page_still_read() -> None:
    stats = ExtractStats()
    text = "[[File:Broken.jpg|thumb|never closed\n\n[[File:Fine.jpg|thumb|This one is fine]]"
    assert refs(text, stats=stats) == [("File:Fine.jpg", "This one is fine", "", "link")]
    assert (stats.references, stats.unclosed) == (1, 1)


def test_deeply_nested_and_huge_markup_does_not_hang() -> None:
    nested = "{{a|" * 300 + "x" + "}}" * 300
    text = f"[[File:Deep.jpg|thumb|Deep {nested} caption]]" + "[[" * 5000
    found = refs(text)
    assert found[0][0] == "File:Deep.jpg"


def test_images_of_any_template_with_numbered_keys() -> None:
    text = """{{multiple image
 | align = right | footer = Two views
 | image1 = Bridge_north.jpg | alt1 = A stone bridge | caption1 = The bridge seen from the north bank
 | image2 = File:Bridge south.jpg | caption2 = The same bridge from the south, at dusk
 | image3 =
}}
{{CSS image crop|Image = Tower.jpg |bSize = 315|cWidth = 230|Location = right}}
{{Speciesbox | image = Hare.JPG | image_caption = A hare in a field }}"""
    found = [(r.file, r.caption, r.alt, r.source, r.template) for r in extract_images(text)]
    assert found == [
        (
            "File:Bridge north.jpg",
            "The bridge seen from the north bank",
            "A stone bridge",
            "template",
            "multiple image",
        ),
        ("File:Bridge south.jpg", "The same bridge from the south, at dusk", "", "template", "multiple image"),
        ("File:Tower.jpg", "", "", "template", "CSS image crop"),
        # The authors read captions from caption/captionN keys only: image_caption is not one.
        ("File:Hare.JPG", "", "", "template", "Speciesbox"),
    ]


def test_whole_link_in_a_template_value_keeps_its_own_texts_unless_the_template_gives_them() -> None:
    text = "{{Anthropology|image=[[File:P human body.svg|140px|alt=A human body]]}}"
    found = [(r.file, r.caption, r.alt, r.source, r.template) for r in extract_images(text)]
    assert found == [("File:P human body.svg", "", "A human body", "template", "Anthropology")]


def test_template_values_that_are_not_file_names_are_counted() -> None:
    stats = ExtractStats()
    text = "{{Infobox place|image={{#property:P18}}|caption=Seen from above}} {{Infobox x|image=none}}"
    assert refs(text, stats=stats) == []
    assert stats.unparsed == 2


def test_an_image_template_inside_an_image_value_counts_once() -> None:
    stats = ExtractStats()
    text = "{{Infobox person|image={{CSS image crop|Image=Face.jpg|bSize=200}}|caption=The face of the man}}"
    found = [(r.file, r.caption, r.template) for r in extract_images(text, stats=stats)]
    assert found == [("File:Face.jpg", "", "CSS image crop")]
    assert stats.unparsed == 0


def test_a_stray_closing_brace_in_a_nested_link_is_text() -> None:
    assert refs("[[File:A.jpg|thumb|The [[B}}C|label]] at dusk]]") == [("File:A.jpg", "The label at dusk", "", "link")]


def test_unpaired_brackets_are_not_caption_text() -> None:
    # As in MediaWiki, an unclosed {{ is text: its pipe splits the link, and the last piece is the caption.
    assert refs("[[File:A.jpg|thumb|The {{nowrap|old]] bridge ]]") == [("File:A.jpg", "old", "", "link")]
    assert refs("[[File:B.jpg|thumb|A }} and {{broken [[link]]]]") == [("File:B.jpg", "A and broken link", "", "link")]


def test_case_insensitive_prefixes_and_every_segment_read() -> None:
    text = "[[iMaGe:a.jpg|Draft caption|thumb|The final caption|upright]] [[FILE : b.jpg|alt=Only alt|left]]"
    assert refs(text) == [
        ("File:A.jpg", "The final caption", "", "link"),
        ("File:B.jpg", "", "Only alt", "link"),
    ]


def test_inert_markup_hides_images_and_unclosed_tags_are_text() -> None:
    text = (
        "<nowiki>[[File:Shown.jpg|thumb|literal]]</nowiki> <pre>{{multiple image|image1=P.jpg}}</pre> "
        "<nowiki/> [[File:After.jpg|thumb|After a self-closing tag]] <math>x [[File:M.jpg]]</math> "
        "<!-- [[File:Old.jpg|thumb|commented]] --> <nowiki>unclosed [[File:Real.jpg|thumb|Still a use]]"
    )
    assert refs(text) == [
        ("File:After.jpg", "After a self-closing tag", "", "link"),
        ("File:Real.jpg", "Still a use", "", "link"),
    ]


def test_gallery_comments_and_unclosed_galleries() -> None:
    text = (
        "<gallery>\nA.jpg|One <!-- hidden | not a pipe --> caption\n<!-- B.jpg|gone -->\n</gallery>"
        "<gallery>\nC.jpg|Never closed\n[[File:D.jpg|thumb|A link after it]]"
    )
    assert refs(text) == [
        ("File:A.jpg", "One caption", "", "gallery"),
        ("File:D.jpg", "A link after it", "", "link"),
    ]


def test_nested_references_reach_the_cleaner_once() -> None:
    text = "{{Infobox x|image=Outer.jpg|caption=Outer {{multiple image|image1=Inner.jpg|caption1=Inner text}} end}}"
    found = [(r.file, r.caption, r.template) for r in extract_images(text)]
    assert found == [("File:Outer.jpg", "Outer end", "Infobox x"), ("File:Inner.jpg", "Inner text", "multiple image")]


# Vandalised pages: each shape once, at a size that would take minutes if extraction were quadratic.
N = 50_000


@pytest.mark.parametrize(
    ("shape", "expected", "unclosed"),
    [
        ("[[File:X.jpg|thumb|" + "{{a|" * 4_000 + "]]", [("File:X.jpg", "", "", "link")], 0),
        ("[[File:X.jpg|thumb|" + "{{a|" * N + "]]", [], 1),  # longer than MAX_SPAN
        ("<gallery>\nX.jpg|" + "{{a|" * N + "b\n</gallery>", [("File:X.jpg", "b", "", "gallery")], 0),
        ("<gallery>" * N + "[[File:Y.jpg|thumb|ok]]", [("File:Y.jpg", "ok", "", "link")], 0),
        ("[[File:" * N, [], N),
        ("{{a|" * N + "[[File:Y.jpg|thumb|ok]]", [("File:Y.jpg", "ok", "", "link")], 0),
        ("]]" * N + "}}" * N + "[[File:Y.jpg|thumb|ok]]", [("File:Y.jpg", "ok", "", "link")], 0),
        ("<nowiki" * N + "<nowiki>" * N + "<!--" * N + "[[File:Y.jpg]]", [], 0),
        ("{{a|b=" * N + "x" + "}}" * N + "[[File:Y.jpg|thumb|ok]]", [("File:Y.jpg", "ok", "", "link")], 0),
        ("{{a|[[b|" * N + "[[File:Y.jpg|thumb|ok]]", [("File:Y.jpg", "ok", "", "link")], 0),
        ("[[File:Y.jpg|thumb|ok]]" + "[[a]]] " * N, [("File:Y.jpg", "ok", "", "link")], 0),
    ],
    ids=[
        "unclosed-braces-in-caption",
        "huge-caption",
        "unclosed-braces-in-gallery-line",
        "unclosed-galleries",
        "unclosed-file-links",
        "unclosed-templates",
        "stray-closers",
        "unclosed-inert-tags",
        "nested-templates",
        "interleaved-openers",
        "odd-closing-runs",
    ],
)
def test_pathological_pages_take_linear_time(shape: str, expected: list, unclosed: int) -> None:
    stats = ExtractStats()
    assert refs(shape, stats=stats) == expected
    assert stats.unclosed == unclosed


def test_deeply_nested_references_take_linear_time() -> None:
    depth = 20_000
    templates = "{{a|image=X.jpg|caption=Level " * depth + "x" + "}}" * depth
    found = extract_images(templates)
    assert len(found) == depth
    assert found[-1].caption == "Level x" and found[0].caption == "Level"
    links = "[[File:L.jpg|thumb|a " * depth + "]]" * depth
    stats = ExtractStats()
    found = extract_images(links, stats=stats)
    assert len(found) + stats.unclosed == depth
    # The inner links are found; the outer ones are longer than MAX_SPAN (23 characters a level).
    assert len(found) == sum(1 for level in range(1, depth + 1) if 23 * level - 2 <= MAX_SPAN)


def test_templates_with_invalid_names_are_text() -> None:
    assert refs("{{|image=A.jpg}} {{<b>x</b>|image=B.jpg}} {{[[x]]|image=C.jpg}}") == []


def test_footnote_markup_cannot_close_a_caption() -> None:
    text = "[[File:A.jpg|thumb|The bridge<ref>See [[B|c ]] and {{d</ref> at dusk]]"
    assert refs(text) == [("File:A.jpg", "The bridge at dusk", "", "link")]


def test_presets_read_the_papers_sources_and_galleries_are_opt_in() -> None:
    assert {preset(name).sources for name in PRESETS} == {("link", "template")}
    assert PipelineConfig("mine", sources=("gallery", "link")).sources == ("link", "gallery")
    with pytest.raises(ValueError, match="infobox"):
        PipelineConfig("old", sources=("infobox",))
    with pytest.raises(ValueError, match="at least one"):
        PipelineConfig("none", sources=())


def test_a_caption_the_cleaner_cannot_render_is_dropped_and_counted_not_its_page() -> None:
    deep = "{{" * 1000 + "x" + "}}" * 1000
    page = (
        f"[[File:Good.jpg|thumb|A caption that stays.]] text [[File:Deep.jpg|thumb|{deep}]] [[File:Also.jpg|alt=Kept]]"
    )
    stats = ExtractStats()
    references = extract_images(page, "Page", stats=stats)
    assert [(r.file, r.caption, r.alt) for r in references] == [
        ("File:Good.jpg", "A caption that stays.", ""),
        ("File:Deep.jpg", "", ""),
        ("File:Also.jpg", "", "Kept"),
    ]
    assert stats.captions_dropped == 1
