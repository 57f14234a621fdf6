"""Inline templates of every Wikipedia edition that print caption text, and the no-hole rule.

English templates are rendered by :mod:`builder.extract.templates`; other editions write
their own (``{{nombre|130|années}}``, ``{{84e|Congrès}}``, ``{{仮リンク|…}}``). The shipped
table ``builder/data/inline_templates.json`` says, per edition, how each prints its text
(a *shape*: a parameter, the parameters joined, a text with parameters in it, or nothing),
and a user's table of the same shape extends it (``--inline-templates``). MediaWiki's parser
functions that print text (``formatnum``, ``lc``, ``uc``, ``lcfirst``, ``ucfirst``) are
rendered in every edition.

The no-hole rule: a caption holding a template that none of these renders would be published
with a hole where its text stood, so it is dropped and counted by template name instead. It
is the default for every edition but English, whose default stays the authors' cleaning
(unknown templates cut out, as their extractor does); see ``docs/cleaning.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from pathlib import Path

from builder.common import DATA, read_language_table
from builder.extract.templates import Arguments, template_key

__all__ = [
    "INLINE_TABLE",
    "CaptionRules",
    "InlineTable",
    "UNRENDERED_POLICIES",
    "caption_rules",
    "inline_templates",
    "parser_function",
    "read_inline_table",
    "whole_captions",
]

INLINE_TABLE = DATA / "inline_templates.json"
SHAPES = ("first_of", "joined", "format", "silent")
# auto: the no-hole rule for every edition but English (and for English in a cross-lingual build);
# drop: the rule for every edition; cut: the authors' cleaning everywhere (unknown templates cut out)
UNRENDERED_POLICIES = ("auto", "drop", "cut")
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclasses.dataclass(frozen=True)
class InlineTemplate:
    """How one template prints its text (see the ``about`` of the shipped table)."""

    shape: str
    parameters: tuple[str, ...] = ("1",)
    text: str = ""
    separator: str = " "

    def render(self, title: str, args: Arguments) -> str:
        if self.shape == "first_of":
            return next((value for value in (args.get(name) for name in self.parameters) if value), "")
        if self.shape == "joined":
            return self.separator.join(value for value in args.positional() if value)
        if self.shape == "format":
            text = _PLACEHOLDER.sub(lambda match: title if match[1] == "name" else args.get(match[1]), self.text)
            return " ".join(text.split()) if text.strip() else text
        return ""


@dataclasses.dataclass(frozen=True)
class InlineTable:
    """One edition's inline templates, by title and by a pattern of titles; ``source`` names the tables read."""

    language: str
    titles: Mapping[str, InlineTemplate]
    patterns: tuple[tuple[re.Pattern[str], InlineTemplate], ...] = ()
    source: str = "builder/data/inline_templates.json"

    def find(self, title: str) -> InlineTemplate | None:
        found = self.titles.get(title)
        if found is None:
            found = next((entry for pattern, entry in self.patterns if pattern.fullmatch(title)), None)
        return found


_Entries = dict[str, list[tuple[str | re.Pattern[str], InlineTemplate]]]


def read_inline_table(path: str | Path) -> _Entries:
    """The entries per language of an inline template table (the shipped one, or a user's of the same shape).

    Raises ValueError naming the file and the entry that is not a template with a known shape.
    """
    languages = read_language_table(path, "inline template table", "TEMPLATE")
    entries: _Entries = {}
    for code, items in languages.items():
        entries[code] = []
        for number, item in enumerate(items):
            place = f"{path}: languages.{code}[{number}]"
            entries[code].extend(_entry(item, place))
    return entries


def _entry(item: object, place: str) -> list[tuple[str | re.Pattern[str], InlineTemplate]]:
    """One item of a table: its titles (or its pattern), each with how it prints."""
    if not isinstance(item, dict) or item.get("shape") not in SHAPES:
        raise ValueError(f"{place} needs a 'shape', one of {', '.join(SHAPES)}")
    names, pattern = item.get("names"), item.get("pattern")
    if names is None and pattern is None or names is not None and pattern is not None:
        raise ValueError(f"{place} needs either 'names' (a list of template titles) or 'pattern'")
    parameters = item.get("parameters", ["1"])
    text, separator = item.get("text", ""), item.get("separator", " ")
    if not isinstance(parameters, list) or not all(isinstance(name, (str, int)) for name in parameters):
        raise ValueError(f"{place}: 'parameters' is a list of parameter names or numbers")
    if not isinstance(text, str) or not isinstance(separator, str):
        raise ValueError(f"{place}: 'text' and 'separator' are strings")
    if item["shape"] == "format" and not text:
        raise ValueError(f"{place}: a 'format' template needs its 'text'")
    entry = InlineTemplate(item["shape"], tuple(str(name).strip() for name in parameters), text, separator)
    if pattern is not None:
        try:
            return [(re.compile(str(pattern)), entry)]
        except re.error as error:
            raise ValueError(f"{place}: 'pattern' is not a regular expression ({error})") from None
    if not isinstance(names, list) or not names or not all(isinstance(name, str) and name.strip() for name in names):
        raise ValueError(f"{place}: 'names' is a non-empty list of template titles")
    return [(template_key(name), entry) for name in names]


@functools.cache
def _shipped() -> _Entries:
    return read_inline_table(INLINE_TABLE)


def inline_templates(code: str, user: _Entries | None = None, user_source: str = "") -> InlineTable:
    """The inline templates captions of language ``code`` are rendered with: a user's entries, then the shipped ones."""
    titles: dict[str, InlineTemplate] = {}
    patterns: list[tuple[re.Pattern[str], InlineTemplate]] = []
    for entries in (_shipped().get(code, []), (user or {}).get(code, [])):
        for key, entry in entries:
            if isinstance(key, str):
                titles[key] = entry  # the later table wins
            else:
                patterns.insert(0, (key, entry))
    source = "builder/data/inline_templates.json" + (f" and {user_source}" if user_source else "")
    return InlineTable(code, titles, tuple(patterns), source)


def whole_captions(code: str, policy: str = "auto", crosslingual: bool = False) -> bool:
    """Whether the no-hole rule applies to captions of language ``code`` under ``policy``."""
    if policy not in UNRENDERED_POLICIES:
        raise ValueError(f"unrendered templates: choose one of {', '.join(UNRENDERED_POLICIES)}, not {policy!r}")
    return policy == "drop" or (policy == "auto" and (code != "en" or crosslingual))


@dataclasses.dataclass(frozen=True)
class CaptionRules:
    """How one edition's captions are rendered: with its inline table (None: English's renderers alone, the
    authors' cleaning), and whether one holding a template nothing renders is dropped (the no-hole rule)."""

    table: InlineTable | None
    whole: bool

    def describe(self) -> str:
        """What a dataset card says of them."""
        if self.table is None:
            return "the authors' cleaning: English's renderers, other templates cut out"
        if not self.whole:
            return f"the inline templates of {self.table.source}; other templates cut out"
        return (
            f"the inline templates of {self.table.source}; a caption holding another template is dropped and "
            "counted (no holes)"
        )


def caption_rules(
    code: str, policy: str = "auto", crosslingual: bool = False, user: _Entries | None = None, user_source: str = ""
) -> CaptionRules:
    """The rules for captions of language ``code``: English under ``auto`` keeps the authors' cleaning exactly."""
    whole = whole_captions(code, policy, crosslingual)
    if code == "en" and not whole:
        return CaptionRules(None, False)
    return CaptionRules(inline_templates(code, user, user_source), whole)


# MediaWiki's parser functions that print their argument changed (Parser::lc, uc, lcfirst, ucfirst,
# formatnum); English names are valid in every language; French names from MessagesFr.php.
_FUNCTIONS = {
    "lc": str.lower,
    "minus": str.lower,
    "uc": str.upper,
    "majus": str.upper,
    "capit": str.upper,
    "lcfirst": lambda text: text[:1].lower() + text[1:],
    "initminus": lambda text: text[:1].lower() + text[1:],
    "ucfirst": lambda text: text[:1].upper() + text[1:],
    "initmajus": lambda text: text[:1].upper() + text[1:],
    "initcapit": lambda text: text[:1].upper() + text[1:],
    "formatnum": lambda text: text,  # the number as written; MediaWiki adds the edition's digit separators
    "formatnombre": lambda text: text,
}
# {{#tag:ref|…}} is a footnote, which a caption does not show
_SILENT_TAGS = frozenset({"ref", "references"})


def parser_function(name: str, argument: str) -> str | None:
    """The text of ``{{name:argument}}`` when ``name`` is a parser function that prints text, else None."""
    function = name.strip().casefold()
    if function in _FUNCTIONS:
        return _FUNCTIONS[function](argument.strip())
    if function in ("#tag", "#balise") and argument.strip().casefold() in _SILENT_TAGS:
        return ""
    return None
