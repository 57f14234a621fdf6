"""Stage 3 of the pipeline: caption cleaning – caption wikitext to the plain text a reader sees.

The paper's pre-processing: cleansing of Wikitext markup, removal of line
breaks and non-printable characters, whitespace normalization. Links become
their labels, formatting and references disappear, and the templates whose text
matters in captions (ship names, unit conversions, language wrappers, dates…)
are rendered; every other template is dropped. Nested ``[[File:…]]`` links are
image references of their own (stage 2 finds them), not caption text.

:data:`RENDERERS`, :data:`ALIASES` and :data:`DROPPED` say which templates are
known; :func:`is_known_template` lets callers count the ones that are not.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Callable

import mwparserfromhell
from mwparserfromhell.definitions import URI_SCHEMES
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Node,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.parser import ParserError
from mwparserfromhell.wikicode import Wikicode

MAX_DEPTH = 50  # nesting levels of links, tags and templates rendered; deeper markup renders as ""

# Fast path: most captions are plain text or plain links, which need no parser.
_MARKUP = re.compile(r"[\[\]{}<>'&]")
_LINE_MARKUP = re.compile(r"^(?:[*#:;=]|----)", re.MULTILINE)
_FREE_URL = re.compile(r"\b(?:" + "|".join(URI_SCHEMES) + r"):", re.IGNORECASE)
_SIMPLE_LINK = re.compile(r"\[\[([^\[\]{}|<>'&\n]+)(?:\|([^\[\]{}|<>'&]*))?\]\]")
_ONLY_LINKS = re.compile(r"(?:[^\[\]{}<>'&]|'(?!')|" + _SIMPLE_LINK.pattern + r")*")

# Markup the parser leaves as text although a browser would not show it.
_HTML_TAG_NAMES = (
    "abbr b bdi bdo big blockquote br caption center cite code data dd del dfn div dl dt em font "
    "h1 h2 h3 h4 h5 h6 hr i ins kbd li mark ol p q rb rp rt rtc ruby s samp small span strike strong "
    "sub sup table td th time tr tt u ul var wbr".split()
)
_STRAY_HTML_TAG = re.compile(r"</?(?:" + "|".join(_HTML_TAG_NAMES) + r")\b[^<>]*>", re.IGNORECASE)
_UNCLOSED_COMMENT = re.compile(r"<!--.*", re.DOTALL)
_QUOTE_RUN = re.compile(r"'{2,}")

_SPACE_BEFORE = re.compile(r" ([,.;:!?)])")
_SPACE_AFTER = re.compile(r"\( ")

_HIDDEN_LINK_NAMESPACES = frozenset({"file", "image", "media", "category"})
_DROPPED_TAGS = frozenset(
    "ref references gallery score timeline syntaxhighlight source templatedata templatestyles graph "
    "imagemap inputbox categorytree mapframe maplink indicator section hiero includeonly".split()
)
_SOURCE_TAGS = frozenset({"math", "chem", "ce", "nowiki", "pre"})
_BLOCK_TAGS = frozenset("p div li dt dd ul ol dl table caption tr td th blockquote center hr h1 h2 h3 h4 h5 h6".split())

_MONTHS = "January February March April May June July August September October November December".split()
_YES = frozenset({"y", "yes", "true", "on", "1"})
_NUMBER = re.compile(r"[-+−]?[\d.,]+")
_CONVERT_RANGES = {
    "-": "–",
    "–": "–",
    "to": " to ",
    "to(-)": " to ",
    "and": " and ",
    "and(-)": " and ",
    "or": " or ",
    "x": " × ",
    "by": " by ",
    "+/-": " ± ",
    "±": " ± ",
}
_CONVERT_SUBUNITS = {"ft": "in", "st": "lb", "lb": "oz"}  # {{convert|6|ft|2|in}}
_SHIP_FORMATS = frozenset("1234567")


def normalize_text(text: str) -> str:
    """One line of printable text with single spaces, as the paper's pre-processing leaves it."""
    if not text.isprintable():
        text = "".join(_printable(char) for char in text)
    text = " ".join(text.split())
    if " " in text:
        text = _SPACE_AFTER.sub("(", _SPACE_BEFORE.sub(r"\1", text))
    return text


def _printable(char: str) -> str:
    """Line breaks, tabs and Unicode spaces become a space; control, format and unassigned characters go."""
    if char.isspace():
        return " "
    return "" if unicodedata.category(char)[0] == "C" else char


def clean_caption(wikitext: str | Wikicode) -> str:
    """The plain text of a caption or alt text given as wikitext; never raises."""
    if isinstance(wikitext, str):
        fast = _render_without_parser(wikitext)
        if fast is not None:
            return normalize_text(fast)
        try:
            wikitext = mwparserfromhell.parse(wikitext)
        except ParserError:
            return normalize_text(_literal(wikitext))
    return normalize_text(_render(wikitext, 0))


def _render_without_parser(text: str) -> str | None:
    """Plain text and plain links are most captions: render them without a parse.

    Returns None when anything else is there (templates, tags, entities, quotes,
    URLs, line-start markup, nested or external links); the parser takes over and
    gives the same result for everything this path accepts.
    """
    if _LINE_MARKUP.search(text) or (":" in text and _FREE_URL.search(text)):
        return None
    if not _MARKUP.search(text):
        return text
    if not _ONLY_LINKS.fullmatch(text):
        return None
    return _SIMPLE_LINK.sub(_render_simple_link, text)


def _render_simple_link(match: re.Match[str]) -> str:
    target, label = match.group(1), match.group(2)
    if _is_hidden_link(target):
        return ""
    return label if label is not None else _display_target(target)


def _is_hidden_link(target: str) -> bool:
    """File, image and category links show no text; a leading colon makes them ordinary links."""
    title = target.strip()
    if title.startswith(":"):
        return False
    namespace, colon, _ = title.partition(":")
    return bool(colon) and namespace.strip().casefold() in _HIDDEN_LINK_NAMESPACES


def _display_target(target: str) -> str:
    return target.strip().removeprefix(":")


def _literal(text: str) -> str:
    """Text as the browser shows it: stray HTML tags, an unclosed comment and unpaired quote marks vanish."""
    if "<" in text:
        text = _STRAY_HTML_TAG.sub("", _UNCLOSED_COMMENT.sub("", text))
    if "''" in text:
        text = _QUOTE_RUN.sub(_quote_run, text)
    return text


def _quote_run(match: re.Match[str]) -> str:
    """MediaWiki's apostrophe runs: 2, 3 and 5 are markup; 4 keeps one apostrophe, 6+ keep the excess."""
    length = len(match.group())
    if length == 4:
        return "'"
    return "'" * max(0, length - 5)


def _render(code: Wikicode, depth: int) -> str:
    if depth > MAX_DEPTH:
        return ""
    return "".join(_render_node(node, depth) for node in code.nodes)


@functools.singledispatch
def _render_node(node: Node, depth: int) -> str:
    """A node type this renderer does not know shows as its wikitext."""
    return str(node)


@_render_node.register
def _render_text(node: Text, depth: int) -> str:
    return _literal(node.value)


@_render_node.register
def _render_wikilink(node: Wikilink, depth: int) -> str:
    if _is_hidden_link(str(node.title)):
        return ""
    if node.text is not None:
        return _render(node.text, depth + 1)
    return _display_target(_render(node.title, depth + 1))


@_render_node.register
def _render_external_link(node: ExternalLink, depth: int) -> str:
    """A labelled link shows its label; a bare or numbered URL is no caption text."""
    if node.brackets and node.title is not None:
        return _render(node.title, depth + 1)
    return ""


@_render_node.register
def _render_entity(node: HTMLEntity, depth: int) -> str:
    return node.normalize()


@_render_node.register
def _render_heading(node: Heading, depth: int) -> str:
    return _render(node.title, depth + 1)


@_render_node.register
def _render_comment(node: Comment, depth: int) -> str:
    return ""


@_render_node.register
def _render_argument(node: Argument, depth: int) -> str:
    """Outside a template ``{{{1|default}}}`` shows its default."""
    return _render(node.default, depth + 1) if node.default is not None else ""


@_render_node.register
def _render_tag(node: Tag, depth: int) -> str:
    """Tags keep their text; line breaks and block boundaries become whitespace."""
    name = str(node.tag).strip().casefold()
    if name in _DROPPED_TAGS:
        return ""
    if name == "br":
        return " "
    if name in _SOURCE_TAGS:
        return str(node.contents) if node.contents is not None and not node.self_closing else ""
    block = "\n" if name in _BLOCK_TAGS else ""
    if node.self_closing or node.contents is None:
        return block
    return block + _render(node.contents, depth + 1) + block


@_render_node.register
def _render_template(node: Template, depth: int) -> str:
    renderer = _renderer(_resolve(_template_name(node)))
    if renderer is None:
        return ""
    return renderer(_arguments(node, depth))


def _template_name(template: Template) -> str:
    """The name as MediaWiki reads it: comments inside ``{{name<!-- -->|…}}`` do not count."""
    return "".join(str(node) for node in template.name.nodes if not isinstance(node, Comment))


def template_key(name: str) -> str:
    """MediaWiki's title of a template name: ``_`` and spaces alike, first letter case-insensitive.

    Surrounding and repeated whitespace and a ``Template:`` prefix do not count, so
    ``{{ convert |…}}``, ``{{Convert|…}}`` and ``{{Template:convert|…}}`` are one template.
    """
    title = " ".join(name.replace("_", " ").split())
    namespace, colon, rest = title.partition(":")
    if colon and namespace.strip().casefold() == "template":
        title = rest.strip()
    return title[:1].upper() + title[1:]


def _resolve(name: str) -> str:
    key = template_key(name)
    return ALIASES.get(key, key)


def _renderer(key: str) -> Renderer | None:
    if key in RENDERERS:
        return RENDERERS[key]
    if key.startswith("Lang-"):
        return _first
    return None


def is_known_template(name: str) -> bool:
    """Whether a template is rendered or deliberately dropped, as opposed to dropped for being unknown."""
    key = _resolve(name)
    return _renderer(key) is not None or key in DROPPED or key.startswith("Cite ")


@dataclasses.dataclass(frozen=True)
class Arguments:
    """A template's parameters rendered to stripped text; positional ones are named "1", "2", …"""

    values: dict[str, str]

    def get(self, key: int | str) -> str:
        return self.values.get(str(key), "")

    def positional(self) -> list[str]:
        """Parameters 1, 2, … up to the first missing number."""
        found: list[str] = []
        while str(len(found) + 1) in self.values:
            found.append(self.values[str(len(found) + 1)])
        return found


Renderer = Callable[[Arguments], str]


def _arguments(template: Template, depth: int) -> Arguments:
    """Later parameters of one name win, as in MediaWiki (``{{x|a|1=b}}`` has 1 = b)."""
    values = {}
    for parameter in template.params:
        values[str(parameter.name).strip()] = _render(parameter.value, depth + 1).strip()
    return Arguments(values)


def _first(args: Arguments) -> str:
    return args.get(1)


def _second(args: Arguments) -> str:
    return args.get(2)


def _constant(text: str) -> Renderer:
    """Punctuation and spacing templates: the same text whatever the parameters."""

    def render(args: Arguments) -> str:
        return text

    return render


def _ship_prefix(prefix: str) -> Renderer:
    """``{{USS|name|id|format}}`` and its siblings differ only in the prefix they print."""

    def render(args: Arguments) -> str:
        return _ship_name(prefix, args.get(1), args.get(2), args.get(3))

    return render


def _ship(args: Arguments) -> str:
    """``{{Ship|prefix|name|id|format}}``."""
    return _ship_name(args.get(1), args.get(2), args.get(3), args.get(4))


def _ship_name(prefix: str, name: str, identifier: str, display: str) -> str:
    """The display format is a bitmask: 1 = id, 2 = name, 4 = prefix; all three by default."""
    bits = int(display) if display in _SHIP_FORMATS else 7
    parts = []
    if bits & 4 and prefix:
        parts.append(prefix)
    if bits & 2 and name:
        parts.append(name)
    if bits & 1 and identifier:
        parts.append(f"({identifier})" if parts else identifier)
    return " ".join(parts)


def _convert(args: Arguments) -> str:
    """The value and its unit as written, without the conversion: ``{{convert|5|-|10|km|mi}}`` → "5–10 km"."""
    values = args.positional()
    if not values:
        return ""
    text = values[0]
    index = 1
    while index + 1 < len(values) and values[index] in _CONVERT_RANGES:
        text += _CONVERT_RANGES[values[index]] + values[index + 1]
        index += 2
    unit = values[index] if index < len(values) else ""
    text = f"{text} {unit}".strip()
    subunit = values[index + 1 : index + 3]
    if len(subunit) == 2 and _NUMBER.fullmatch(subunit[0]) and subunit[1] == _CONVERT_SUBUNITS.get(unit):
        text += f" {subunit[0]} {subunit[1]}"
    return text


def _transliteration(args: Arguments) -> str:
    """``{{transl|lang|text}}`` or ``{{transl|lang|system|text}}``: the text is the last parameter."""
    values = args.positional()
    return values[-1] if len(values) > 1 else ""


def _nihongo(args: Arguments) -> str:
    """``{{nihongo|English|Kanji|romaji}}`` → "English (Kanji, romaji)", empty parts left out."""
    parts = [part for part in (args.get(1), args.get(2), args.get(3)) if part]
    if len(parts) < 2:
        return "".join(parts)
    return f"{parts[0]} ({', '.join(parts[1:])})"


def _circa(args: Arguments) -> str:
    return f"c. {args.get(1)}" if args.get(1) else "c."


def _fraction(args: Arguments) -> str:
    """``{{frac|1|2}}`` → "1/2", ``{{frac|2|1|2}}`` → "2 1/2", ``{{frac|4}}`` → "1/4"."""
    values = args.positional()
    if len(values) >= 3:
        return f"{values[0]} {values[1]}/{values[2]}"
    if len(values) == 2:
        return f"{values[0]}/{values[1]}"
    return f"1/{values[0]}" if values else ""


def _interlanguage_link(args: Arguments) -> str:
    """``{{ill|Title|de|Titel|lt=label}}`` shows the label, else the English title."""
    return args.get("lt") or args.get(1)


def _sortname(args: Arguments) -> str:
    return " ".join(part for part in (args.get(1), args.get(2)) if part)


def _list(args: Arguments) -> str:
    """List templates: one item per parameter, or per line of a bulleted parameter (plainlist)."""
    items = []
    for value in args.positional():
        items.extend(line.strip() for line in value.split("\n"))
    return ", ".join(item for item in items if item)


def _birth_date(args: Arguments) -> str:
    """``{{birth date|1900|1|2}}`` → "January 2, 1900"; ``df=y`` puts the day first."""
    return _calendar_date(args.get(1), args.get(2), args.get(3), args.get("df").casefold() in _YES)


def _as_of(args: Arguments) -> str:
    """``{{as of|2020|5}}`` → "As of May 2020"; day first unless ``df=US``; ``lc=y`` lower-cases."""
    if args.get("alt"):
        return args.get("alt")
    date = _calendar_date(args.get(1), args.get(2), args.get(3), args.get("df").casefold() != "us")
    lead = "as of" if args.get("lc").casefold() in _YES else "As of"
    return f"{lead} {date}".strip()


def _calendar_date(year: str, month: str, day: str, day_first: bool) -> str:
    """A date from year, month and day numbers; a year alone stays a year, text stays as written."""
    month_number = _small_number(month)
    if month_number is None or not 1 <= month_number <= 12:
        return year
    month_name = _MONTHS[month_number - 1]
    day_number = _small_number(day)
    if day_number is None:
        return f"{month_name} {year}"
    if day_first:
        return f"{day_number} {month_name} {year}"
    return f"{month_name} {day_number}, {year}"


def _small_number(text: str) -> int | None:
    return int(text) if text.isdecimal() and len(text) <= 2 else None


SHIP_PREFIXES = tuple(
    "USS HMS HMAS HMCS HMNZS SS MV RMS USNS USCGC USAT HMY SMS ARA INS HNLMS HSwMS KRI JS ROKS TCG".split()
)

# Keys are template titles as template_key() writes them; ``Lang-…`` templates render their first parameter.
RENDERERS: dict[str, Renderer] = {
    **{prefix: _ship_prefix(prefix) for prefix in SHIP_PREFIXES},
    "Ship": _ship,
    "Convert": _convert,
    "Lang": _second,
    "Langx": _second,
    "Transl": _transliteration,
    "Nihongo": _nihongo,
    "Nihongo2": _first,
    "Nowrap": _first,
    "Small": _first,
    "Big": _first,
    "Em": _first,
    "Strong": _first,
    "Var": _first,
    "Smallcaps": _first,
    "Not a typo": _first,
    "Proper name": _first,
    "Sic": _first,
    "Circa": _circa,
    "'": _constant("'"),
    "'s": _constant("'s"),
    "Snd": _constant(" – "),
    "Ndash": _constant("–"),
    "Mdash": _constant("—"),
    "Spaced mdash": _constant(" — "),
    "Nbsp": _constant(" "),
    "·": _constant(" · "),
    "-": _constant(""),
    "Clear": _constant(""),
    "Break": _constant(" "),
    "=": _constant("="),
    "!": _constant("|"),
    "Frac": _fraction,
    "Abbr": _first,
    "Ill": _interlanguage_link,
    "Flag": _first,
    "Flagcountry": _first,
    "Sortname": _sortname,
    "Unbulleted list": _list,
    "Plainlist": _list,
    "Hlist": _list,
    "Flatlist": _list,
    "Date": _first,
    "Birth date": _birth_date,
    "Birth date and age": _birth_date,
    "Death date": _birth_date,
    "Death date and age": _birth_date,
    "Start date": _birth_date,
    "Start date and age": _birth_date,
    "End date": _birth_date,
    "As of": _as_of,
}

# Other names (redirects) of the templates above.
ALIASES: dict[str, str] = {
    "Cvt": "Convert",
    "Transliteration": "Transl",
    "Nobr": "Nowrap",
    "Nobreak": "Nowrap",
    "Smaller": "Small",
    "Larger": "Big",
    "Sc": "Smallcaps",
    "C.": "Circa",
    "Ca.": "Circa",
    "Circa.": "Circa",
    "Spaced ndash": "Snd",
    "Spaced en dash": "Snd",
    "Spnd": "Snd",
    "Nd": "Ndash",
    "En dash": "Ndash",
    "Spd": "Spaced mdash",
    "Dot": "·",
    "Middot": "·",
    "Clr": "Clear",
    "Sfrac": "Frac",
    "Interlanguage link": "Ill",
    "Ubl": "Unbulleted list",
}

# Templates known to show no caption text (citations, notes, maintenance, navigation); also every ``Cite …``.
DROPPED = frozenset(
    {
        "Cite",
        "Citation",
        "Citation needed",
        "Cn",
        "Fact",
        "Efn",
        "Efn-ua",
        "Efn-lr",
        "Sfn",
        "Sfnp",
        "Harvnb",
        "Refn",
        "R",
        "Rp",
        "Reflist",
        "Clarify",
        "When",
        "Who",
        "Which",
        "By whom",
        "Dubious",
        "Vague",
        "Failed verification",
        "Better source needed",
        "Update inline",
        "Dead link",
        "Webarchive",
        "Commons category",
        "Portal",
        "Main",
        "See also",
        "Flagicon",
        "Italic title",
        "Age",
    }
)
