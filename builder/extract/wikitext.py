"""Find the image references in a page's wikitext: the input of Table 3's step 0.

Three kinds of reference are recognised (the ``source`` of a reference):

* ``link`` – the extended image syntax ``[[File:Name.jpg|thumb|alt=…|Caption]]``;
* ``template`` – the ``image``/``imageN`` parameters of any template, with ``captionN``
  and ``altN`` (``{{Infobox person|image=…}}``, ``{{multiple image|image1=…}}``, taxoboxes…),
  the paper's infobox heuristic as the authors' scanner applies it: to every template;
* ``gallery`` – lines of a ``<gallery>`` block (the paper skipped these).

Parsing every page with mwparserfromhell is slow, and most of a page is not an
image. One pass over the page's ``[[``, ``]]``, ``{{``, ``}}`` and ``|`` tokens pairs
every opener with its closer on a single stack, so every link and template is
located and split on its top-level pipes in time linear in the page size (vandalised
pages with thousands of unclosed brackets included). Only the caption and alt texts
go to mwparserfromhell (in :mod:`builder.extract.cleaning`).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import html
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

from builder.extract.cleaning import CaptionError, clean_caption, render_caption
from builder.extract.inline import CaptionRules, caption_rules
from builder.extract.parameters import ParameterGroup, template_parameters
from builder.lang.languages import ImageOption, Language

__all__ = [
    "DEFAULT_FILE_ALIASES",
    "ExtractStats",
    "ExtractionError",
    "ImageReference",
    "extract_images",
    "normalize_title",
]

DEFAULT_FILE_ALIASES = ("File", "Image")
MAX_SPAN = 20_000  # characters; a longer "image" link is an unclosed bracket, not a caption
MAX_TEMPLATE_NAME = 200  # characters kept of a template's name

_KEYWORD_OPTIONS = frozenset(
    "thumb thumbnail frame framed frameless border left right center centre none upright baseline middle "
    "sub super text-top text-bottom top bottom loop muted noicon noplayer".split()
)
_KEYED_OPTIONS = frozenset(
    "upright thumb thumbnail link alt class page lang start end thumbtime disablecontrols".split()
)
_SIZE_OPTION = re.compile(r"^\s*(\d+\s*)?(x\s*\d+\s*)?px\s*$", re.IGNORECASE)
_KEYED_OPTION = re.compile(r"^\s*([a-z]+)\s*=", re.IGNORECASE)
_FILE_EXTENSION = re.compile(r"\.[A-Za-z0-9]{2,5}$")
# "[[", "]]", "{{", "}}"; the leading class lets the regex engine skip plain text fast.
_TOKENS = re.compile(r"[\[\]{}](?:(?<=\[)\[|(?<=\])\]|(?<=\{)\{|(?<=\})\})")
_CLOSING_RUN = re.compile(r"\]+")
# Extension tags whose content MediaWiki's preprocessor skips when it pairs brackets, and that hold no
# caption text: a footnote's markup cannot close a caption's link (the cleaner drops footnotes anyway).
_INERT_TAGS = (
    "nowiki|pre|math|syntaxhighlight|source|timeline|score|hiero|chem|ce|graph|templatedata|templatestyles|"
    "ref|references|imagemap|inputbox|categorytree|mapframe|maplink"
)
_INERT_OPEN = re.compile(r"<!--|<(" + _INERT_TAGS + r"|gallery)\b[^<>]*>", re.IGNORECASE)
_INERT_CLOSE = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in (_INERT_TAGS + "|gallery").split("|")}
_INFOBOX_NAME = re.compile(r"\{\{\s*infobox\b", re.IGNORECASE)
_OPENERS = {"]]": "[[", "}}": "{{"}
_INVALID_NAME = re.compile(r"[\[\]{}<>|]")


@dataclasses.dataclass
class MarkupScan:
    """What one parse saw of a page's markup: its bracket tokens (over its text with comments, inert tags and gallery
    contents blanked), the stretches blanked or read as a gallery and the openers met with no closer
    (:func:`_inert_markup`)."""

    tokens: _Tokens
    regions: list[tuple[int, int, int, int, str]]
    unclosed: list[tuple[int, str]]


class ExtractionError(Exception):
    """Wikitext that the parser cannot handle; the message names the page."""


@dataclasses.dataclass(frozen=True)
class ImageReference:
    """One use of an image on a page, with its cleaned caption and alternative text.

    ``template`` names the template whose image parameter holds the image (``source``
    ``template``), so that its kind (infobox, multiple image, taxobox…) stays known.
    """

    file: str
    caption: str
    alt: str
    source: str
    position: int = 0
    template: str = ""
    parameters: str = ""  # the template's parameter names that gave it, as written: "Bild1/Untertitel1"


@dataclasses.dataclass
class ExtractStats:
    """Counts of what extraction found and what it had to leave out."""

    references: int = 0
    unclosed: int = 0
    unparsed: int = 0
    failed_pages: int = 0
    captions_dropped: int = 0
    repeated_in_history: int = 0
    invalid_utf8_captions: int = 0  # captions and alt texts dropped for a U+FFFD, the mark of invalid bytes
    # the no-hole rule: captions and alt texts dropped for a template nothing renders, and those templates' titles
    captions_with_an_unrendered_template: int = 0
    unrendered_templates: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, other: ExtractStats) -> None:
        mine, theirs = self.__dict__, other.__dict__  # once per revision of a history: no attribute lookups
        for name in _STAT_COUNTS:
            mine[name] += theirs[name]
        for title, count in other.unrendered_templates.items():
            self.unrendered_templates[title] = self.unrendered_templates.get(title, 0) + count

    def subtract(self, other: ExtractStats) -> None:
        """Take away counts that :meth:`add` added (a revision's span parsed again, in a history)."""
        mine, theirs = self.__dict__, other.__dict__
        for name in _STAT_COUNTS:
            mine[name] -= theirs[name]
        for title, count in other.unrendered_templates.items():
            left = self.unrendered_templates.get(title, 0) - count
            if left:
                self.unrendered_templates[title] = left
            else:
                self.unrendered_templates.pop(title, None)


_STAT_COUNTS = tuple(field.name for field in dataclasses.fields(ExtractStats) if field.type == "int")


def _visible(char: str) -> str:
    """Whitespace becomes a space; invisible format and control characters (BOM, ZWSP, LRM, NUL) go."""
    if char.isspace():
        return " "
    return "" if unicodedata.category(char) in ("Cc", "Cf") else char


def normalize_title(raw: str, aliases: Iterable[str] = DEFAULT_FILE_ALIASES, bare: bool = False) -> str | None:
    """Canonical ``File:Name`` for an image title, or None if ``raw`` is not one.

    The paper's image identity: every file prefix becomes ``File:``, underscores
    become spaces, URL escapes and HTML entities are decoded, invisible characters
    are dropped, whitespace is collapsed and the first letter of the name is
    upper-cased. ``bare`` accepts a name without prefix (as templates write it)
    when it ends in a file extension.
    """
    text = unquote(html.unescape(raw)).replace("_", " ")
    if not text.isprintable():
        text = "".join(_visible(char) for char in text)
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


def _blank(pieces: list[str], text: str, start: int, end: int) -> None:
    """Append ``text[start:end]`` as spaces, newlines kept, so that every offset stays in place."""
    pieces.append("\n".join(" " * len(line) for line in text[start:end].split("\n")))


def _inert_markup(
    text: str,
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int, int, int, str]], list[tuple[int, str]]]:
    """Blank out comments and ``<nowiki>``-like blocks; find the ``<gallery>`` blocks.

    One forward scan, as MediaWiki's preprocessor reads these tags: a comment
    without ``-->`` runs to the end of the page, a tag without its closing tag is
    plain text (and once a closing tag is missing, later openers of that tag are
    text too, so no tag name is searched for twice). Returns the text, the
    ``(start, end)`` offsets of every gallery's content, and, for a history's next
    revision (:mod:`builder.extract.incremental`), the stretches blanked or read as a
    gallery, ``(start, end, content start, content end, name)`` (tags included from start
    to end; ``"!--"`` names a comment, which runs to the end if never closed), and every
    opener met that has no closer, ``(position, name)``.
    """
    if "<" not in text:
        return text, [], [], []
    pieces: list[str] = []
    galleries: list[tuple[int, int]] = []
    regions: list[tuple[int, int, int, int, str]] = []
    unclosed: list[tuple[int, str]] = []
    no_closer: set[str] = set()
    position = 0
    kept = 0
    while True:
        match = _INERT_OPEN.search(text, position)
        if match is None:
            break
        if match.group() == "<!--":
            close = text.find("-->", match.end())
            end = len(text) if close < 0 else close + 3
            if close < 0:
                unclosed.append((match.start(), "!--"))
            regions.append((match.start(), end, match.end(), len(text) if close < 0 else close, "!--"))
            pieces.append(text[kept : match.start()])
            _blank(pieces, text, match.start(), end)
            position = kept = end
            continue
        name = match.group(1).casefold()
        if match.group().endswith("/>"):
            position = match.end()
            continue
        closer = None if name in no_closer else _INERT_CLOSE[name].search(text, match.end())
        if closer is None:
            no_closer.add(name)
            unclosed.append((match.start(), name))
            position = match.start() + 1
            continue
        regions.append((match.start(), closer.end(), match.end(), closer.start(), name))
        if name == "gallery":
            galleries.append((match.end(), closer.start()))
            pieces.append(text[kept : match.end()])
            pieces.append(_without_comments(text[match.end() : closer.start()]))
            kept = closer.start()
        else:
            pieces.append(text[kept : match.start()])
            _blank(pieces, text, match.start(), closer.end())
            kept = closer.end()
        position = closer.end()
    pieces.append(text[kept:])
    return "".join(pieces), galleries, regions, unclosed


def _without_comments(text: str) -> str:
    """Comments inside a gallery blanked like those of the page."""
    pieces: list[str] = []
    kept = 0
    start = text.find("<!--")
    while start >= 0:
        close = text.find("-->", start + 4)
        end = len(text) if close < 0 else close + 3
        pieces.append(text[kept:start])
        _blank(pieces, text, start, end)
        kept = end
        start = text.find("<!--", end)
    pieces.append(text[kept:])
    return "".join(pieces)


class _Tokens:
    """The bracket tokens of a text, each opener paired with its closer in one pass.

    A single stack holds the open ``[[`` and ``{{``. A closer closes the innermost
    opener of its own kind; openers above that one never close (their markup is
    text), so paired spans nest properly and no span is scanned twice. A closer
    with no opener of its kind open is text: the ``}}`` of ``[[B}}C|label]]``.
    A run of closing square brackets is read from its end: in ``]]]`` the first
    bracket closes an external link ``[http://… label]`` and the last two a wikilink.
    """

    def __init__(self, text: str, start: int = 0, end: int | None = None) -> None:
        self.text = text
        end = len(text) if end is None else end
        matches = list(_TOKENS.finditer(text, start, end))
        self.positions = [match.start() for match in matches]
        self.kinds = [match.group() for match in matches]
        self._read_odd_runs_from_the_end(start, end)
        self.partner = [-1] * len(self.kinds)
        self._cut_starts: list[int] = []
        self._cut_ends: dict[int, int] = {}
        self._cuts_sorted = True
        self._pair()
        self.unmatched = [
            position for position, partner in zip(self.positions, self.partner, strict=True) if partner < 0
        ]

    def _read_odd_runs_from_the_end(self, start: int, end: int) -> None:
        """In ``]]]`` the closer is the last two brackets, not the first two the regex took."""
        run_start = self.text.find("]]]", start, end)
        while run_start >= 0:
            run = _CLOSING_RUN.match(self.text, run_start, end)
            assert run is not None
            if len(run.group()) % 2:
                index = bisect.bisect_left(self.positions, run_start)
                while index < len(self.positions) and self.positions[index] < run.end():
                    self.positions[index] += 1
                    index += 1
            run_start = self.text.find("]]]", run.end(), end)

    def _pair(self) -> None:
        kinds = self.kinds
        partner = self.partner
        stack: list[int] = []
        open_count = {"[[": 0, "{{": 0}
        for index, kind in enumerate(kinds):
            if kind in open_count:
                stack.append(index)
                open_count[kind] += 1
                continue
            wanted = _OPENERS[kind]
            if not open_count[wanted]:
                continue
            opener = stack.pop()
            while kinds[opener] != wanted:
                open_count[kinds[opener]] -= 1
                opener = stack.pop()
            open_count[wanted] -= 1
            partner[opener] = index
            partner[index] = opener

    def segments(self, first: int, stop: int, start: int, end: int) -> list[tuple[int, int]]:
        """Offsets of the pieces of ``text[start:end]`` between its top-level pipes.

        ``first``/``stop`` are the indices of the tokens inside that range; paired
        spans are skipped whole, so pipes of nested links and templates stay, and
        every character is searched for pipes at one level only.
        """
        pieces = []
        piece_start = start
        position = start
        index = first
        while True:
            while index < stop and self.partner[index] < index:
                index += 1  # a closer, or an opener that never closes: text
            nested = self.positions[index] if index < stop else end
            pipe = self.text.find("|", position, nested)
            while pipe >= 0:
                pieces.append((piece_start, pipe))
                piece_start = pipe + 1
                pipe = self.text.find("|", piece_start, nested)
            if index >= stop:
                break
            index = self.partner[index] + 1
            position = self.positions[index - 1] + 2
        pieces.append((piece_start, end))
        return pieces

    def inner_segments(self, opener: int) -> list[tuple[int, int]]:
        """The top-level pieces between a paired opener and its closer."""
        closer = self.partner[opener]
        return self.segments(opener + 1, closer, self.positions[opener] + 2, self.positions[closer])

    def cut(self, start: int, end: int) -> None:
        """Leave ``text[start:end]`` (a nested image reference) out of every caption around it.

        Every cut must be made before the first :meth:`markup`, which sorts them once.
        """
        self._cut_starts.append(start)
        self._cut_ends[start] = end
        self._cuts_sorted = False

    def markup(self, start: int, end: int) -> str:
        """``text[start:end]`` as caption wikitext for the cleaner.

        Unpaired brackets go (broken markup is not caption text), and so do the nested
        image references that :meth:`cut` marked: they are references of their own,
        and the cleaner drops them. Each character thus reaches the cleaner once,
        however deeply the references nest.
        """
        if not self._cuts_sorted:
            self._cut_starts.sort()
            self._cuts_sorted = True
        pieces = []
        while start < end:
            index = bisect.bisect_left(self._cut_starts, start)
            cut_start = self._cut_starts[index] if index < len(self._cut_starts) else end
            pieces.append(self._without_unpaired(start, min(cut_start, end)))
            if cut_start >= end:
                break
            start = self._cut_ends[cut_start]
        return "".join(pieces)

    def _without_unpaired(self, start: int, end: int) -> str:
        first = bisect.bisect_left(self.unmatched, start)
        stop = bisect.bisect_left(self.unmatched, end - 1)
        pieces = []
        for position in self.unmatched[first:stop]:
            pieces.append(self.text[start:position])
            pieces.append(" ")  # not "", which could join "[" and "[" into new markup
            start = position + 2
        pieces.append(self.text[start:end])
        return "".join(pieces)

    def contains_markup(self, start: int, end: int) -> bool:
        """Whether a bracket token lies in ``text[start:end]``."""
        index = bisect.bisect_left(self.positions, start)
        return index < len(self.positions) and self.positions[index] < end


def _is_option(segment: str) -> bool:
    stripped = segment.strip()
    if stripped.casefold() in _KEYWORD_OPTIONS or _SIZE_OPTION.match(stripped):
        return True
    keyed = _KEYED_OPTION.match(stripped)
    return keyed is not None and keyed.group(1).casefold() in _KEYED_OPTIONS


def _clean(wikitext: str, stats: ExtractStats, rules: CaptionRules) -> str:
    """A caption's plain text; one the cleaner cannot render is dropped and counted, not its page.

    A caption with a U+FFFD is dropped and counted too: the reader puts one where the dump
    had bytes that are not UTF-8, and a published caption must not hold a guess. Under the
    no-hole rule, so is one holding a template nothing renders, counted by the template's title.
    """
    try:
        rendering = render_caption(wikitext, rules.table)
    except CaptionError:
        stats.captions_dropped += 1
        return ""
    text = rendering.text
    if rules.whole and rendering.unrendered:
        stats.captions_with_an_unrendered_template += 1
        for title in dict.fromkeys(rendering.unrendered):
            stats.unrendered_templates[title] = stats.unrendered_templates.get(title, 0) + 1
        return ""
    if "\ufffd" in text:
        stats.invalid_utf8_captions += 1
        return ""
    return text


def _localized_option(segment: str, language: Language) -> ImageOption | None:
    """An option of the wiki's language, also where a template follows it (``250x250փքս{{dead link}}``).

    MediaWiki expands templates before it reads the options, so a segment that is an option
    once its templates are gone is one; only segments holding a template are cleaned to see.
    """
    option = language.parse_image_option(segment)
    if option is None and "{{" in segment:
        try:
            option = language.parse_image_option(clean_caption(segment))
        except CaptionError:
            return None
    return option


def _caption_and_alt(
    segments: list[str], stats: ExtractStats, language: Language | None, rules: CaptionRules
) -> tuple[str, str]:
    """The caption is the last segment that is not an option (as MediaWiki reads it); ``alt=`` gives the alt text.

    On a wiki of another language, the options of that language (``mini``, ``hochkant=1.2``,
    ``alternativtext=…``) are options too; English's stay valid everywhere.
    """
    caption = ""
    alt = ""
    for segment in segments:
        if _is_option(segment):
            if segment.strip()[:3].casefold() == "alt":
                alt = segment.split("=", 1)[1]
            continue
        localized = _localized_option(segment, language) if language is not None else None
        if localized is None:
            caption = segment
        elif localized.id == "img_alt" and localized.value is not None:
            alt = localized.value
    return _clean(caption, stats, rules), _clean(alt, stats, rules)


@dataclasses.dataclass
class _TemplateImage:
    """The ``image``/``caption``/``alt`` parameters of one image of a template (one group and counter)."""

    image: tuple[int, int] | None = None
    caption: tuple[int, int] | None = None
    alt: tuple[int, int] | None = None
    names: dict[str, str] = dataclasses.field(default_factory=dict)  # role → the parameter's name as written

    def parameters(self) -> str:
        """The names that gave this image, ``image/caption/alt`` as written, for the reference shards."""
        return "/".join(self.names[role] for role in ("image", "caption", "alt") if role in self.names)


@functools.lru_cache(maxsize=64)
def _parameter_keys(groups: tuple[ParameterGroup, ...]) -> tuple[re.Pattern[str], dict[str, tuple[int, str, bool]]]:
    """A matcher of the groups' parameter names at the start of a template argument, and each name's role.

    For English's one group this is the paper's heuristic, ``(image|caption|alt)(\\d*)=``, any case.
    A name claimed by an earlier group (the language's own come before English's) is not claimed again;
    a group whose image name an earlier group has adds its caption and alt names to that group.
    """
    roles: dict[str, tuple[int, str, bool]] = {}
    written: list[str] = []
    for index, group in enumerate(groups):
        claimed = roles.get(group.image.casefold())
        if claimed is not None and claimed[1] == "image":
            index = claimed[0]  # another caption name of an image already named (Bild: Untertitel, Bildbeschreibung)
        for role in ("image", "caption", "alt"):
            name = getattr(group, role)
            if name and name.casefold() not in roles:
                roles[name.casefold()] = (index, role, group.counter)
                written.append(name)
    names = "|".join(re.escape(name) for name in sorted(written, key=len, reverse=True))
    return re.compile(r"\s*(" + names + r")(\d*)\s*=", re.IGNORECASE), roles


class _Extractor:
    """Collects the references of one page; one instance per page."""

    def __init__(
        self,
        text: str,
        aliases: tuple[str, ...],
        stats: ExtractStats,
        language: Language | None,
        groups: tuple[ParameterGroup, ...],
        rules: CaptionRules,
    ) -> None:
        self.text, self.galleries, self.regions, self.unclosed_tags = _inert_markup(text)
        self.aliases = aliases
        self.stats = stats
        self.language = language
        self.rules = rules
        self.parameter_key, self.parameter_roles = _parameter_keys(groups)
        self.references: list[ImageReference] = []
        names = "|".join(re.escape(alias) for alias in aliases)
        self._link_start = re.compile(r"\[\[[ \t]*(?:" + names + r")[ \t]*:", re.IGNORECASE)
        self.tokens = _Tokens(self._without_galleries())
        self.file_links: list[int] = []  # token indices of the paired [[File:…]] openers, in page order
        self.template_of_link: dict[int, tuple[str, _TemplateImage]] = {}
        self.template_positions: list[int] = []  # offsets of the file names found in template values
        self.template_files: list[tuple[str, _TemplateImage, int, str]] = []  # file, parameters, offset, template
        self.markup_values: list[tuple[int, int]] = []  # image values with markup and no file link

    def _without_galleries(self) -> str:
        """The page with gallery contents blanked: a gallery is read line by line, not as page markup."""
        if not self.galleries:
            return self.text
        pieces = []
        kept = 0
        for start, end in self.galleries:
            pieces.append(self.text[kept:start])
            _blank(pieces, self.text, start, end)
            kept = end
        pieces.append(self.text[kept:])
        return "".join(pieces)

    def run(self) -> list[ImageReference]:
        self._find_file_links()
        self._templates()
        self._template_references()
        self._links()
        self._gallery_lines()
        self.references.sort(key=lambda reference: reference.position)
        self.stats.references += len(self.references)
        return self.references

    def _add(
        self,
        file: str | None,
        caption: str,
        alt: str,
        source: str,
        position: int,
        template: str = "",
        parameters: str = "",
    ) -> None:
        if file is None:
            self.stats.unparsed += 1
            return
        self.references.append(ImageReference(file, caption, alt, source, position, template, parameters))

    def _find_file_links(self) -> None:
        tokens = self.tokens
        for match in self._link_start.finditer(tokens.text):
            index = bisect.bisect_left(tokens.positions, match.start())
            if index == len(tokens.positions) or tokens.positions[index] != match.start():
                continue  # the "[[" belongs to a "[[[" read otherwise
            closer = tokens.partner[index]
            if closer < 0 or tokens.positions[closer] - tokens.positions[index] > MAX_SPAN:
                self.stats.unclosed += 1
                continue
            self.file_links.append(index)
            tokens.cut(tokens.positions[index], tokens.positions[closer] + 2)
        self.link_positions = [tokens.positions[index] for index in self.file_links]

    def _links(self) -> None:
        tokens = self.tokens
        for index in self.file_links:
            (title_start, title_end), *options = tokens.inner_segments(index)
            file = normalize_title(tokens.text[title_start:title_end], self.aliases)
            segments = [tokens.markup(start, end) for start, end in options]
            caption, alt = _caption_and_alt(segments, self.stats, self.language, self.rules)
            position = tokens.positions[index]
            holder = self.template_of_link.get(position)
            if holder is None:
                self._add(file, caption, alt, "link", position)
                continue
            template, field = holder
            caption = self._parameter(field.caption) or caption
            alt = self._parameter(field.alt) or alt
            self._add(file, caption, alt, "template", position, template, field.parameters())

    def _parameter(self, span: tuple[int, int] | None) -> str:
        return _clean(self.tokens.markup(*span), self.stats, self.rules) if span is not None else ""

    def _templates(self) -> None:
        """Every paired ``{{…}}``, innermost first (closing order), for its image parameters."""
        tokens = self.tokens
        for closer, kind in enumerate(tokens.kinds):
            if kind == "}}" and tokens.partner[closer] >= 0:
                self._template(tokens.partner[closer], closer)
        unclosed_infoboxes = (
            1
            for index, kind in enumerate(tokens.kinds)
            if kind == "{{" and tokens.partner[index] < 0 and _INFOBOX_NAME.match(tokens.text, tokens.positions[index])
        )
        self.stats.unclosed += sum(unclosed_infoboxes)

    def _template(self, opener: int, closer: int) -> None:
        tokens = self.tokens
        (name_start, name_end), *parameters = tokens.inner_segments(opener)
        images: dict[tuple[int, str], _TemplateImage] = {}
        for start, end in parameters:
            key = self.parameter_key.match(tokens.text, start, end)
            if key is None:
                continue
            group, role, counted = self.parameter_roles[key.group(1).casefold()]
            if key.group(2) and not counted:
                continue  # "Bild2" where only "Bild" is a parameter of the language
            field = images.setdefault((group, key.group(2)), _TemplateImage())
            setattr(field, role, (key.end(), end))
            field.names[role] = key.group(1) + key.group(2)
        if not any(field.image is not None for field in images.values()):
            return
        name = " ".join(tokens.text[name_start : min(name_end, name_start + MAX_TEMPLATE_NAME)].split())
        if not name or _INVALID_NAME.search(name):
            return  # MediaWiki shows {{|…}} or {{<ref>|…}} as text
        for key in sorted(images, key=lambda key: (key[0], len(key[1]), key[1])):
            if images[key].image is not None:
                self._template_image(images[key], name)
        tokens.cut(tokens.positions[opener], tokens.positions[closer] + 2)

    def _template_image(self, field: _TemplateImage, template: str) -> None:
        """An image parameter's value is a bare name, a ``File:`` title, or holds a whole ``[[File:…]]``.

        A ``[[File:…]]`` in the value is the reference (as the authors' scanner reads
        it), marked as the template's. Its caption and alt text are the template's
        ``captionN``/``altN`` when given, as the paper mines them; the authors' code
        drops these and keeps only the link's own.
        """
        assert field.image is not None
        start, end = field.image
        first = bisect.bisect_left(self.link_positions, start)
        links = self.link_positions[first : bisect.bisect_left(self.link_positions, end)]
        for position in links:
            self.template_of_link.setdefault(position, (template, field))
        value = self.tokens.text[start:end].strip()
        if links or not value:
            return
        if self.tokens.contains_markup(start, end):
            self.markup_values.append((start, end))
            return
        file = normalize_title(value, self.aliases, bare=True)
        if file is None:
            self.stats.unparsed += 1
            return
        self.template_positions.append(start)
        self.template_files.append((file, field, start, template))

    def _template_references(self) -> None:
        """The references of template values, once every nested reference is known and cut out."""
        for file, field, position, template in self.template_files:
            caption, alt = self._parameter(field.caption), self._parameter(field.alt)
            self._add(file, caption, alt, "template", position, template, field.parameters())
        self.template_positions.sort()
        for start, end in self.markup_values:
            inner = bisect.bisect_left(self.template_positions, start)
            if inner == len(self.template_positions) or self.template_positions[inner] >= end:
                self.stats.unparsed += 1  # e.g. {{#property:P18}}; an inner template with an image counts itself

    def _gallery_lines(self) -> None:
        """Each line of a gallery is ``Name|option|…|caption``, split with its own bracket pairs."""
        for start, end in self.galleries:
            line_start = start
            while line_start < end:
                line_end = self.text.find("\n", line_start, end)
                if line_end < 0:
                    line_end = end
                if self.text[line_start:line_end].strip():
                    self._gallery_line(line_start, line_end)
                line_start = line_end + 1

    def _gallery_line(self, start: int, end: int) -> None:
        tokens = _Tokens(self.text, start, end)
        (name_start, name_end), *options = tokens.segments(0, len(tokens.kinds), start, end)
        caption, alt = _caption_and_alt(
            [tokens.markup(a, b) for a, b in options], self.stats, self.language, self.rules
        )
        file = normalize_title(self.text[name_start:name_end].strip(), self.aliases, bare=True)
        self._add(file, caption, alt, "gallery", start)


def extract_images(
    wikitext: str,
    title: str = "",
    file_aliases: Iterable[str] = DEFAULT_FILE_ALIASES,
    stats: ExtractStats | None = None,
    language: Language | None = None,
    parameters: tuple[ParameterGroup, ...] | None = None,
    rules: CaptionRules | None = None,
) -> list[ImageReference]:
    """All image references of a page, in page order, with cleaned caption and alt text.

    ``file_aliases`` are names of the File namespace (``File``, ``Image`` and the dump's
    own name). ``language`` is the wiki's (:func:`builder.lang.languages.language_for`): its File
    namespace names and image options are read too, English's stay valid; None reads a page
    as English, as the paper did. ``parameters`` are the template parameter groups
    (:func:`builder.extract.parameters.template_parameters` of the language by default). ``rules``
    say how captions are rendered (:func:`builder.extract.inline.caption_rules` of the language by
    default: the no-hole rule in every language but English). ``title`` names the page in errors.
    """
    return scan_and_extract(wikitext, title, file_aliases, stats, language, parameters, rules)[0]


def scan_and_extract(
    wikitext: str,
    title: str = "",
    file_aliases: Iterable[str] = DEFAULT_FILE_ALIASES,
    stats: ExtractStats | None = None,
    language: Language | None = None,
    parameters: tuple[ParameterGroup, ...] | None = None,
    rules: CaptionRules | None = None,
) -> tuple[list[ImageReference], MarkupScan]:
    """:func:`extract_images`, with what the extractor saw of the page's markup: a history's next revision finds from
    it where the page can be cut (:mod:`builder.extract.incremental`)."""
    code = language.code if language is not None else "en"
    english = code == "en"
    names = () if language is None else language.file_namespaces
    aliases = tuple(dict.fromkeys((*file_aliases, *names)))
    groups = parameters if parameters is not None else template_parameters(code)
    try:
        extractor = _Extractor(
            wikitext,
            aliases,
            stats if stats is not None else ExtractStats(),
            None if english else language,
            groups,
            rules if rules is not None else caption_rules(code),
        )
        references = extractor.run()
        return references, MarkupScan(extractor.tokens, extractor.regions, extractor.unclosed_tags)
    except (RecursionError, ValueError, IndexError) as error:
        raise ExtractionError(f"page {title!r}: cannot extract images ({type(error).__name__}: {error})") from error
