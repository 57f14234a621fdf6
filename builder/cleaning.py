"""Stage 3: caption cleaning – caption wikitext to the plain text a reader sees.

The paper's pre-processing: cleansing of Wikitext markup, removal of line
breaks and non-printable characters, whitespace normalization. Links become
their labels, markup and references disappear, and the templates whose text
matters in captions (ship names, unit conversions, language wrappers, dates…)
are rendered; every other template is dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import mwparserfromhell
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
from mwparserfromhell.wikicode import Wikicode

MAX_DEPTH = 50
_MARKUP = re.compile(r"[\[\]{}<>'&]")
_SIMPLE_LINK = re.compile(r"\[\[([^\[\]{}|<>'&]+)(?:\|([^\[\]{}|<>'&]*))?\]\]")
_ONLY_LINKS = re.compile(r"(?:[^\[\]{}<>'&]|'(?!')|" + _SIMPLE_LINK.pattern + r")*")
_SPACE_BEFORE = re.compile(r" +([,.;:!?)])")
_SPACE_AFTER = re.compile(r"\( +")
_HIDDEN_LINK_NAMESPACES = frozenset({"file", "image", "media", "category"})
_DROPPED_TAGS = frozenset(
    {"ref", "gallery", "score", "timeline", "syntaxhighlight", "source", "templatedata", "references"}
)
_MONTHS = "January February March April May June July August September October November December".split()

Renderer = Callable[[list[str], dict[str, str]], str]


def normalize_text(text: str) -> str:
    """One line of printable text with single spaces, as the paper's pre-processing leaves it."""
    if not text.isprintable():
        text = "".join(_printable(char) for char in text)
    collapsed = " ".join(text.split())
    if " " in collapsed:
        collapsed = _SPACE_AFTER.sub("(", _SPACE_BEFORE.sub(r"\1", collapsed))
    return collapsed


def _printable(char: str) -> str:
    """Line breaks, tabs and Unicode spaces become a space; control and format characters go."""
    category = unicodedata.category(char)
    if category == "Zs" or category in ("Zl", "Zp") or char in "\r\n\t":
        return " "
    return "" if category[0] == "C" else char


def clean_caption(wikitext: str | Wikicode) -> str:
    """The plain text of a caption or alt text given as wikitext."""
    if isinstance(wikitext, str):
        if not _MARKUP.search(wikitext):
            return normalize_text(wikitext)
        simple = _render_links_only(wikitext)
        if simple is not None:
            return normalize_text(simple)
        wikitext = mwparserfromhell.parse(wikitext)
    return normalize_text(_render(wikitext, 0))


def _render_links_only(text: str) -> str | None:
    """Plain links are most captions' only markup: render those without a full parse.

    Returns None when anything else is there (templates, tags, entities, quotes,
    nested or external links), and the full renderer takes over.
    """
    if not _ONLY_LINKS.fullmatch(text):
        return None
    return _SIMPLE_LINK.sub(_simple_link, text)


def _simple_link(match: re.Match[str]) -> str:
    target, label = match.group(1), match.group(2)
    visible = target.strip().startswith(":")
    if not visible and target.partition(":")[0].strip().casefold() in _HIDDEN_LINK_NAMESPACES and ":" in target:
        return ""
    return label if label is not None else target.strip().lstrip(":")


def _render(code: Wikicode, depth: int) -> str:
    if depth > MAX_DEPTH:
        return ""
    return "".join(_render_node(node, depth) for node in code.nodes)


def _render_node(node: Node, depth: int) -> str:
    if isinstance(node, Text):
        return node.value
    if isinstance(node, Wikilink):
        return _render_wikilink(node, depth)
    if isinstance(node, Template):
        return _render_template(node, depth)
    if isinstance(node, Tag):
        return _render_tag(node, depth)
    if isinstance(node, ExternalLink):
        return _render(node.title, depth + 1) if node.title is not None and node.brackets else ""
    if isinstance(node, HTMLEntity):
        return node.normalize()
    if isinstance(node, Heading):
        return _render(node.title, depth + 1)
    if isinstance(node, (Comment, Argument)):
        return ""
    return str(node)


def _render_wikilink(link: Wikilink, depth: int) -> str:
    target = str(link.title).strip()
    visible = target.startswith(":")
    namespace = target.lstrip(":").partition(":")[0].strip().casefold()
    if namespace in _HIDDEN_LINK_NAMESPACES and not visible:
        return ""
    if link.text is not None:
        return _render(link.text, depth + 1)
    return _render(link.title, depth + 1).strip().lstrip(":")


def _render_tag(tag: Tag, depth: int) -> str:
    name = str(tag.tag).strip().casefold()
    if name in _DROPPED_TAGS:
        return ""
    if name == "br" or tag.self_closing:
        return " "
    if tag.contents is None:
        return ""
    return _render(tag.contents, depth + 1)


def _template_key(name: str) -> str:
    """MediaWiki's name equivalence: case-insensitive first letter, ``_`` = space, no edge spaces."""
    return " ".join(name.replace("_", " ").split()).casefold()


def _render_template(template: Template, depth: int) -> str:
    key = _template_key(str(template.name))
    key = ALIASES.get(key, key)
    positional: list[str] = []
    named: dict[str, str] = {}
    for parameter in template.params:
        value = _render(parameter.value, depth + 1).strip()
        if parameter.showkey:
            named[str(parameter.name).strip().casefold()] = value
        else:
            positional.append(value)
    if key in RENDERERS:
        return RENDERERS[key](positional, named)
    if key in SHIP_PREFIXES:
        return _ship(key.upper() if key != "hmy" else "HMY", positional)
    if key.startswith("lang-"):
        return _first(positional, named)
    return ""


def _first(positional: list[str], named: dict[str, str]) -> str:
    return positional[0] if positional else ""


def _second(positional: list[str], named: dict[str, str]) -> str:
    return positional[1] if len(positional) > 1 else ""


def _ship(prefix: str, positional: list[str]) -> str:
    """Ship templates: parameters (name, id, format); the format is a bitmask 1 = id, 2 = name, 4 = prefix."""
    name = positional[0] if positional else ""
    identifier = positional[1] if len(positional) > 1 else ""
    try:
        bits = int(positional[2]) if len(positional) > 2 and positional[2] else 7
    except ValueError:
        bits = 7
    parts = []
    if bits & 4:
        parts.append(prefix)
    if bits & 2 and name:
        parts.append(name)
    text = " ".join(parts)
    if bits & 1 and identifier:
        text = f"{text} ({identifier})" if text else identifier
    return text


def _ship_template(positional: list[str], named: dict[str, str]) -> str:
    return _ship(positional[0] if positional else "", positional[1:])


def _convert(positional: list[str], named: dict[str, str]) -> str:
    """Value and unit as written: ``{{convert|5|to|10|km|mi}}`` → "5 to 10 km"."""
    if not positional:
        return ""
    ranges = {"-": "–", "–": "–", "to": " to ", "and": " and ", "or": " or ", "x": " × ", "by": " by "}
    text = positional[0]
    index = 1
    while index + 1 < len(positional) and positional[index] in ranges:
        text += ranges[positional[index]] + positional[index + 1]
        index += 2
    unit = positional[index] if index < len(positional) else ""
    return f"{text} {unit}".strip()


def _nihongo(positional: list[str], named: dict[str, str]) -> str:
    english = positional[0] if positional else ""
    others = [part for part in positional[1:3] if part]
    return f"{english} ({', '.join(others)})" if others else english


def _circa(positional: list[str], named: dict[str, str]) -> str:
    return f"c. {positional[0]}" if positional and positional[0] else "c."


def _fraction(positional: list[str], named: dict[str, str]) -> str:
    if len(positional) >= 3:
        return f"{positional[0]} {positional[1]}/{positional[2]}"
    if len(positional) == 2:
        return f"{positional[0]}/{positional[1]}"
    return f"1/{positional[0]}" if positional else ""


def _date(positional: list[str], named: dict[str, str]) -> str:
    """``{{birth date|1900|1|2}}`` → "January 2, 1900"; a year alone stays a year."""
    numbers = [part for part in positional[:3] if part.isdigit()]
    if len(numbers) == 3 and 1 <= int(numbers[1]) <= 12:
        return f"{_MONTHS[int(numbers[1]) - 1]} {int(numbers[2])}, {numbers[0]}"
    if len(numbers) == 2 and 1 <= int(numbers[1]) <= 12:
        return f"{_MONTHS[int(numbers[1]) - 1]} {numbers[0]}"
    return numbers[0] if numbers else ""


def _interlanguage_link(positional: list[str], named: dict[str, str]) -> str:
    return named.get("lt") or _first(positional, named)


def _list(positional: list[str], named: dict[str, str]) -> str:
    return ", ".join(part for part in positional if part)


def _constant(text: str) -> Renderer:
    def render(positional: list[str], named: dict[str, str]) -> str:
        return text

    return render


SHIP_PREFIXES = frozenset(
    "uss hms hmas hmcs hmnzs ss mv rms usns uscgc usat hmy sms ara ins hnlms hswms kri js roks tcg".split()
)
RENDERERS: dict[str, Renderer] = {
    "ship": _ship_template,
    "convert": _convert,
    "lang": _second,
    "transl": _second,
    "nihongo": _nihongo,
    "nihongo2": _first,
    "nowrap": _first,
    "small": _first,
    "big": _first,
    "em": _first,
    "strong": _first,
    "var": _first,
    "smallcaps": _first,
    "not a typo": _first,
    "proper name": _first,
    "sic": _first,
    "circa": _circa,
    "'": _constant("'"),
    "'s": _constant("'s"),
    "snd": _constant(" – "),
    "ndash": _constant("–"),
    "mdash": _constant("—"),
    "spaced mdash": _constant(" — "),
    "nbsp": _constant(" "),
    "middot": _constant(" · "),
    "=": _constant("="),
    "!": _constant("|"),
    "frac": _fraction,
    "abbr": _first,
    "ill": _interlanguage_link,
    "flag": _first,
    "flagcountry": _first,
    "sortname": lambda positional, named: " ".join(positional[:2]),
    "unbulleted list": _list,
    "hlist": _list,
    "flatlist": _list,
    "plainlist": _list,
    "date": _first,
    "birth date": _date,
    "start date": _date,
    "as of": lambda positional, named: f"As of {' '.join(positional[:3])}".strip(),
}
ALIASES: dict[str, str] = {
    "cvt": "convert",
    "transliteration": "transl",
    "nobr": "nowrap",
    "nobreak": "nowrap",
    "smaller": "small",
    "larger": "big",
    "sc": "smallcaps",
    "c.": "circa",
    "ca.": "circa",
    "circa.": "circa",
    "spaced ndash": "snd",
    "spnd": "snd",
    "nd": "ndash",
    "en dash": "ndash",
    "spd": "spaced mdash",
    "·": "middot",
    "dot": "middot",
    "sfrac": "frac",
    "interlanguage link": "ill",
    "ubl": "unbulleted list",
    "death date": "birth date",
    "birth date and age": "birth date",
    "death date and age": "birth date",
}
