"""Stage 2: find the image references in a page's wikitext.

Three kinds of reference are recognised (the ``source`` of a reference):

* ``link`` – the extended image syntax ``[[File:Name.jpg|thumb|alt=…|Caption]]``;
* ``infobox`` – ``{{Infobox …|image=…|caption=…|alt=…}}`` and its numbered keys;
* ``gallery`` – lines of a ``<gallery>`` block (the paper skipped these).

Parsing every page with mwparserfromhell is slow, and most of a page is not an
image. A regular-expression pre-scan finds the start of each candidate, a
bracket counter finds its end and splits it on its top-level pipes, and only
the caption and alt texts go to mwparserfromhell (in :mod:`builder.cleaning`).
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Iterable
from urllib.parse import unquote

from builder.cleaning import clean_caption

DEFAULT_FILE_ALIASES = ("File", "Image")
MAX_SPAN = 20_000  # characters; a longer "image" is an unclosed bracket, not a caption

_KEYWORD_OPTIONS = frozenset(
    "thumb thumbnail frame framed frameless border left right center centre none upright baseline middle "
    "sub super text-top text-bottom top bottom loop muted noicon noplayer".split()
)
_KEYED_OPTIONS = frozenset(
    "upright thumb thumbnail link alt class page lang start end thumbtime disablecontrols".split()
)
_SIZE_OPTION = re.compile(r"^\s*(\d+\s*)?(x\s*\d+\s*)?px\s*$", re.IGNORECASE)
_KEYED_OPTION = re.compile(r"^\s*([a-z]+)\s*=", re.IGNORECASE)
_INFOBOX_KEY = re.compile(r"^(image|caption|alt)(\d*)$")
_FILE_EXTENSION = re.compile(r"\.[A-Za-z0-9]{2,5}$")
_BRACKETS = re.compile(r"\[\[|\]{2,}|\{\{|\}\}")
_HIDDEN = re.compile(
    r"<!--.*?(?:-->|\Z)|<(nowiki|pre|math|syntaxhighlight|source)\b[^>]*?>.*?(?:</\1\s*>|\Z)", re.S | re.I
)
_GALLERY = re.compile(r"<gallery\b[^>]*>(.*?)</gallery\s*>", re.S | re.I)
_PIPES_AND_BRACKETS = re.compile(r"\[\[|\]{2,}|\{\{|\}\}|\|")
_INFOBOX_START = re.compile(r"\{\{\s*infobox\b", re.I)


class ExtractionError(Exception):
    """Wikitext that the parser cannot handle; the message names the page."""


@dataclasses.dataclass(frozen=True)
class ImageReference:
    """One use of an image on a page, with its cleaned caption and alternative text."""

    file: str
    caption: str
    alt: str
    source: str
    position: int = 0


@dataclasses.dataclass
class ExtractStats:
    """Counts of what extraction found and what it had to leave out."""

    references: int = 0
    unclosed: int = 0
    unparsed: int = 0
    failed_pages: int = 0
    repeated_in_history: int = 0

    def add(self, other: ExtractStats) -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def normalize_title(raw: str, aliases: Iterable[str] = DEFAULT_FILE_ALIASES, bare: bool = False) -> str | None:
    """Canonical ``File:Name`` for an image title, or None if ``raw`` is not one.

    The paper's image identity: every file prefix becomes ``File:``, underscores
    become spaces, URL escapes and HTML entities are decoded, whitespace is collapsed
    and the first letter of the name is upper-cased. ``bare`` accepts a name without
    prefix (as infoboxes write it) when it ends in a file extension.
    """
    text = unquote(html.unescape(raw)).replace("_", " ").replace("\u200e", "").replace("\u200f", "")
    text = " ".join(text.split())
    prefix, sep, name = text.partition(":")
    if sep and prefix.strip().casefold() in {alias.casefold() for alias in aliases}:
        name = name.strip()
    elif bare and _FILE_EXTENSION.search(text):
        name = text
    else:
        return None
    if not name or any(char in name for char in "[]{}|<>"):
        return None
    return "File:" + name[0].upper() + name[1:]


def _hide_inert_markup(text: str) -> str:
    """Blank out comments and <nowiki>-like blocks, keeping every offset in place."""
    if "<" not in text:
        return text
    return _HIDDEN.sub(lambda match: " " * (match.end() - match.start()), text)


def _span_end(text: str, start: int, opening: str) -> int | None:
    """End offset of the bracket group opened at ``start`` (``[[`` or ``{{``), if it closes.

    A run of closing square brackets is read from its end: in ``]]]`` the first
    bracket closes an external link ``[http://… label]`` and the last two a wikilink.
    """
    depth = 0
    limit = min(len(text), start + MAX_SPAN)
    for match in _BRACKETS.finditer(text, start, limit):
        token = match.group()
        if token == opening:
            depth += 1
            continue
        if opening == "[[" and token[0] == "]":
            closes = len(token) // 2
            if depth <= closes:
                return match.start() + len(token) % 2 + 2 * depth
            depth -= closes
        elif opening == "{{" and token == "}}":
            depth -= 1
            if depth == 0:
                return match.end()
    return None


def split_top_level(text: str) -> list[str]:
    """Split on the pipes of the top level only: pipes in nested links and templates stay."""
    pieces = []
    depth = 0
    last = 0
    for match in _PIPES_AND_BRACKETS.finditer(text):
        token = match.group()
        if token == "|":
            if depth == 0:
                pieces.append(text[last : match.start()])
                last = match.end()
        elif token in ("[[", "{{"):
            depth += 1
        else:
            depth = max(0, depth - (len(token) // 2 if token[0] == "]" else 1))
    pieces.append(text[last:])
    return pieces


def _is_option(segment: str) -> bool:
    stripped = segment.strip()
    if stripped.casefold() in _KEYWORD_OPTIONS or _SIZE_OPTION.match(stripped):
        return True
    keyed = _KEYED_OPTION.match(stripped)
    return keyed is not None and keyed.group(1).casefold() in _KEYED_OPTIONS


def _caption_and_alt(segments: list[str]) -> tuple[str, str]:
    """The caption is the last segment that is not an option; ``alt=`` gives the alt text."""
    caption = ""
    alt = ""
    for segment in segments:
        if not _is_option(segment):
            caption = segment
        elif segment.strip()[:3].casefold() == "alt":
            alt = segment.split("=", 1)[1]
    return clean_caption(caption), clean_caption(alt)


class _Extractor:
    """Collects the references of one page; one instance per page."""

    def __init__(self, text: str, aliases: tuple[str, ...], stats: ExtractStats) -> None:
        self.text = _hide_inert_markup(text)
        self.aliases = aliases
        self.stats = stats
        self.claimed: set[int] = set()
        self.references: list[ImageReference] = []
        names = "|".join(re.escape(alias) for alias in aliases)
        self._link_start = re.compile(r"\[\[[ \t]*(?:" + names + r")[ \t]*:", re.I)

    def run(self) -> list[ImageReference]:
        if "{{" in self.text:
            self._infoboxes()
        if "<" in self.text:
            self._galleries()
        if "[[" in self.text:
            self._links()
        self.references.sort(key=lambda reference: reference.position)
        self.stats.references += len(self.references)
        return self.references

    def _add(self, file: str | None, caption: str, alt: str, source: str, position: int) -> None:
        if file is None:
            self.stats.unparsed += 1
            return
        self.references.append(ImageReference(file, caption, alt, source, position))

    def _links(self) -> None:
        for match in self._link_start.finditer(self.text):
            start = match.start()
            if start in self.claimed:
                continue
            end = _span_end(self.text, start, "[[")
            if end is None:
                self.stats.unclosed += 1
                continue
            file, caption, alt = self._link(self.text[start + 2 : end - 2])
            self._add(file, caption, alt, "link", start)

    def _link(self, inner: str) -> tuple[str | None, str, str]:
        """File, caption and alt text of the inside of ``[[File:…|…]]``."""
        title, *options = split_top_level(inner)
        caption, alt = _caption_and_alt(options)
        return normalize_title(title, self.aliases), caption, alt

    def _infoboxes(self) -> None:
        for match in _INFOBOX_START.finditer(self.text):
            end = _span_end(self.text, match.start(), "{{")
            if end is None:
                self.stats.unclosed += 1
                continue
            self._infobox(match.start(), end)

    def _infobox(self, start: int, end: int) -> None:
        fields: dict[str, dict[str, str]] = {}
        for parameter in split_top_level(self.text[start + 2 : end - 2])[1:]:
            name, equals, value = parameter.partition("=")
            key = _INFOBOX_KEY.match(name.strip().casefold()) if equals else None
            if key is not None:
                fields.setdefault(key.group(2), {})[key.group(1)] = value
        for number in sorted(fields, key=lambda n: int(n or 0)):
            if fields[number].get("image", "").strip():
                self._infobox_image(fields[number], start, end)

    def _infobox_image(self, field: dict[str, str], start: int, end: int) -> None:
        """The image value is a bare name, a ``File:`` title, or a whole ``[[File:…]]``."""
        value = field["image"].strip()
        caption = clean_caption(field.get("caption", ""))
        alt = clean_caption(field.get("alt", ""))
        link = self._link_start.search(value)
        if link is not None:
            link_end = _span_end(value, link.start(), "[[")
            if link_end is None:
                self.stats.unclosed += 1
                return
            file, link_caption, link_alt = self._link(value[link.start() + 2 : link_end - 2])
            position = self.text.find(value[link.start() : link_end], start, end)
            self.claimed.add(position)
            self._add(file, caption or link_caption, alt or link_alt, "infobox", position)
        elif "{{" in value or "[[" in value:
            self.stats.unparsed += 1
        else:
            self._add(normalize_title(value, self.aliases, bare=True), caption, alt, "infobox", start)

    def _galleries(self) -> None:
        for match in _GALLERY.finditer(self.text):
            offset = match.start(1)
            for line in match.group(1).split("\n"):
                if line.strip():
                    name, *options = split_top_level(line)
                    caption, alt = _caption_and_alt(options)
                    self._add(normalize_title(name.strip(), self.aliases, bare=True), caption, alt, "gallery", offset)
                offset += len(line) + 1


def extract_images(
    wikitext: str,
    title: str = "",
    file_aliases: Iterable[str] = DEFAULT_FILE_ALIASES,
    stats: ExtractStats | None = None,
) -> list[ImageReference]:
    """All image references of a page, in page order, with cleaned caption and alt text.

    ``file_aliases`` are the names of the File namespace (``File``, ``Image`` and, for
    other languages, the dump's localized name). ``title`` names the page in errors.
    """
    aliases = tuple(dict.fromkeys(file_aliases))
    extractor = _Extractor(wikitext, aliases, stats if stats is not None else ExtractStats())
    try:
        return extractor.run()
    except (RecursionError, ValueError, IndexError) as error:
        raise ExtractionError(f"page {title!r}: cannot extract images ({type(error).__name__}: {error})") from error
