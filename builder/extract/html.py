"""Image references and their captions in an HTML page (thesis §4.4.1), and §4.5.1's preprocessing.

The page is parsed by an HTML5 parser (Lexbor, through selectolax), never by patterns over its text.
Three kinds of captions are found, each counted (:class:`HtmlStats`):

- ``figure``: an ``<img>`` of a ``<figure>`` with the figure's ``<figcaption>``;
- ``table``: a single-column two-cell table, the image in the top cell and the caption in the bottom one;
- ``alt``: the ``alt`` text of an ``<img>``.

An image inside a figure or a caption table with an ``alt`` text gives two references, one per kind.
Image URLs are resolved against the page's URL and its ``<base href>``. The page's text is decoded
with the charset its HTTP header names, else the one its ``<meta>`` names, else the one detected
(:func:`decode_page`).
"""

from __future__ import annotations

import codecs
import dataclasses
from collections.abc import Iterator
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser, LexborNode

from builder.extract.cleaning import _printable  # the captions' rule for what a reader sees, one place

__all__ = [
    "HtmlStats",
    "ImageReference",
    "KINDS",
    "PageReferences",
    "Undecodable",
    "decode_page",
    "extract_references",
    "preprocess_caption",
]

KINDS = ("figure", "table", "alt")  # the order of a position's references
PRESCAN_BYTES = 1024  # where the HTML standard looks for a <meta> charset
_SKIPPED_TEXT = frozenset({"script", "style", "template", "noscript", "-comment"})
_BLOCKS = frozenset(
    {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "tr"}
)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_BREAKS = {ord(char): " " for char in "\n\r\v\f\x85\u2028\u2029"}


class Undecodable(ValueError):
    """A page whose bytes no known charset decodes."""


@dataclasses.dataclass
class HtmlStats:
    """What the pages held and what was left out, per kind of caption and per way of decoding."""

    pages: int = 0
    images: int = 0  # <img> elements
    figure: int = 0  # references found, per kind
    table: int = 0
    alt: int = 0
    empty_captions: int = 0  # captions empty after preprocessing (an ``alt=""``, an empty figcaption)
    damaged_captions: int = 0  # captions holding U+FFFD, where the page's bytes did not fit its charset
    figures_with_several_images: int = 0  # figures whose caption belongs to no single image
    no_src: int = 0  # images without a src
    data_uris: int = 0  # images given inline (``data:``), which no other page can reference
    unusable_urls: int = 0  # sources that resolve to no http(s) URL
    charset_bom: int = 0  # how each page was decoded
    charset_header: int = 0
    charset_meta: int = 0
    charset_detected: int = 0
    unknown_charsets: int = 0  # a charset named in the header or <meta> that Python does not know
    undecodable_pages: int = 0  # pages no known charset decodes (skipped)

    def add(self, other: HtmlStats) -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


@dataclasses.dataclass(frozen=True)
class ImageReference:
    """One image used by a page with one caption; ``position`` numbers the page's ``<img>`` elements."""

    image: str  # the image URL, resolved against the page and its <base href>
    position: int
    kind: str  # one of KINDS
    caption: str  # preprocessed (§4.5.1)


@dataclasses.dataclass(frozen=True)
class PageReferences:
    """A page's references, in the order of its images, and its ``<html lang>`` (lower case; "" if none)."""

    language: str
    references: tuple[ImageReference, ...]


def preprocess_caption(text: str) -> str:
    """§4.5.1: line breaks removed, non-printable characters deleted, runs of whitespace reduced to one space.

    A line break becomes a space (as a browser shows it), so that the words on either side stay apart;
    Unicode spaces (no-break space, …) count as whitespace; the zero-width joiner is kept, as it
    shapes scripts and emoji. The ends are trimmed.
    """
    text = text.translate(_BREAKS)
    if not text.isprintable():
        text = "".join(_printable(char) for char in text)
    return " ".join(text.split())


def _codec(label: str | None) -> str | None:
    """Python's name of a charset label, or None for a label it does not know."""
    if not label:
        return None
    try:
        return codecs.lookup(label.strip().strip("\"'")).name
    except LookupError:
        return None


def meta_charset(payload: bytes) -> str | None:
    """The charset label a ``<meta charset>`` or ``<meta http-equiv="content-type">`` names in the
    first 1,024 bytes (the HTML standard's prescan), read by the parser as Latin-1 (ASCII-compatible)."""
    head = LexborHTMLParser(payload[:PRESCAN_BYTES].decode("latin-1"))
    for meta in head.css("meta"):
        attributes = meta.attributes
        if attributes.get("charset"):
            return attributes["charset"]
        if (attributes.get("http-equiv") or "").strip().lower() == "content-type":
            for parameter in (attributes.get("content") or "").split(";"):
                name, _, value = parameter.partition("=")
                if name.strip().lower() == "charset" and value.strip():
                    return value.strip()
    return None


def decode_page(payload: bytes, header_charset: str | None, stats: HtmlStats) -> str:
    """The page's text: its byte-order mark, else the HTTP header's charset, else the ``<meta>``'s,
    else the one ``charset-normalizer`` detects. A named charset decodes as browsers do (bytes that do
    not fit become U+FFFD); a named charset Python does not know is counted and the next source asked.
    A page nothing decodes raises :class:`Undecodable` (counted)."""
    for bom, codec in _BOMS:
        if payload.startswith(bom):
            stats.charset_bom += 1
            return payload[len(bom) :].decode(codec, errors="replace")
    for label, counter in ((header_charset, "charset_header"), (None, "charset_meta")):
        if counter == "charset_meta":
            label = meta_charset(payload)
        codec = _codec(label)
        if label and codec is None:
            stats.unknown_charsets += 1
        if codec is not None and codec not in {"utf-16", "utf-16-le", "utf-16-be", "utf-32"}:
            setattr(stats, counter, getattr(stats, counter) + 1)
            return payload.decode(codec, errors="replace")
    from charset_normalizer import from_bytes  # imported here: only pages that name no charset need it

    best = from_bytes(payload).best()
    if best is None:
        stats.undecodable_pages += 1
        raise Undecodable("no charset is named, and none decodes the page")
    stats.charset_detected += 1
    return str(best)


def _nearest(node: LexborNode, tag: str) -> LexborNode | None:
    """The closest ancestor of ``node`` with the tag."""
    parent = node.parent
    while parent is not None and parent.tag != tag:
        parent = parent.parent
    return parent


def _same(first: LexborNode | None, second: LexborNode | None) -> bool:
    return first is not None and second is not None and first.mem_id == second.mem_id


def node_text(node: LexborNode) -> str:
    """The text a reader sees in ``node``: scripts, styles and comments left out, a line break for
    ``<br>`` and around blocks (preprocessing turns them into spaces)."""
    parts: list[str] = []
    stack: list[LexborNode | str] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if item.is_text_node:
            parts.append(item.text_content or "")
            continue
        tag = item.tag
        if tag in _SKIPPED_TEXT:
            continue
        if tag == "br":
            parts.append("\n")
            continue
        children = list(item.iter(include_text=True))
        if tag in _BLOCKS and item is not node:
            stack.append("\n")
            stack.extend(reversed(children))
            stack.append("\n")
        else:
            stack.extend(reversed(children))
    return "".join(parts)


def _images(node: LexborNode, owner: str, owner_node: LexborNode) -> list[LexborNode]:
    """The ``<img>`` elements of ``node`` whose closest ``owner`` ancestor is ``owner_node``."""
    return [img for img in node.css("img") if _same(_nearest(img, owner), owner_node)]


def _table_rows(table: LexborNode) -> Iterator[LexborNode]:
    """A table's own rows: its ``<tr>`` children and those of its row groups, not those of nested tables."""
    for child in table.iter():
        if child.tag == "tr":
            yield child
        elif child.tag in {"thead", "tbody", "tfoot"}:
            yield from (row for row in child.iter() if row.tag == "tr")


def _caption_table(table: LexborNode) -> tuple[LexborNode, LexborNode] | None:
    """The image and caption cell of a single-column two-cell table whose top cell holds one image
    and whose bottom cell none; None for any other table."""
    rows = list(_table_rows(table))
    if len(rows) != 2:
        return None
    cells = [[cell for cell in row.iter() if cell.tag in {"td", "th"}] for row in rows]
    if any(len(row) != 1 for row in cells):
        return None
    top, bottom = cells[0][0], cells[1][0]
    images = _images(top, "table", table)
    if len(images) != 1 or _images(bottom, "table", table):
        return None
    return images[0], bottom


def _resolve(src: str | None, base: str, stats: HtmlStats) -> str | None:
    """An ``src`` as an absolute http(s) URL, or None (counted)."""
    src = (src or "").strip(" \t\n\r\f")
    if not src:
        stats.no_src += 1
        return None
    if src[:5].lower() == "data:":
        stats.data_uris += 1
        return None
    try:
        url = urljoin(base, src)
    except ValueError:
        url = ""
    scheme, colon, _ = url.partition(":")  # urljoin leaves a scheme only where one was given or inherited
    scheme = scheme.lower() if colon else ""
    if scheme not in {"http", "https"}:
        stats.unusable_urls += 1
        return None
    return url


def extract_references(text: str, page_url: str, stats: HtmlStats) -> PageReferences:
    """The image references of one decoded page, each image's kinds in :data:`KINDS` order.

    A caption empty after :func:`preprocess_caption` is counted and left out, as is one with U+FFFD.
    """
    stats.pages += 1
    tree = LexborHTMLParser(text)
    html = tree.root
    language = ((html.attributes.get("lang") if html is not None else None) or "").strip().lower()
    # one walk of the tree finds every element the references come from, in document order
    images, figures, tables, bases = [], [], [], []
    wanted = {"img": images, "figure": figures, "table": tables, "base": bases}
    for element in tree.css("img, figure, table, base[href]"):
        wanted[element.tag].append(element)
    base = page_url
    if bases:
        try:
            base = urljoin(page_url, (bases[0].attributes.get("href") or "").strip())
        except ValueError:
            base = page_url
    stats.images += len(images)
    position = {img.mem_id: number for number, img in enumerate(images)}
    found: dict[int, dict[str, str]] = {}  # position → kind → raw caption

    for figure in figures:
        captions = [child for child in figure.iter() if child.tag == "figcaption"]
        own = _images(figure, "figure", figure)
        if not captions or not own:
            continue
        if len(own) > 1:
            stats.figures_with_several_images += 1
            continue
        found.setdefault(position[own[0].mem_id], {})["figure"] = node_text(captions[0])
    for table in tables:
        match = _caption_table(table)
        if match is not None:
            found.setdefault(position[match[0].mem_id], {})["table"] = node_text(match[1])
    references: list[ImageReference] = []
    for number, img in enumerate(images):
        kinds = found.get(number, {})
        alt = img.attributes.get("alt")
        if alt is not None:
            kinds["alt"] = alt
        if not kinds:
            continue
        url = _resolve(img.attributes.get("src"), base, stats)
        if url is None:
            continue
        for kind in KINDS:
            if kind not in kinds:
                continue
            caption = preprocess_caption(kinds[kind])
            if not caption:
                stats.empty_captions += 1
            elif "\ufffd" in caption:
                stats.damaged_captions += 1
            else:
                setattr(stats, kind, getattr(stats, kind) + 1)
                references.append(ImageReference(url, number, kind, caption))
    return PageReferences(language, tuple(references))
