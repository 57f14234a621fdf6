"""Image captions in HTML pages (builder.extract.html): §4.4.1's three kinds, URLs, charsets, §4.5.1.

Charsets are tested end to end through crawls written with warcio, so the HTTP header comes from a
real response record.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.web_crawl import SITE, Response, write_records
from builder.extract.html import HtmlStats, Undecodable, decode_page, extract_references, preprocess_caption
from builder.extract.web import WebResult, WebTask, iter_web_rows
from builder.sources.warc import WarcStats

REAL = Path(__file__).parent / "data" / "web" / "whirlwind.warc.gz"
PAGE = "https://news.example.org/2024/story/index.html"


def extract(html: str, url: str = PAGE) -> tuple[list[tuple[str, int, str, str]], HtmlStats, str]:
    stats = HtmlStats()
    page = extract_references(html, url, stats)
    return [(r.kind, r.position, r.image, r.caption) for r in page.references], stats, page.language


def test_the_three_kinds_each_counted() -> None:
    found, stats, language = extract(
        '<html lang="en-GB"><body>'
        '<figure><img src="a.jpg" alt="Alt of a"><figcaption>The <b>old</b> mill<br>in winter</figcaption></figure>'
        '<table><tr><td><img src="b.jpg"></td></tr><tr><td><p>A ship</p><p>at sea</p></td></tr></table>'
        '<p><img src="c.jpg" alt="Children  play"></p>'
        '<img src="d.jpg"></body></html>'
    )
    base = "https://news.example.org/2024/story/"
    assert found == [
        ("figure", 0, base + "a.jpg", "The old mill in winter"),
        ("alt", 0, base + "a.jpg", "Alt of a"),
        ("table", 1, base + "b.jpg", "A ship at sea"),
        ("alt", 2, base + "c.jpg", "Children play"),
    ]
    assert (stats.figure, stats.table, stats.alt, stats.images, stats.pages) == (1, 1, 2, 4, 1)
    assert language == "en-gb"


def test_base_href_resolves_image_urls() -> None:
    found, _, _ = extract(
        '<head><base href="/media/"></head><img src="x.png" alt="Relative to the base">'
        '<img src="//cdn.example.net/y.png" alt="Scheme-relative"><img src="../z.png" alt="Up one folder">'
    )
    assert [image for _, _, image, _ in found] == [
        "https://news.example.org/media/x.png",
        "https://cdn.example.net/y.png",
        "https://news.example.org/z.png",
    ]
    found, _, _ = extract('<base href="https://static.example.com/img/"><img src="x.png" alt="Absolute base">')
    assert found[0][2] == "https://static.example.com/img/x.png"


def test_only_single_column_two_cell_tables_give_captions() -> None:
    found, stats, _ = extract(
        # three rows, two columns, caption above the image, two images: none is a caption table
        "<table><tr><td><img src=a.jpg></td></tr><tr><td>one</td></tr><tr><td>two</td></tr></table>"
        "<table><tr><td><img src=b.jpg></td><td>beside</td></tr><tr><td>below</td></tr></table>"
        "<table><tr><td>above</td></tr><tr><td><img src=c.jpg></td></tr></table>"
        "<table><tr><td><img src=d.jpg><img src=e.jpg></td></tr><tr><td>both</td></tr></table>"
        # a caption table nested in a layout table's cell counts; the layout table does not
        "<table><tr><td><table><tbody><tr><th><img src=f.jpg></th></tr><tr><td>Nested</td></tr></tbody></table>"
        "</td></tr><tr><td>layout</td></tr></table>"
    )
    assert [(kind, image.rsplit("/", 1)[1], caption) for kind, _, image, caption in found] == [
        ("table", "f.jpg", "Nested")
    ]
    assert stats.table == 1


def test_figures_with_several_images_or_no_caption() -> None:
    found, stats, _ = extract(
        "<figure><img src=a.jpg><img src=b.jpg><figcaption>Two photos</figcaption></figure>"
        "<figure><img src=c.jpg></figure>"
        "<figure><figure><img src=d.jpg><figcaption>Inner</figcaption></figure><figcaption>Outer</figcaption></figure>"
    )
    assert [(kind, caption) for kind, _, _, caption in found] == [("figure", "Inner")]
    assert stats.figures_with_several_images == 1


def test_unusable_sources_and_empty_captions_are_counted() -> None:
    found, stats, _ = extract(
        '<img alt="No source"><img src="data:image/png;base64,AAAA" alt="Inline">'
        '<img src="javascript:void(0)" alt="Script"><img src="a.jpg" alt="   ">'
        "<figure><img src=b.jpg><figcaption> <script>caption()</script> </figcaption></figure>"
    )
    assert found == []
    assert (stats.no_src, stats.data_uris, stats.unusable_urls, stats.empty_captions) == (1, 1, 1, 2)


def test_preprocessing_of_section_4_5_1() -> None:
    assert preprocess_caption("  A line\nbreak,\r\ntabs\tand\u00a0spaces  ") == "A line break, tabs and spaces"
    assert preprocess_caption("Nul\x00l byte, soft\u00adhyphen, bell\x07") == "Null byte, softhyphen, bell"
    assert preprocess_caption("Para\u2029graph\u2028line") == "Para graph line"
    assert preprocess_caption("नमस्ते \u200d kept") == "नमस्ते \u200d kept"
    assert preprocess_caption("\n\n") == ""


def test_charsets_from_header_meta_and_detection(tmp_path: Path) -> None:
    text = "Улицы старого города зимой, когда снег лежит на крышах домов"
    body = f'<html><body><img src="a.jpg" alt="{text}"><p>{text}. {text}.</p></body></html>'
    meta = f'<html><head><meta charset="windows-1251"></head><body><img src="a.jpg" alt="{text}"></body></html>'
    equiv = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r"></head>'
        f'<body><img src="a.jpg" alt="{text}"></body></html>'
    )
    crawl = write_records(
        tmp_path / "charsets.warc.gz",
        [
            Response(f"{SITE}/header.html", body.encode("cp1251"), "text/html; charset=windows-1251"),
            Response(f"{SITE}/meta.html", meta.encode("cp1251"), "text/html"),
            Response(f"{SITE}/equiv.html", equiv.encode("koi8-r"), "text/html"),
            Response(f"{SITE}/detected.html", body.encode("cp1251"), "text/html"),
            Response(f"{SITE}/unknown.html", meta.encode("cp1251"), "text/html; charset=x-no-such-charset"),
            Response(f"{SITE}/bom.html", "\ufeff".encode() + body.encode(), "text/html; charset=iso-8859-1"),
        ],
    )
    task = WebTask(str(crawl), "", "")
    result = WebResult(WarcStats(), HtmlStats())
    rows = [row for kind, row in iter_web_rows(task, result) if kind == "reference"]
    assert [(row["page"].rsplit("/", 1)[1], row["caption"]) for row in rows] == [
        (name, text) for name in ["header.html", "meta.html", "equiv.html", "detected.html", "unknown.html", "bom.html"]
    ]
    html = result.html
    assert (html.charset_header, html.charset_meta, html.charset_detected, html.charset_bom) == (1, 3, 1, 1)
    assert html.unknown_charsets == 1


def test_undecodable_pages_are_counted_skips(tmp_path: Path) -> None:
    generator = random.Random(1)
    noise = bytes(generator.randrange(256) for _ in range(3000))
    with pytest.raises(Undecodable):
        decode_page(noise, None, HtmlStats())
    crawl = write_records(tmp_path / "noise.warc.gz", [Response(f"{SITE}/noise.html", noise, "text/html")])
    result = WebResult(WarcStats(), HtmlStats())
    assert list(iter_web_rows(WebTask(str(crawl), "", ""), result)) == []
    assert result.html.undecodable_pages == 1
    assert result.problems[0].startswith(f"{crawl}: record <urn:uuid:")
    assert "noise.html" in result.problems[0]


def test_bytes_that_do_not_fit_the_named_charset_damage_only_their_caption() -> None:
    stats = HtmlStats()
    text = decode_page(b'<img src=a.jpg alt="caf\xe9 au lait"><img src=b.jpg alt="fine caption">', "utf-8", stats)
    page = extract_references(text, PAGE, stats)
    assert [r.caption for r in page.references] == ["fine caption"]
    assert stats.damaged_captions == 1


def test_the_real_page_gives_its_alt_texts() -> None:
    result = WebResult(WarcStats(), HtmlStats())
    rows = [row for kind, row in iter_web_rows(WebTask(str(REAL), "", ""), result) if kind == "reference"]
    assert {row["page"] for row in rows} == {"https://an.wikipedia.org/wiki/Escopete"}
    assert {row["language"] for row in rows} == {"an"}
    assert ("alt", "Escudo d'armas") in {(row["kind"], row["caption"]) for row in rows}
    escudo = next(row for row in rows if row["caption"] == "Escudo d'armas")
    assert escudo["image"].startswith("https://upload.wikimedia.org/wikipedia/commons/thumb/0/0a/Escudo_de_Escopete")
    assert (result.html.alt, result.html.empty_captions, result.html.charset_header) == (7, 2, 1)


_URL_PARTS = st.sampled_from(
    [
        "a",
        "b",
        "/",
        ".",
        "..",
        "?",
        "#",
        ":",
        ";",
        "@",
        "%2F",
        "[",
        "]",
        "é",
        "\t",
        " ",
        "\\",
        "=",
        "&",
        "~",
        "\x01",
        "80",
    ]
)
_PREFIXES = st.sampled_from(["http://", "https://", "HTTP://", "//", "/", "", "ftp://", "data:", "./", "../"])
_FIXED_BASES = st.sampled_from(
    [
        "http://crawl.example.org/a/b.html",
        "https://user@h.example:8443/x/?q=1#f",
        "http://h.example",
        "ftp://f/x",
        "http://h.example/a;p?q",
        "HTTP://H.example/",
        "",
    ]
)


_BASES = _FIXED_BASES | st.builds(
    lambda scheme, host, rest: scheme + host + rest,
    st.sampled_from(["http://", "https://", "HTTP://", "http:/", ""]),
    st.sampled_from(["h.example", "", "u@h:80", "h?", "[::1]", "é.example"]),
    st.lists(_URL_PARTS, max_size=8).map("".join),
)


@settings(max_examples=3000, deadline=None)
@given(base=_BASES, prefix=_PREFIXES, rest=st.lists(_URL_PARTS, max_size=12).map("".join))
def test_a_resolved_url_keys_as_itself(base: str, prefix: str, rest: str) -> None:
    """Whatever a page and its ``src`` are, the resolved URL's key is a fixed point: the key resolves, from any
    base, to a URL of the same key, so a reference and an image record that name it meet."""
    from builder.extract.html import Resolver
    from builder.filters.images import normalize_url

    try:
        url = Resolver(base)(prefix + rest)
    except ValueError:
        return
    key = normalize_url(url)
    assert normalize_url(key) == key
    assert normalize_url(Resolver(base)(key)) == normalize_url(Resolver("")(key)) == key


_WPT_BASE = "http://example.org/foo/bar"


@pytest.mark.parametrize(
    ("src", "href"),
    [  # web-platform-tests, url/resources/urltestdata.json, against its base http://example.org/foo/bar
        ("http://example\t.\norg", "http://example.org/"),
        ("http://f:21/ b ? d # e ", "http://f:21/%20b%20?%20d%20#%20e"),
        ("http:foo.com", "http://example.org/foo/foo.com"),
        ("\t   :foo.com   \n", "http://example.org/foo/:foo.com"),
        (":foo.com\\", "http://example.org/foo/:foo.com/"),
        ("\\x", "http://example.org/x"),
        ("\\\\x\\hello", "http://x/hello"),
        ("http://foo.com/\\@", "http://foo.com//@"),
        ("#", "http://example.org/foo/bar#"),
        ("?", "http://example.org/foo/bar?"),
    ],
)
def test_the_resolver_resolves_as_the_url_standard(src: str, href: str) -> None:
    from builder.extract.html import Resolver

    assert Resolver(_WPT_BASE)(src) == href


def test_backslashes_and_spellings_in_a_page_resolve_as_a_browser_does() -> None:
    """Issue 45, item 3: ``\\img\\a.jpg`` is the host's ``/img/a.jpg`` (urljoin made it ``/dir/\\img\\a.jpg``);
    a Unicode host and path are written in ASCII; a ``src`` the standard refuses is counted unusable."""
    stats = HtmlStats()
    html = (
        '<img src="\\img\\a.jpg" alt="one"><img src="\\\\other.example\\b.jpg" alt="two">'
        '<img src="http://bücher.example/café.jpg" alt="three"><img src="http://a b/c.jpg" alt="four">'
    )
    page = extract_references(html, "http://example.org/dir/page.html", stats)
    assert [reference.image for reference in page.references] == [
        "http://example.org/img/a.jpg",
        "http://other.example/b.jpg",
        "http://xn--bcher-kva.example/caf%C3%A9.jpg",
    ]
    assert stats.unusable_urls == 1


_FLAT_TAGS = set(
    "area base br col embed hr img input link meta param source track wbr image keygen basefont bgsound frame "
    "p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rt rp".split()
)
_TAG_PARTS = st.sampled_from(
    ["<div>", "</div>", "<P>", "</p>", "<br>", "x", "<script>if(a<b){}</script>", "<Foo-bar>", "</foo-bar>", "<divx>"]
    + ["<basefontx>", "<title><b></title>", "< no", "<1>", "<style>a<i>", "</style>", "<plaintext><i>", "<scriptx>"]
)


def _depth_tag_by_tag(text: str) -> int:
    """The nesting depth the scan estimates, computed one tag at a time: the oracle of the numpy scan."""
    import re

    text = text.lower()
    depth = deepest = position = 0
    while match := re.compile(r"<(/?)([a-z][a-z0-9-]*)").search(text, position):
        position = match.end()
        closing, name = match.groups()
        if name in _FLAT_TAGS:
            continue
        if closing:
            depth = max(0, depth - 1)
            continue
        depth += 1
        deepest = max(deepest, depth)
        if name == "plaintext":
            return deepest
        if name in ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"):
            end = text.find("</" + name, position)
            position = len(text) if end < 0 else end
    return deepest


@settings(max_examples=2000, deadline=None)
@given(st.lists(_TAG_PARTS, max_size=30).map("".join))
def test_the_nesting_scan_counts_as_a_tag_by_tag_walk(text: str) -> None:
    from builder.extract.html import nesting_depth

    assert nesting_depth(text, scan_above=-1) == _depth_tag_by_tag(text)


def test_a_page_of_few_tags_is_not_scanned_and_a_deep_one_is_skipped() -> None:
    from builder.extract.html import MAX_DEPTH, SCAN_TAGS, TooDeep, nesting_depth

    assert nesting_depth("<div>" * SCAN_TAGS) == 0  # cannot be deep enough to slow the parse
    deep = "<div>" * (MAX_DEPTH + 1) + "<p>x</p>" * SCAN_TAGS
    assert nesting_depth(deep) == MAX_DEPTH + 1
    with pytest.raises(TooDeep):
        extract_references(deep, "https://example.org/", HtmlStats())
