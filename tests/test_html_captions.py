"""Image captions in HTML pages (builder.extract.html): §4.4.1's three kinds, URLs, charsets, §4.5.1.

Charsets are tested end to end through crawls written with warcio, so the HTTP header comes from a
real response record.
"""

from __future__ import annotations

import random
import re
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
    + ["<svg>", "</svg>", "<math>", "</MATH>", "<title>", "</title>", "<foreignObject>", "</foreignobject>", "<desc>"]
    + ["<mi>", "</mi>", "<span>", "</span>", "<div.x>", "<li>", "<input>", "<a-very-long-custom-element-name>"]
    + ["</a-very-long-custom-element-name>", "<i<b>", "<svg/>", "<path/>", "<g a='/>'>", "<g a=x/>", "<div/>"]
)
_RAW_TAGS = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes")
# a start tag ending in "/>", its attributes read as the HTML tokenizer reads them (a quoted value may hold "/>")
_SELF_CLOSING = re.compile(  # each part maximal (a name, a value, one space), so that a failed match is quick
    r"""<[a-z][^\t\n\f\r />]*(?:[\t\n\f\r ]|/(?!>)|[^\t\n\f\r />][^\t\n\f\r />=]*(?![^\t\n\f\r />=])"""
    r"""(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"[^"]*"|'[^']*'|[^\t\n\f\r >"'][^\t\n\f\r >]*(?![^\t\n\f\r >])|(?=>))"""
    r"""|(?![\t\n\f\r ]*=)))*?/>"""
)
_BREAKOUT_TAGS = set(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu meta "
    "nobr ol p pre ruby s small span strong strike sub sup table tt u ul var font".split()
)
_INTEGRATION_TAGS = ("desc", "title", "mi", "mo", "mn", "ms", "mtext", "foreignobject", "annotation-xml")


def _depth_tag_by_tag(text: str) -> int:
    """The nesting depth the scan estimates, computed one tag at a time: the oracle of the numpy scan. Every "<"
    before a letter starts a tag whose name runs to a space, "/" or ">"; an end tag counts while an element of
    its name is open; in svg and math a raw-text element holds tags and a void element nests, until the svg or math
    element's end tag, unless an integration point held a tag before its own end tag."""
    import re

    text = text.lower()
    # every "<" before a letter starts a candidate, also one inside another's name
    tags = []
    for start in range(len(text)):
        match = re.compile(r"<(/?)([a-z][^\t\n\f\r />]{0,255})").match(text, start)
        if match:
            tags.append((start, bool(match.group(1)), match.group(2)))
    depth = deepest = 0
    open_names: dict[str, int] = {}
    foreign, lost, skip_until = 0, False, -1
    for number, (start, closing, name) in enumerate(tags):
        if start < skip_until:
            continue
        in_foreign, was_lost = foreign > 0, lost
        closed_at_once = not closing and _SELF_CLOSING.match(text, start) is not None
        if name in ("svg", "math"):
            if not closing and not lost and closed_at_once:
                continue
            if not closing:
                foreign += 1
            elif foreign and not lost:
                foreign -= 1
        elif in_foreign and not closing and name in _INTEGRATION_TAGS and not lost:
            after = tags[number + 1] if number + 1 < len(tags) else None
            lost = not (after is not None and after[1] and after[2] == name)
        elif in_foreign and not closing and name in _BREAKOUT_TAGS:
            lost = True
        if name in _FLAT_TAGS and not in_foreign:
            continue
        if in_foreign and not was_lost and not lost and closed_at_once:
            continue
        if closing:
            unique = len(name) >= 256
            if open_names.get(name, 0) > 0 and not unique:
                open_names[name] -= 1
                depth -= 1
            continue
        open_names[name] = open_names.get(name, 0) + 1
        depth += 1
        deepest = max(deepest, depth)
        if in_foreign:
            continue
        if name == "plaintext":
            return deepest
        if name in _RAW_TAGS:
            end = text.find("</" + name, start + 1)
            skip_until = len(text) if end < 0 else end
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


# ---- issue 45, item 5: every page's cost is linear in its size, up to the payload cap -------------------------

_IMG = '<img src="a.jpg" alt="a caption">'


def _images_at_depth(images: int, depth: int, alt: str = "a caption") -> str:
    """``images`` images side by side under ``depth`` nested ``<div>``: each image once walked to the root."""
    image = f'<img src="a.jpg" alt="{alt}">'
    return "<html><body>" + "<div>" * depth + image * images + "</div>" * depth + "</body></html>"


def _nested_figures(levels: int, stacks: int = 1) -> str:
    """Figures each captioned by a figcaption holding the next figure, ``stacks`` such stacks side by side: each
    caption's text once held all below it."""
    stack = "<figure><img src=a.jpg><figcaption>word word " * levels + "</figcaption></figure>" * levels
    return stack * stacks


@pytest.mark.parametrize(
    ("page", "depth"),
    [
        ("<svg><title>" + "<div>" * 120_000, 120_002),  # the page: svg content hid the nesting from the scan
        ("<math><style>" + "<div>" * 120_000, 120_002),
        ("<svg>" + "<input>" * 120_000, 120_001),  # a void element of HTML nests in svg
        ("<div></span>" * 120_000, 120_000),  # an end tag with nothing of its name open closes nothing
        ("<div.x></div>" * 120_000, 120_000),  # the name runs to ">": no div is open
    ],
)
def test_a_page_that_hid_its_nesting_from_the_scan_is_refused_before_the_parse(page: str, depth: int) -> None:
    from builder.extract.html import MAX_DEPTH, TooDeep, nesting_depth

    assert nesting_depth(page) == depth > MAX_DEPTH
    stats = HtmlStats()
    with pytest.raises(TooDeep):
        extract_references(page, PAGE, stats)
    assert (stats.too_deep_pages, stats.pages) == (1, 0)


def test_svg_closed_cleanly_leaves_raw_text_as_text() -> None:
    """An icon's ``<title>`` and an ``</svg>`` end svg content: a later script's ``<`` are text again."""
    from builder.extract.html import nesting_depth

    icons = "<svg><title>Search</title><path d='M0 0'></path></svg>" * 30
    assert nesting_depth(icons + "<script>" + "for(i=0;i<n;i++){}" * 30_000 + "</script>", scan_above=-1) == 2


def test_the_work_of_images_deep_in_a_page_grows_as_the_page() -> None:
    """The issue's 50,000 images thousands of elements deep: each ancestor is walked once for all images (no timing:
    the nodes visited are counted), so the work is the images plus the depth, and doubling the images doubles it."""
    from builder.extract.html import MAX_DEPTH, Work

    depth = MAX_DEPTH - 24
    works = []
    for images in (12_500, 25_000, 50_000):
        work, stats = Work(), HtmlStats()
        page = extract_references(_images_at_depth(images, depth), PAGE, stats, work)
        assert len(page.references) == stats.alt == stats.images == images
        assert work.nodes == images + depth + 3  # the divs, body and html once; each image's own step
        works.append(work)
    assert [work.tags for work in works] == [2 * depth + 4 + images for images in (12_500, 25_000, 50_000)]


def test_nested_captions_are_read_once() -> None:
    """A figcaption holding the next figure: each caption's text leaves out the captioned figure inside it, so the
    text read is linear in the page (it was quadratic) and each caption is its own words."""
    from builder.extract.html import Work

    nodes = []
    for stacks in (2, 4, 8):
        work, stats = Work(), HtmlStats()
        page = extract_references(_nested_figures(250, stacks), PAGE, stats, work)
        assert [reference.caption for reference in page.references] == ["word word"] * (250 * stacks)
        nodes.append(work.nodes)
    assert nodes == [(9 * 250 - 2) * stacks + 3 for stacks in (2, 4, 8)]  # exactly linear in the page


def test_pages_at_the_payload_cap_are_refused_or_read_in_full() -> None:
    """Pages of the adversarial shapes grown to the WARC reader's payload cap (50 MB): the one nested past the bound
    is refused, counted, before any parse; the one of 50,000 images just under the bound is read, every image
    counted."""
    from builder.extract.html import MAX_DEPTH, TooDeep, Work
    from builder.sources.warc import MAX_PAYLOAD

    hidden = "<svg><title>" + "<div>" * ((MAX_PAYLOAD - 12) // 5)
    assert MAX_PAYLOAD - 5 < len(hidden.encode()) <= MAX_PAYLOAD
    stats, work = HtmlStats(), Work()
    with pytest.raises(TooDeep):
        extract_references(hidden, PAGE, stats, work)
    assert (stats.too_deep_pages, stats.pages, work.tags, work.nodes) == (1, 0, (MAX_PAYLOAD - 12) // 5 + 2, 0)
    del hidden
    depth = MAX_DEPTH - 96
    alt = "x" * ((MAX_PAYLOAD - 11 * depth - 100) // 50_000 - len(_IMG) + len("a caption"))
    deep = _images_at_depth(50_000, depth, alt)
    assert MAX_PAYLOAD - 50_000 < len(deep.encode()) <= MAX_PAYLOAD
    stats, work = HtmlStats(), Work()
    page = extract_references(deep, PAGE, stats, work)
    assert len(page.references) == stats.alt == stats.images == 50_000
    assert work.nodes == 50_000 + depth + 3
