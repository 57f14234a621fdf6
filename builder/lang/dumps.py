"""The language of a dump's pages: given by ``--language`` (a code, a db name or a subdomain), or
told by the dump's ``<dbname>``, or by the Wikipedia its ``<base>`` URL names; read from every
dump's ``<siteinfo>`` before any page is, so that a build knows its languages before it starts.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from builder.lang.languages import language_for, language_from_dbname, wiki_dbnames
from builder.storage import resolved

__all__ = ["dump_language", "given_language", "language_overrides"]

if TYPE_CHECKING:
    from builder.sources.xml import SiteInfo


def language_overrides(dumps: Sequence[str | Path], languages: str | Mapping[str, str] | None) -> dict[str, str]:
    """``--language`` per dump: one code for every dump, or a code for some of them, keyed by the dump's
    :func:`~builder.storage.resolved` name, so that a relative, an absolute or a linked spelling of one file
    (the Spark engine's one task makes the dumps absolute) finds its language; :func:`given_language` reads it."""
    if languages is None:
        return {}
    if isinstance(languages, str):
        return {resolved(dump): languages for dump in dumps}
    given: dict[str, str] = {}
    for dump, code in languages.items():
        if given.setdefault(resolved(dump), code) != code:
            raise ValueError(f"{dump} is given two languages, {given[resolved(dump)]} and {code}")
    known = {resolved(dump) for dump in dumps}
    unknown = [str(dump) for dump in languages if resolved(dump) not in known]
    if unknown:
        raise ValueError(f"a language is given for {', '.join(unknown)}, which is not among the dumps of the build")
    return given


def given_language(given: Mapping[str, str], dump: str | Path) -> str | None:
    """The language :func:`language_overrides` gives ``dump``, whichever way its path is spelled."""
    return given.get(resolved(dump))


def dump_language(path: Path, siteinfo: SiteInfo, given: str | None) -> tuple[str, str]:
    """A dump's content language and its wiki's db name (``""`` when not known).

    ``given`` (``--language``) is a language code (``de``), a wiki's db name (``alswiki``) or
    its subdomain (``als``, ``simple``); without it the dump's ``<dbname>`` decides, or, in a dump
    without one, the Wikipedia its ``<base>`` URL names (``https://de.wikipedia.org/…``); a dump
    with neither is English. A ``<dbname>`` that names no Wikipedia is refused before any reading.
    """
    if given:
        return resolve_language(given)
    dbname = siteinfo.dbname or _base_dbname(siteinfo.base)
    if not dbname:
        return "en", ""
    if dbname not in wiki_dbnames():
        raise ValueError(
            f"{path}: its <dbname> {dbname!r} names no Wikipedia the toolkit knows; "
            "give the language of its pages with --language CODE"
        )
    return language_from_dbname(dbname), dbname


def _base_dbname(base: str) -> str:
    """The db name of the Wikipedia a ``<base>`` URL points into (``https://de.wikipedia.org/wiki/…`` → ``dewiki``)."""
    host = urllib.parse.urlsplit(base.strip()).hostname or ""
    subdomain, _, domain = host.partition(".")
    if domain != "wikipedia.org" or not subdomain:
        return ""
    dbname = subdomain.replace("-", "_") + "wiki"
    return dbname if dbname in wiki_dbnames() else ""


def resolve_language(name: str) -> tuple[str, str]:
    """``(language code, wiki db name)`` for a language code, a db name or a wiki's subdomain."""
    wikis = wiki_dbnames()
    if name in wikis:
        return language_from_dbname(name), name
    dbname = name.replace("-", "_") + "wiki"
    if dbname in wikis:
        return language_from_dbname(dbname), dbname
    return language_for(name).code, ""  # raises, naming the nearest known codes, for an unknown one
