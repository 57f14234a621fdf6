"""Stage 2: image references in wikitext."""

from __future__ import annotations

import pytest

from builder.wikitext import ExtractStats, extract_images, normalize_title


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


def test_infobox_keys_bare_names_and_full_links() -> None:
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
        ("File:Dieric Bouts.jpg", "Bouts as painted by himself", "A man in a red hat", "infobox"),
        ("File:Last Supper.jpg", "The Last Supper was painted by Bouts", "A table", "infobox"),
    ]


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
