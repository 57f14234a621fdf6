"""Wikipedia-shaped multistream dumps of any size, from real page text, for the scale benchmark.

The full English dump cannot be fetched here, so :mod:`benchmarks.scale` measures how
cost grows on dumps shaped like it:

* page text: the real articles of the enwiki excerpt in the gensim wheel and of the
  embedded sample, cycled in order (so a bz2 block never holds the same page twice and
  the compression ratio stays that of real text), their own image markup made inert;
* image references: the counts of the paper's Table 3, step 0 – 1.64 references per
  image, 20.9% of images referenced ≥ 2 times, 2.3% ≥ 5 times, 0.5% > 10 times (flags
  and icons, a heavy tail) – at the density of the real dump (7.38 million references
  in about 90 GB of XML: one per 12 KB);
* references: 81% extended image syntax, 19% template parameters (infoboxes and
  ``{{multiple image}}``; the paper's infobox heuristic added 24%); 60% carry a caption,
  15% an alternative text; captions are real cleaned captions of the same pages, one
  in three references repeats its image's first caption (central reuse), some with a
  year appended (a near-duplicate);
* layout: Wikimedia's ``pages-articles-multistream`` – 100 pages per bz2 stream, with the
  ``…-multistream-index.txt.bz2`` of ``offset:page_id:title`` lines beside it.

Everything is drawn from one seeded generator: the same arguments write the same bytes.
"""

from __future__ import annotations

import bz2
import dataclasses
import json
import multiprocessing
import random
import re
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

from builder.data.make_sample import HEADER
from builder.data.make_sample import OUTPUT as SAMPLE_PATH
from builder.extract.wikitext import extract_images
from builder.sources.xml import DumpReader

PAGES_PER_STREAM = 100
VERSION = 2  # of the generator: a cached dump written by another version is written anew
XML_BYTES_PER_REFERENCE = 12_000
SHARE_TEMPLATE = 0.19
SHARE_CAPTIONED = 0.60
SHARE_ALT = 0.15
SHARE_REUSED_CAPTION = 0.33
SHARE_NEAR_DUPLICATE = 0.10

# Table 3, step 0: 4,508,808 images; 941,339 with ≥ 2 references, 102,046 with ≥ 5, 22,581 with > 10.
_SHARE_GE2 = 941_339 / 4_508_808
_SHARE_GE5 = 102_046 / 4_508_808
_SHARE_GT10 = 22_581 / 4_508_808
_SMALL = ((2, 0.72), (3, 0.20), (4, 0.08))  # mean 2.36, so that steps 1–2 keep 2.71 references per image
_MEDIUM = ((5, 0.32), (6, 0.22), (7, 0.15), (8, 0.12), (9, 0.10), (10, 0.09))
_TAIL_ALPHA = 1.25  # Pareto tail from 11; Table 3: 1.32 million references on the 22,581 images above 10
_TAIL_CAP = 20_000

_INERT = (
    (re.compile(r"\[\[(\s*)(?:file|image)(\s*):", re.IGNORECASE), r"[[\1Wikipedia\2:"),
    (re.compile(r"^(\s*\|\s*)(image|caption|alt)(\d*)(\s*=)", re.IGNORECASE | re.MULTILINE), r"\1x\2\3\4"),
    (re.compile(r"(\|\s*)(image|caption|alt)(\d*)(\s*=)", re.IGNORECASE), r"\1x\2\3\4"),
    (re.compile(r"<(/?)gallery\b", re.IGNORECASE), r"<\1div"),
)
_TEMPLATES = ("Infobox building", "Infobox person", "Infobox settlement", "Taxobox", "Infobox artwork")
_OPTIONS = ("", "upright|", "220px|", "left|", "right|upright=1.2|")
_WORD = re.compile(r"\b[A-Z][a-z]{3,}\b")
_COMMENT_TOKEN = re.compile(r"<!--|-->")


@dataclasses.dataclass(frozen=True)
class Shape:
    """What a synthetic dump holds, for the benchmark's report."""

    path: Path
    index: Path
    xml_bytes: int
    bz2_bytes: int
    pages: int
    references: int
    images: int


def reference_count(rng: random.Random) -> int:
    """How often one image is referenced, drawn from Table 3's distribution."""
    draw = rng.random()
    if draw >= _SHARE_GE2:
        return 1
    if draw < _SHARE_GT10:
        return min(_TAIL_CAP, int(11 * (1 - rng.random()) ** (-1 / _TAIL_ALPHA)))
    if draw < _SHARE_GE5:
        return _weighted(rng, _MEDIUM)
    return _weighted(rng, _SMALL)


def _weighted(rng: random.Random, table: tuple[tuple[int, float], ...]) -> int:
    values, weights = zip(*table, strict=True)
    return rng.choices(values, weights)[0]


def real_pages() -> list[tuple[str, str]]:
    """(title, wikitext) of the real articles, their image markup made inert."""
    import gensim

    excerpt = Path(gensim.__file__).parent / "test" / "test_data"
    excerpt /= "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    pages = []
    for dump in (excerpt, SAMPLE_PATH):
        for page in DumpReader(dump, (0,)):
            text = page.text
            for pattern, replacement in _INERT:
                text = pattern.sub(replacement, text)
            if extract_images(text, page.title):
                raise RuntimeError(f"{page.title}: image markup left after making it inert")
            pages.append((page.title, text))
    return pages


def real_captions() -> list[str]:
    """The distinct cleaned captions of the same real pages: the caption vocabulary and lengths."""
    import gensim

    excerpt = Path(gensim.__file__).parent / "test" / "test_data"
    excerpt /= "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    captions: dict[str, None] = {}
    for dump in (excerpt, SAMPLE_PATH):
        for page in DumpReader(dump, (0,)):
            for reference in extract_images(page.text, page.title):
                if reference.caption:
                    captions[reference.caption] = None
    return list(captions)


class _References:
    """Image slots in a seeded random order, with each image's captions decided on first use.

    All slots are dealt before the dump is written, so every image gets all its references;
    only when the pages ask for more than expected is a small extra deal made.
    """

    def __init__(self, expected: int, captions: list[str], rng: random.Random) -> None:
        self.rng = rng
        self.captions = captions
        self.images = 0
        self.slots: list[int] = []
        self.first_caption: dict[int, str] = {}
        self.used: set[int] = set()
        self.placed = 0
        self._deal(expected)

    def _deal(self, total: int) -> None:
        """Draw images until ``total`` references, in a shuffled order (served from the end)."""
        slots: list[int] = []
        while len(slots) < total:
            slots.extend([self.images] * reference_count(self.rng))
            self.images += 1
        self.rng.shuffle(slots)
        self.slots = slots + self.slots

    def next(self) -> tuple[str, str, str]:
        """File name, caption wikitext and alt text of the next reference ("" when absent)."""
        if not self.slots:
            self._deal(1_000)
        image = self.slots.pop()
        self.used.add(image)
        self.placed += 1
        name = f"Scale image {image:08d}.jpg"
        caption = ""
        if self.rng.random() < SHARE_CAPTIONED:
            caption = self._caption(image)
        alt = self.rng.choice(self.captions) if self.rng.random() < SHARE_ALT else ""
        return name, caption, alt

    def _caption(self, image: int) -> str:
        first = self.first_caption.get(image)
        if first is None:
            first = self.first_caption[image] = self._linked(self.rng.choice(self.captions))
            return first
        draw = self.rng.random()
        if draw < SHARE_NEAR_DUPLICATE:
            return f"{first} ({self.rng.randint(1900, 2022)})"
        if draw < SHARE_REUSED_CAPTION:
            return first
        return self._linked(self.rng.choice(self.captions))

    def _linked(self, caption: str) -> str:
        """Real captions link their names: wrap one capitalised word in ``[[…]]`` half of the time."""
        words = list(_WORD.finditer(caption))
        if not words or self.rng.random() < 0.5:
            return caption
        word = self.rng.choice(words)
        return f"{caption[: word.start()]}[[{word.group()}]]{caption[word.end() :]}"


def _link(name: str, caption: str, alt: str, rng: random.Random) -> str:
    alt_part = f"alt={alt}|" if alt else ""
    return f"[[File:{name}|thumb|{rng.choice(_OPTIONS)}{alt_part}{caption}]]".replace("||", "|").replace("|]]", "]]")


def _template(references: list[tuple[str, str, str]], title: str, rng: random.Random) -> str:
    if len(references) == 1:
        name, caption, alt = references[0]
        return (
            f"{{{{{rng.choice(_TEMPLATES)}\n| name = {title}\n| image = {name}\n| caption = {caption}\n"
            f"| alt = {alt}\n| established = {rng.randint(1800, 2020)}\n}}}}\n"
        )
    lines = ["{{multiple image", "| align = right", "| total_width = 400"]
    for number, (name, caption, alt) in enumerate(references, 1):
        lines += [f"| image{number} = {name}", f"| alt{number} = {alt}", f"| caption{number} = {caption}"]
    return "\n".join(lines) + "\n}}\n"


def _page_text(text: str, count: int, references: _References, title: str, rng: random.Random) -> str:
    """The real text with ``count`` references placed at paragraph starts, templates first."""
    paragraphs = text.split("\n\n")
    markup = []
    remaining = count
    while remaining:
        if rng.random() < SHARE_TEMPLATE:
            size = 2 if remaining >= 2 and rng.random() < 0.3 else 1
            markup.append(_template([references.next() for _ in range(size)], title, rng))
            remaining -= size
        else:
            name, caption, alt = references.next()
            markup.append(_link(name, caption, alt, rng) + "\n")
            remaining -= 1
    open_places = _paragraphs_outside_comments(paragraphs)
    for piece in markup:
        at = rng.choice(open_places)
        paragraphs[at] = piece + paragraphs[at]
    return "\n\n".join(paragraphs)


def _paragraphs_outside_comments(paragraphs: list[str]) -> list[int]:
    """Paragraphs that do not start inside an HTML comment (real pages comment out whole paragraphs)."""
    places = []
    inside = False
    for index, paragraph in enumerate(paragraphs):
        if not inside:
            places.append(index)
        for token in _COMMENT_TOKEN.findall(paragraph):
            inside = token == "<!--"
    return places or [0]


def _page_xml(title: str, page_id: int, text: str) -> str:
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"    <revision>\n      <id>{page_id * 10}</id>\n      <timestamp>2022-09-01T00:00:00Z</timestamp>\n"
        f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(text.encode("utf-8"))}" xml:space="preserve">{escape(text)}</text>\n'
        f"    </revision>\n  </page>\n"
    )


def _streams(
    target_bytes: int, references: _References, rng: random.Random, bytes_per_reference: int = XML_BYTES_PER_REFERENCE
) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """The dump as XML chunks of 100 pages each, with (page_id, title) for the index."""
    pages = real_pages()
    yield HEADER.replace("{file_namespace}", "File"), []
    written = 0
    page_id = 10
    owed = 0.0
    chunk: list[str] = []
    listed: list[tuple[int, str]] = []
    while written < target_bytes:
        base_title, text = pages[(page_id - 10) % len(pages)]
        title = f"{base_title} ({(page_id - 10) // len(pages) + 1})"
        owed += len(text) / bytes_per_reference
        count = int(owed)
        owed -= count
        xml = _page_xml(title, page_id, _page_text(text, count, references, title, rng))
        chunk.append(xml)
        listed.append((page_id, title))
        written += len(xml)
        page_id += 1
        if len(chunk) == PAGES_PER_STREAM:
            yield "".join(chunk), listed
            chunk, listed = [], []
    if chunk:
        yield "".join(chunk), listed
    yield "</mediawiki>\n", []


def _compress(xml: str) -> bytes:
    return bz2.compress(xml.encode("utf-8"), compresslevel=9)


def write_dump(
    folder: Path,
    target_bytes: int,
    seed: int = 0,
    workers: int = 2,
    bytes_per_reference: int = XML_BYTES_PER_REFERENCE,
) -> Shape:
    """Write ``enwiki-…-pages-articles-multistream.xml.bz2`` of about ``target_bytes`` XML, with its index.

    ``bytes_per_reference`` sets the density of image references (the real dump's by default; an
    image-dense dump, such as a wiki of galleries and lists, has one per kB or less)."""
    folder.mkdir(parents=True, exist_ok=True)
    dense = "" if bytes_per_reference == XML_BYTES_PER_REFERENCE else f"-r{bytes_per_reference}"
    stem = f"enwiki-20220901-scale{target_bytes // 1_000_000}mb-s{seed}{dense}-pages-articles-multistream"
    path = folder / f"{stem}.xml.bz2"
    index = folder / f"{stem.replace('multistream', 'multistream-index')}.txt.bz2"
    described = folder / f"{stem}.json"
    if path.is_file() and index.is_file() and described.is_file():  # the same seed and size wrote the same bytes
        counts = json.loads(described.read_text(encoding="utf-8"))
        if counts.pop("version", None) == VERSION:
            return Shape(path, index, **counts)
    rng = random.Random(seed)
    references = _References(target_bytes // bytes_per_reference, real_captions(), rng)
    xml_bytes = pages = 0
    offset = 0
    with (
        multiprocessing.get_context("spawn").Pool(workers) as pool,
        open(path.with_suffix(".partial"), "wb") as out,
        bz2.open(index.with_suffix(".partial"), "wt", encoding="utf-8") as index_out,
    ):
        pending = []
        for xml, listed in _streams(target_bytes, references, rng, bytes_per_reference):
            xml_bytes += len(xml.encode("utf-8"))
            pages += len(listed)
            pending.append((pool.apply_async(_compress, (xml,)), listed))
            if len(pending) >= workers * 4:
                offset = _flush(pending.pop(0), out, index_out, offset)
        while pending:
            offset = _flush(pending.pop(0), out, index_out, offset)
    path.with_suffix(".partial").rename(path)
    index.with_suffix(".partial").rename(index)
    shape = Shape(path, index, xml_bytes, path.stat().st_size, pages, references.placed, len(references.used))
    counts = {field: getattr(shape, field) for field in ("xml_bytes", "bz2_bytes", "pages", "references", "images")}
    counts["version"] = VERSION
    described.write_text(json.dumps(counts), encoding="utf-8")
    return shape


def _flush(item: tuple, out, index_out, offset: int) -> int:  # noqa: ANN001 - file objects
    result, listed = item
    data = result.get()
    for page_id, title in listed:
        index_out.write(f"{offset}:{page_id}:{title}\n")
    out.write(data)
    return offset + len(data)
