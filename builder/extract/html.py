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
import contextlib
import dataclasses
import itertools
import re
import zlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

# §4.5.1's preprocessing lives with the rule for what a reader sees (builder.lang.text), where a build that needs no
# HTML parser (an image–caption dataset's) imports it; it stays importable from here.
from builder.lang.text import preprocess_caption

if TYPE_CHECKING:  # selectolax is imported where a page is parsed: a dataset build reads captions without it
    from selectolax.lexbor import LexborNode

__all__ = [
    "HtmlStats",
    "ImageReference",
    "KINDS",
    "MAX_DEPTH",
    "TooDeep",
    "Work",
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


class Undecodable(ValueError):
    """A page whose bytes no known charset decodes."""


class TooDeep(ValueError):
    """A page nested deeper than :data:`MAX_DEPTH` elements: an HTML5 parse of it takes time that grows faster
    than its size (100,000 levels: about a minute), so it is skipped before the parse."""


# Lexbor's time per element grows with the depth it works at (a page of sibling <div> 4,000 elements deep: 1.5 s per
# MB; 1,000 deep: 0.23 s per MB, about an article's 0.13-0.2), so a page nested deeper than this is skipped: its cost
# stays linear in its size with a constant near an ordinary page's (benchmarks/page_cost.py). Browsers cap the tree
# lower still (Blink: 512); the real archives' pages nest at most 19 deep.
MAX_DEPTH = 1024
# A page with no more tags than this is not scanned: it cannot nest much deeper than the bound, so its parse is short
SCAN_TAGS = MAX_DEPTH
# the elements an HTML5 parser closes without an end tag (void, or closed by their next sibling): none of them nests
_FLAT = (
    "area base br col embed hr img input link meta param source track wbr image keygen basefont bgsound frame "
    "p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption rt rp"
).split()
# elements whose text is no markup, read to their end tag (plaintext: to the end of the page)
_RAW = ("script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes")
_NAME_BYTES = 8  # tag names compared as big-endian numbers of their bytes (every name above fits in 8)


def _long_key(name: bytes) -> int:
    """The number of a tag name of more than 8 bytes: its CRC-32 and length, above every shorter name's number."""
    return (1 << 63) | (zlib.crc32(name) << 16) | len(name)


def _keys(names: Iterable[str]) -> list[int]:
    """Names as numbers (their bytes, big-endian; a longer name's :func:`_long_key`), sorted: names of different
    lengths never share a number, as every name starts with a letter."""
    return sorted(
        int.from_bytes(name.encode(), "big") if len(name) <= _NAME_BYTES else _long_key(name.encode()) for name in names
    )


_FLAT_KEYS = _keys(_FLAT)
_RAW_KEYS = _keys(_RAW)
_RAW_ENDS = {name: re.compile(f"</{name}".encode(), re.IGNORECASE) for name in _RAW}


def nesting_depth(text: str, scan_above: int = SCAN_TAGS, work: Work | None = None) -> int:
    """How deep a page's elements nest, estimated from its tags: never under the parser's depth for the elements
    that nest (an end tag with nothing open counts for nothing; a raw-text element's content holds no tag). A page
    of ``scan_above`` tags or fewer is not scanned (0). The tags are read by numpy, not one by one in Python: each
    tag's name is one number, looked up among the listed names' at once."""
    if text.count("<") <= scan_above:
        return 0
    import numpy as np

    data = text.encode("utf-8", "replace").lower()
    padded = data + b"\0" * (_NAME_BYTES + 2)
    octets = np.frombuffer(padded, np.uint8)
    # the 8 bytes from every position as one big-endian number (overlapping, unaligned reads of the one buffer)
    words = np.ndarray((len(data),), dtype=">u8", buffer=padded, strides=(1,))
    opens = np.flatnonzero(octets[: len(data)] == ord("<"))
    closing = octets[opens + 1] == ord("/")
    starts = opens + 1 + closing  # where each name begins
    first = octets[starts]
    tags = (first >= ord("a")) & (first <= ord("z"))
    opens, closing, starts = opens[tags], closing[tags], starts[tags]
    if work is not None:
        work.tags += len(opens)
    length = np.zeros(len(starts), dtype=np.int64)  # the name's length; 0: longer than 8
    ends_name = np.zeros(256, dtype=bool)
    ends_name[list(b"\t\n\x0c\r />")] = True
    for size in range(_NAME_BYTES, 0, -1):
        after = octets[starts + size]
        # a name runs to a space, "/" or ">", as the HTML tokenizer reads it (``<div.x>`` is no div)
        length = np.where(ends_name[after], size, length)
    keys = words[starts] >> (np.uint64(8) * (_NAME_BYTES - length).astype(np.uint64))
    keys[length == 0] = 0

    def named(sorted_keys: list[int]) -> np.ndarray:
        table = np.array(sorted_keys, dtype=np.uint64)
        return table[np.minimum(np.searchsorted(table, keys), len(table) - 1)] == keys

    # names of more than 8 bytes: a number of their own (CRC-32, length); a name of _LONG_NAME_BYTES or more (text
    # such as ``i<n;i++){…}`` in a script, read as far as it runs) is no name any end tag closes
    for number, index in enumerate(np.flatnonzero(length == 0).tolist()):
        name = _LONG_NAME.match(data, int(starts[index])).group()
        keys[index] = np.uint64(_long_key(name) if len(name) < _LONG_NAME_BYTES else (1 << 62) | number)
    inside, foreign, clean = _raw_and_foreign(data, opens, closing, starts, keys, named)
    # a void or sibling-closed element nests in svg and math, where HTML's rules for it do not hold; there an element
    # whose start tag ends in "/>" is closed at once (an icon's <path/>), where the parser is surely in svg content
    valid = (~named(_FLAT_KEYS) | foreign) & ~inside
    for index in np.flatnonzero(clean & ~closing & valid).tolist():
        valid[index] = not _self_closing(data, int(starts[index]))
    return _floored_depth(keys[valid], closing[valid])


_LONG_NAME_BYTES = 256
_LONG_NAME = re.compile(rb"[a-z][^\t\n\f\r />]{0,%d}" % (_LONG_NAME_BYTES - 1))
_SVG_MATH = _keys(("svg", "math"))
# the start tags that end svg and math content (the HTML standard's list, with font whatever its attributes)
_BREAKOUT = _keys(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu meta "
    "nobr ol p pre ruby s small span strong strike sub sup table tt u ul var font".split()
)
_TAG_TAIL = re.compile(rb"[\t\n\f\r ]*")
_ATTRIBUTE_NAME = re.compile(rb"[^\t\n\f\r />=]*")
_UNQUOTED = re.compile(rb"[^\t\n\f\r >]*")


def _self_closing(data: bytes, start: int) -> bool:
    """Whether the start tag whose name begins at ``start`` ends in "/>" as the HTML tokenizer reads it: quoted
    attribute values may hold ">" and "/>", an unquoted one ends at a space or ">" and may end in "/"."""
    position = _LONG_NAME.match(data, start).end()
    size = len(data)
    while True:
        position = _TAG_TAIL.match(data, position).end()
        if position >= size:
            return False  # the page ends in the tag: no element
        byte = data[position]
        if byte == 0x3E:  # ">"
            return False
        if byte == 0x2F:  # "/"
            if data[position + 1 : position + 2] == b">":
                return True
            position += 1
            continue
        position = _ATTRIBUTE_NAME.match(data, position + 1).end()
        position = _TAG_TAIL.match(data, position).end()
        if data[position : position + 1] != b"=":
            continue
        position = _TAG_TAIL.match(data, position + 1).end()
        quote = data[position : position + 1]
        if quote in (b'"', b"'"):
            end = data.find(quote, position + 1)
            if end < 0:
                return False
            position = end + 1
        elif quote != b">":
            position = _UNQUOTED.match(data, position).end()


_PLAINTEXT_KEY = _keys(("plaintext",))[0]
# where svg and math content is HTML again (HTML and MathML text integration points), by the numbers of their names
_INTEGRATION = {
    *_keys(("desc", "title", "mi", "mo", "mn", "ms", "mtext")),
    *(_long_key(name) for name in (b"foreignobject", b"annotation-xml")),
}


def _raw_and_foreign(data: bytes, opens, closing, starts, keys, named) -> tuple:  # noqa: ANN001 - numpy arrays
    """Which tags are text (within a raw-text element, or after ``<plaintext>``), which sit in svg or math content,
    and which of those surely in svg or math content (no breakout tag or integration point holding markup since the
    region began), read in order over the few tags that switch (raw-text and plaintext start tags, svg and math tags,
    integration points): a raw-text element is one only in HTML content (``<svg><title>`` holds markup, and a
    page that hid 120,000 nested ``<div>`` behind it took 27 s), so within svg or math its tags are counted. The
    reading errs only towards depth: an svg or math element ends at its end tag unless one of its integration
    points held markup (``<foreignObject><div>…``), after which the parser's place is not followed and the rest of
    the page is read as svg content."""
    import numpy as np

    inside = np.zeros(len(opens), dtype=bool)
    foreign = np.zeros(len(opens), dtype=bool)
    integration = named(sorted(_INTEGRATION))
    switch = named(_SVG_MATH) | (
        ~closing & (named(_RAW_KEYS) | (keys == _PLAINTEXT_KEY) | integration | named(_BREAKOUT))
    )
    clean = np.zeros(len(opens), dtype=bool)
    breakout = set(_BREAKOUT)
    svg_math = set(_SVG_MATH)
    raw = set(_RAW_KEYS)
    depth, lost, region, skip_to, lost_at = 0, False, 0, 0, 0
    for index in np.flatnonzero(switch).tolist():
        if index < skip_to:
            continue
        key = int(keys[index])
        if key in svg_math:
            if not closing[index] and not lost and _self_closing(data, int(starts[index])):
                inside[index] = True  # <svg/> is closed at once (counted for nothing), in HTML and svg content alike
                continue
            if not closing[index]:
                region = index if depth == 0 else region
                depth += 1
            elif depth and not lost:
                depth -= 1
                if depth == 0:
                    foreign[region : index + 1] = True
                    clean[region : index + 1] = True
            continue
        if depth:  # in svg or math: an integration point that holds no tag before its end tag is left cleanly
            if key in _INTEGRATION and not lost:
                follows = index + 1
                lost = not (follows < len(keys) and closing[follows] and int(keys[follows]) == key)
            elif key in breakout and not lost:
                lost = True
            if lost and not lost_at:
                lost_at = index
                clean[region:index] = True
            continue
        if key == _PLAINTEXT_KEY:
            inside[index + 1 :] = True
            break
        if key in raw:
            name = next(name for name in _RAW if data.startswith(name.encode(), int(starts[index])))
            end = _RAW_ENDS[name].search(data, int(opens[index]) + 1)
            skip_to = int(np.searchsorted(opens, end.start() if end else len(data)))
            inside[index + 1 : skip_to] = True
    if depth:
        foreign[region:] = True
        if not lost:
            clean[region:] = True
    return inside, foreign, clean


def _floored_depth(keys, closing) -> int:  # noqa: ANN001 - numpy arrays
    """The deepest point of a walk of start (+1) and end tags (−1), where an end tag counts only while an element of
    its name is open (a parser ignores ``</span>`` with no span open: ``<div></span>`` repeated nests), all at once:
    each name's walk held at 0 is its free walk less its lowest point so far (a running minimum per name, the names
    kept apart by offsets)."""
    import numpy as np

    if not len(keys):
        return 0
    steps = np.where(closing, -1, 1)
    order = np.argsort(keys, kind="stable")
    step = steps[order]
    group = np.concatenate(([0], np.cumsum(keys[order][1:] != keys[order][:-1])))
    total = np.cumsum(step)
    first = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    walk = total - (total[first] - step[first])[group]  # each name's own walk
    spread = 2 * len(walk) + 2
    lowest = np.minimum(np.minimum.accumulate(walk - group * spread) + group * spread, 0)
    held = walk - lowest
    before = np.concatenate(([0], held[:-1]))
    before[first] = 0
    counted = np.empty_like(step)
    counted[order] = np.where(step > 0, 1, np.where(held < before, -1, 0))
    return int(np.cumsum(counted).max(initial=0))


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
    too_deep_pages: int = 0  # pages nested deeper than MAX_DEPTH (skipped before the parse)

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


def _codec(label: str | None) -> str | None:
    """Python's codec for a charset label as the WHATWG Encoding Standard reads labels (browsers' table, through
    ``webencodings``), or None for a label that names no text encoding: ``base64``, ``rot13``, ``idna`` or a
    label holding a NUL are codecs Python knows, not charsets, and ``replacement`` decodes no page."""
    if not label:
        return None
    import webencodings

    encoding = webencodings.lookup(label.strip().strip("\"'"))
    if encoding is None or encoding.name == "replacement":
        return None
    return encoding.codec_info.name


def meta_charset(payload: bytes) -> str | None:
    """The charset label a ``<meta charset>`` or ``<meta http-equiv="content-type">`` names in the
    first 1,024 bytes (the HTML standard's prescan), read by the parser as Latin-1 (ASCII-compatible)."""
    from selectolax.lexbor import LexborHTMLParser

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


@dataclasses.dataclass
class Work:
    """The steps a page's reading took, counted where they happen: the tags the nesting scan read, and the tree
    nodes Python visited (ancestors of images, children of figures and tables, caption text). Deterministic, so a
    test can show that a page's work grows as its size does (no timing), and a benchmark can print it beside time."""

    tags: int = 0
    nodes: int = 0


_ROW_GROUPS = frozenset({"thead", "tbody", "tfoot"})
_Owners = tuple["LexborNode | None", "LexborNode | None", "LexborNode | None"]  # figure, table, cell


def _step(node: LexborNode, above: _Owners) -> _Owners:
    """What the descendants of ``node`` see as their closest figure and table, and the cell of that table's own
    rows that holds them, given what ``node`` itself sees (``above``)."""
    figure, table, cell = above
    tag = node.tag
    if tag == "figure":
        return node, table, cell
    if tag == "table":
        return figure, node, None
    if cell is None and table is not None and tag in ("td", "th"):
        row = node.parent
        group = row.parent if row is not None and row.tag == "tr" else None
        if group is not None and (
            _same(group, table) or (group.tag in _ROW_GROUPS and _same(group.parent, table))
        ):  # a cell of the table's own rows (builder.extract.html._table_rows), not of a nested table's
            return figure, table, node
    return above


def _owners(images: list[LexborNode], work: Work) -> list[_Owners]:
    """Each image's closest ``<figure>`` and ``<table>`` ancestors and, in that table, the cell of its own rows that
    holds the image: only they can caption it. One walk for all images: an ancestor's answer is kept (by node), so
    each ancestor is visited once however many images sit below it, and a page's cost stays linear in its size
    (walking from every image to the root took 24–41 s for 50,000 images 4,000 elements deep)."""
    known: dict[int, _Owners] = {}
    owners: list[_Owners] = []
    for image in images:
        path: list[LexborNode] = []
        node = image.parent
        while node is not None and node.mem_id not in known:
            path.append(node)
            node = node.parent
        above: _Owners = known[node.mem_id] if node is not None else (None, None, None)
        work.nodes += len(path) + 1
        for node in reversed(path):
            above = _step(node, above)
            known[node.mem_id] = above
        owners.append(above)
    return owners


def _same(first: LexborNode | None, second: LexborNode | None) -> bool:
    return first is not None and second is not None and first.mem_id == second.mem_id


def node_text(node: LexborNode, skip: frozenset[int] | set[int] = frozenset(), work: Work | None = None) -> str:
    """The text a reader sees in ``node``: scripts, styles and comments left out, a line break for
    ``<br>`` and around blocks (preprocessing turns them into spaces). A descendant in ``skip`` (by ``mem_id``)
    is left out with its text: another caption's figure or table, so that no text is read for two captions."""
    parts: list[str] = []
    stack: list[LexborNode | str] = [node]
    visited = 0
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        visited += 1
        if item.is_text_node:
            parts.append(item.text_content or "")
            continue
        tag = item.tag
        if tag in _SKIPPED_TEXT or (skip and item is not node and item.mem_id in skip):
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
    if work is not None:
        work.nodes += visited
    return "".join(parts)


def _table_rows(table: LexborNode) -> Iterator[LexborNode]:
    """A table's own rows: its ``<tr>`` children and those of its row groups, not those of nested tables."""
    for child in table.iter():
        if child.tag == "tr":
            yield child
        elif child.tag in _ROW_GROUPS:
            yield from (row for row in child.iter() if row.tag == "tr")


def _caption_cells(table: LexborNode, work: Work) -> tuple[LexborNode, LexborNode] | None:
    """The top and bottom cell of a single-column two-row table, or None for any other table (read no further
    than a third row or a second cell)."""
    rows = list(itertools.islice(_table_rows(table), 3))
    work.nodes += len(rows)
    if len(rows) != 2:
        return None
    cells = [list(itertools.islice((cell for cell in row.iter() if cell.tag in {"td", "th"}), 2)) for row in rows]
    work.nodes += sum(len(row) for row in cells)
    if any(len(row) != 1 for row in cells):
        return None
    return cells[0][0], cells[1][0]


class Resolver:
    """An image's ``src`` resolved against the page's URL (or its ``<base href>``) as browsers resolve it, by the
    WHATWG URL Standard (``ada_url``): a backslash is a slash in an http(s) URL (``\\img\\a.jpg`` is the host's
    ``/img/a.jpg``), tabs and newlines are removed, a host is written in ASCII. A base the standard cannot parse
    resolves nothing relative (an absolute ``src`` still resolves); a ``src`` that does not parse raises
    ``ValueError``. The result is the standard's serialization, which :func:`builder.filters.images.normalize_url`
    keys as both sides of a web build meet."""

    def __init__(self, base: str) -> None:
        import ada_url  # the web extra's, imported where a page is read

        self.base = base if ada_url.check_url(base) else None
        self._join = ada_url.join_url
        self._parse = ada_url.normalize_url

    def __call__(self, src: str) -> str:
        return self._parse(src) if self.base is None else self._join(self.base, src)


def _resolve(src: str | None, resolve: Resolver, stats: HtmlStats) -> str | None:
    """An ``src`` as an absolute http(s) URL, or None (counted)."""
    src = (src or "").strip(" \t\n\r\f")
    if not src:
        stats.no_src += 1
        return None
    if src[:5].lower() == "data:":
        stats.data_uris += 1
        return None
    try:
        url = resolve(src)
    except ValueError:
        url = ""
    scheme = url.partition(":")[0]  # the standard's serialization: a scheme, in lower case
    if scheme not in {"http", "https"}:
        stats.unusable_urls += 1
        return None
    return url


def extract_references(text: str, page_url: str, stats: HtmlStats, work: Work | None = None) -> PageReferences:
    """The image references of one decoded page, each image's kinds in :data:`KINDS` order.

    A caption empty after :func:`preprocess_caption` is counted and left out, as is one with U+FFFD. A page
    nested deeper than :data:`MAX_DEPTH` raises :class:`TooDeep` (counted) before it is parsed. The text of a
    caption leaves out the figures and tables inside it whose own caption is used (each text is read for one
    caption), so that the page's cost is linear in its size; ``work`` counts it.
    """
    work = work if work is not None else Work()
    if nesting_depth(text, work=work) > MAX_DEPTH:
        stats.too_deep_pages += 1
        raise TooDeep(f"nested more than {MAX_DEPTH:,} elements deep: not parsed")
    stats.pages += 1
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(text)
    html = tree.root
    language = ((html.attributes.get("lang") if html is not None else None) or "").strip().lower()
    # the images in document order; the figures and tables that can caption one are among their ancestors
    images = tree.tags("img")
    bases = [element for element in tree.tags("base") if "href" in element.attributes]
    resolve = Resolver(page_url)
    if bases:
        with contextlib.suppress(ValueError):  # an href that does not parse: the page's URL stays the base
            resolve = Resolver(resolve((bases[0].attributes.get("href") or "").strip()))
    stats.images += len(images)
    # each figure's and each table cell's own images (those it is the closest figure or table of), in page order
    figures: dict[int, tuple[LexborNode, list[int]]] = {}
    tables: dict[int, LexborNode] = {}
    in_cell: dict[int, list[int]] = {}
    for number, (figure, table, cell) in enumerate(_owners(images, work)):
        if figure is not None:
            figures.setdefault(figure.mem_id, (figure, []))[1].append(number)
        if table is not None:
            tables.setdefault(table.mem_id, table)
        if cell is not None:
            in_cell.setdefault(cell.mem_id, []).append(number)
    captions: dict[int, dict[str, LexborNode]] = {}  # position → kind → the caption's element
    owners: set[int] = set()  # the figures and tables whose caption is used
    for figure, own in figures.values():
        work.nodes += 1
        caption = None
        for child in figure.iter():
            work.nodes += 1
            if child.tag == "figcaption":
                caption = child
                break
        if caption is None:
            continue
        if len(own) > 1:
            stats.figures_with_several_images += 1
            continue
        captions.setdefault(own[0], {})["figure"] = caption
        owners.add(figure.mem_id)
    for table in tables.values():
        cells = _caption_cells(table, work)
        if cells is None:
            continue
        top, bottom = in_cell.get(cells[0].mem_id, []), in_cell.get(cells[1].mem_id, [])
        if len(top) == 1 and not bottom:
            captions.setdefault(top[0], {})["table"] = cells[1]
            owners.add(table.mem_id)
    found = {
        number: {kind: node_text(element, owners, work) for kind, element in kinds.items()}
        for number, kinds in captions.items()
    }
    references: list[ImageReference] = []
    for number, img in enumerate(images):
        kinds = found.get(number, {})
        alt = img.attributes.get("alt")
        if alt is not None:
            kinds["alt"] = alt
        if not kinds:
            continue
        url = _resolve(img.attributes.get("src"), resolve, stats)
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
