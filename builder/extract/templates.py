"""The templates whose text matters in captions, and how each is rendered.

:data:`RENDERERS` maps a template's title to the function that prints its text from its
rendered parameters (ship names, unit conversions, language wrappers, dates…), :data:`ALIASES`
maps redirects to those titles, and :data:`DROPPED` lists the templates that deliberately print
nothing in a caption; :func:`is_known_template` tells the rest apart, so that callers can count them.
To render a new template, add its function and its entry here; see ``docs/cleaning.md``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

__all__ = ["Arguments", "renderer_of", "resolve_template"]


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


def resolve_template(name: str) -> str:
    key = template_key(name)
    return ALIASES.get(key, key)


def renderer_of(key: str) -> Renderer | None:
    if key in RENDERERS:
        return RENDERERS[key]
    if key.startswith("Lang-"):
        return _first
    return None


def is_known_template(name: str) -> bool:
    """Whether a template is rendered or deliberately dropped, as opposed to dropped for being unknown."""
    key = resolve_template(name)
    return renderer_of(key) is not None or key in DROPPED or key.startswith("Cite ")


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


def _ship_class(args: Arguments) -> str:
    """``{{sclass|Iowa|battleship|format}}`` → "Iowa-class battleship"; formats 0, 4 and 5 leave the type out."""
    name, kind, display = args.get(1), args.get(2), args.get(3)
    if not name:
        return ""
    if display == "5":
        return name
    if display == "4":
        return f"{name} class"
    if display == "0" or not kind:
        return f"{name}-class"
    return f"{name}-class {kind}"


def _angle_brackets(args: Arguments) -> str:
    """``{{angbr|x}}``, ``{{grapheme|x}}``, ``{{infix|x}}`` → "⟨x⟩"."""
    return f"⟨{args.get(1)}⟩"


def _joined(args: Arguments) -> str:
    """``{{chem|H|2|O}}`` → "H2O": the parameters written one after the other."""
    return "".join(args.positional())


def _last(args: Arguments) -> str:
    """``{{resize|90%|text}}`` and ``{{resize|text}}``: the text is the last parameter."""
    values = args.positional()
    return values[-1] if values else ""


def _replace(args: Arguments) -> str:
    """``{{replace|text|old|new}}``: every ``old`` in ``text`` becomes ``new``."""
    text, old = args.get(1), args.get(2)
    return text.replace(old, args.get(3)) if old else text


def _value(args: Arguments) -> str:
    """``{{val|1.23|u=m}}`` → "1.23 m"."""
    return " ".join(part for part in (args.get(1), args.get("u") or args.get("ul")) if part)


def _legend(args: Arguments) -> str:
    """``{{legend|#f00|Land}}``: a colour box and its label, on a line of its own."""
    return f"\n{args.get(2)}\n"


def _power_of_ten(args: Arguments) -> str:
    """``{{e|3}}`` → "×10^3", the exponent MediaWiki sets as a superscript."""
    return f"×10^{args.get(1)}" if args.get(1) else ""


def _station(suffix: str) -> Renderer:
    """``{{rws|Bath Spa}}`` → "Bath Spa railway station"; ``{{stnlnk|Bath Spa}}`` shows the name alone."""

    def render(args: Arguments) -> str:
        return f"{args.get(1)}{suffix}" if args.get(1) else ""

    return render


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
    "USS HMS HMAS HMCS HMNZS SS MV MS RMS USNS USCGC USAT HMY SMS ARA INS HNLMS HSwMS KRI JS ROKS TCG".split()
)

# Keys are template titles as template_key() writes them; ``Lang-…`` templates render their first parameter.
RENDERERS: dict[str, Renderer] = {
    **{prefix: _ship_prefix(prefix) for prefix in SHIP_PREFIXES},
    "Ship": _ship,
    "Sclass": _ship_class,
    "Sclass2": _ship_class,
    "Sclass-": _ship_class,
    "Sclass2-": _ship_class,
    "NYCS": _first,
    "IPAblink": _first,
    "Rws": _station(" railway station"),
    "Stnlnk": _station(""),
    "Code": _first,
    "Math": _first,
    "Mvar": _first,
    "Chem": _joined,
    "Chem2": _first,
    "Resize": _last,
    "Replace": _replace,
    "Val": _value,
    "Color": _second,
    "Legend": _legend,
    "Center": _first,
    "Overline": _first,
    "Pi": _constant("π"),
    "E": _power_of_ten,
    "Angbr": _angle_brackets,
    "Grapheme": _angle_brackets,
    "Infix": _angle_brackets,
    "Spaces": _constant(" "),
    "Col-break": _constant(" "),
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
    "Ordered list": "Unbulleted list",
    "Warship": "Ship",
    "Stnlink": "Stnlnk",
    "Colour": "Color",
    "Colored text": "Color",
    "Fgcolor": "Color",
    "Centre": "Center",
    "Ov": "Overline",
    "Nowr": "Nowrap",
    "Space": "Spaces",
    "Spcs": "Spaces",
    "Nbs": "Nbsp",
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
        "Notetag",
        "Credit",
    }
)
