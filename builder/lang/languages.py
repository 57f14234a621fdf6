"""The wikitext vocabulary of every Wikipedia language: File namespace names, image options, redirect words.

The data is ``builder/data/languages.json``, generated from MediaWiki's own language files
by ``builder/data/make_languages.py`` (see ``docs/languages.md``); this module reads it once
and answers the questions :mod:`builder.extract.wikitext` asks of a page: is ``Datei`` a name of the
File namespace, is ``hochkant=1.2`` an image option or a caption, which words start a redirect.
Matching follows MediaWiki 1.43's parser (``Parser::makeImage``, ``MagicWordArray``).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import re
from typing import NamedTuple

from builder.common import DATA

__all__ = ["ImageOption", "Language", "language_for", "language_from_dbname", "wiki_dbnames"]

TABLE = DATA / "languages.json"
CANONICAL_FILE_NAMES = ("File", "Image")  # valid on every wiki: the canonical name and English's alias
# The order in which Parser::getImageParams tries the options: literal options before those taking a
# value (T372935), the image handler's (width, then page or lang) last. The first match wins.
_PARSER_ORDER = (
    "img_left img_right img_center img_none "
    "img_baseline img_sub img_super img_top img_text_top img_middle img_bottom img_text_bottom "
    "img_thumbnail img_framed img_frameless img_border img_manualthumb img_upright img_link img_alt img_class "
    "img_width img_page img_lang"
).split()
# Options Parser::makeImage accepts only without a value or with a number (its "default" branch).
_NUMERIC_OPTIONS = frozenset(
    "img_left img_right img_center img_none img_baseline img_sub img_super img_top img_text_top img_middle "
    "img_bottom img_text_bottom img_border img_upright".split()
)
_PHP_TRIM = " \t\n\r\0\x0b"
# PHP's is_numeric() after trim(): decimal integers and floats with an optional exponent.
_PHP_NUMERIC = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Parser::parseWidthParam: "W", "WxH", "xH", with a doubled "px" tolerated.
_WIDTH_AND_HEIGHT = re.compile(r"([0-9]*)x([0-9]*)[ \t\n\r\f\v]*(?:px)?[ \t\n\r\f\v]*")
_WIDTH = re.compile(r"([0-9]*)[ \t\n\r\f\v]*(?:px)?[ \t\n\r\f\v]*")


class ImageOption(NamedTuple):
    """An image option found in a link: its magic word id (``img_width``) and its ``$1`` value, if it has one."""

    id: str
    value: str | None


@dataclasses.dataclass(frozen=True)
class MagicWord:
    """One magic word of a language: every synonym, English's included, and MediaWiki's case flag."""

    id: str
    case_sensitive: bool
    synonyms: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Language:
    """A Wikipedia's content language, or one wiki's (``wiki``: its db name), as MediaWiki parses its pages.

    ``file_namespace`` is the File namespace's name (as the dump's ``<siteinfo>`` shows it);
    ``file_namespaces`` every name MediaWiki accepts for it: that name, the aliases, the
    names in the language's script variants, the wiki's own aliases and ``File``/``Image``.
    """

    code: str
    fallbacks: tuple[str, ...]
    file_namespace: str
    file_namespaces: tuple[str, ...]
    image_words: tuple[MagicWord, ...]
    redirect: MagicWord
    wiki: str = ""

    @property
    def redirect_words(self) -> tuple[str, ...]:
        """``#REDIRECT`` and its translations (case-insensitive unless ``redirect.case_sensitive``)."""
        return self.redirect.synonyms

    def is_file_namespace(self, prefix: str) -> bool:
        """Whether a title's prefix names the File namespace.

        As ``Language::getNsIndex``: the whole name is compared case-insensitively (not only its
        first letter), underscores are spaces and runs of spaces count as one.
        """
        return _namespace_key(prefix) in self._file_namespace_keys

    @functools.cached_property
    def _file_namespace_keys(self) -> frozenset[str]:
        return frozenset(_namespace_key(name) for name in self.file_namespaces)

    def image_option(self, word: str) -> str | None:
        """The magic word id of an image option (``img_thumbnail`` for ``mini``), or None for a caption."""
        option = self.parse_image_option(word)
        return option.id if option is not None else None

    def parse_image_option(self, word: str) -> ImageOption | None:
        """The option a ``|``-separated part of an image link is, with its value; None if it is caption text.

        As ``Parser::makeImage``: the trimmed part must match a synonym whole, ``$1`` standing
        for any text on one line, case-insensitive synonyms first, then the case-sensitive ones
        (every image option, since English's flag wins the merge), each in the parser's order.
        The values MediaWiki checks are checked: a size must give a width or height above 0
        (``200px``, ``x200px``, ``200x100px``), alignment and ``upright`` take no value or a
        number. Other values are taken as MediaWiki takes them for a file that exists
        (``alt=``, ``link=``, ``page=``, ``lang=``…). A second frame option (``thumb`` after
        ``frame``) is an option here, though MediaWiki shows it as the caption.
        """
        text = word.strip(_PHP_TRIM)
        for pattern, alternatives in self._option_patterns:
            match = pattern.fullmatch(text)
            if match is None:
                continue
            assert match.lastgroup is not None
            option_id, value_group = alternatives[match.lastgroup]
            value = match.group(value_group) if value_group is not None else None
            return ImageOption(option_id, value) if _valid_value(option_id, value) else None
        return None

    @functools.cached_property
    def _option_patterns(self) -> tuple[tuple[re.Pattern[str], dict[str, tuple[str, int | None]]], ...]:
        """One regex for the case-insensitive synonyms and one for the rest, as ``MagicWordArray`` builds them."""
        patterns = []
        for case_sensitive in (False, True):
            parts: list[str] = []
            alternatives: dict[str, tuple[str, int | None]] = {}
            groups = 0
            for magic in self.image_words:
                if magic.case_sensitive != case_sensitive:
                    continue
                for synonym in magic.synonyms:
                    name = f"w{len(alternatives)}"
                    groups += 1
                    pieces = [re.escape(piece) for piece in synonym.split("$1")]
                    value_group = groups + 1 if len(pieces) > 1 else None
                    groups += len(pieces) - 1
                    parts.append(f"(?P<{name}>" + "(.*?)".join(pieces) + ")")
                    alternatives[name] = (magic.id, value_group)
            if parts:
                flags = 0 if case_sensitive else re.IGNORECASE
                patterns.append((re.compile("|".join(parts), flags), alternatives))
        return tuple(patterns)


def _namespace_key(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).lower()


def _valid_value(option_id: str, value: str | None) -> bool:
    """Whether ``Parser::makeImage`` keeps an option with this value (else the text is caption)."""
    if option_id == "img_width":
        return value is not None and _size_is_valid(value)
    if option_id in _NUMERIC_OPTIONS:
        return value is None or _PHP_NUMERIC.fullmatch(value.strip(_PHP_TRIM)) is not None
    return True


def _size_is_valid(value: str) -> bool:
    """``Parser::parseWidthParam`` gives a width or a height above 0 (what ``validateParam`` asks)."""
    both = _WIDTH_AND_HEIGHT.fullmatch(value)
    if both is not None:
        return int(both.group(1) or 0) > 0 or int(both.group(2) or 0) > 0
    width = _WIDTH.fullmatch(value)
    return width is not None and int(width.group(1) or 0) > 0


@functools.cache
def _table() -> dict:
    try:
        with TABLE.open(encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError) as error:
        raise RuntimeError(
            f"{TABLE}: cannot read the languages table ({error}); regenerate it, see docs/languages.md"
        ) from error


def table_source() -> dict:
    """Where the table comes from: MediaWiki's version and commit, the wiki list's source."""
    return _table()["source"]


def language_codes() -> tuple[str, ...]:
    """The content language codes of all Wikipedias, sorted."""
    return tuple(sorted(_table()["languages"]))


def wiki_dbnames() -> tuple[str, ...]:
    """The db names of all Wikipedias (``dewiki``, ``be_x_oldwiki``, ``simplewiki`` …), sorted."""
    return tuple(sorted(_table()["wikis"]))


def _unknown(kind: str, name: str, known: list[str]) -> ValueError:
    near = difflib.get_close_matches(name.strip().lower(), known, n=5, cutoff=0.6)
    hint = f"; near matches: {', '.join(near)}" if near else "; no near match"
    return ValueError(f"unknown Wikipedia {kind} {name!r}{hint} (see {TABLE.name})")


def language_from_dbname(dbname: str) -> str:
    """The content language code of a Wikipedia by its db name: ``dewiki`` → ``de``, ``alswiki`` → ``gsw``."""
    wikis = _table()["wikis"]
    if dbname not in wikis:
        raise _unknown("db name", dbname, sorted(wikis))
    return wikis[dbname]["language"]


@functools.cache
def language_for(code_or_dbname: str) -> Language:
    """The language of a code (``de``) or of one wiki by db name (``dewiki``, with that wiki's own names).

    Raises ValueError naming the code and the nearest known ones when the table has neither.
    """
    table = _table()
    wiki = table["wikis"].get(code_or_dbname)
    code = wiki["language"] if wiki is not None else code_or_dbname
    if code not in table["languages"]:
        raise _unknown("language code or db name", code_or_dbname, sorted([*table["languages"], *table["wikis"]]))
    record = table["languages"][code]
    english = table["languages"]["en"]["magic_words"]
    words = {**english, **record.get("magic_words", {})}
    order = [name for name in _PARSER_ORDER if name in table["image_options"]]
    order += [name for name in table["image_options"] if name not in order]
    file_namespace = record["file_namespace"]
    names = [file_namespace, *record["file_aliases"], *record.get("file_variant_names", [])]
    if wiki is not None:
        file_namespace = wiki.get("file_namespace", file_namespace)
        names = [file_namespace, *names[1:], *wiki.get("file_aliases", [])]
    return Language(
        code=code,
        fallbacks=tuple(record["fallbacks"]),
        file_namespace=file_namespace,
        file_namespaces=tuple(dict.fromkeys([*names, *CANONICAL_FILE_NAMES])),
        image_words=tuple(_magic_word(name, words[name]) for name in order),
        redirect=_magic_word("redirect", words["redirect"]),
        wiki=code_or_dbname if wiki is not None else "",
    )


def _magic_word(name: str, entry: list) -> MagicWord:
    return MagicWord(name, bool(entry[0]), tuple(entry[1:]))
