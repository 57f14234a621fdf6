"""Which template parameters hold an image, its caption and its alt text, per language
(``Bild``/``Bildbeschreibung`` in German infoboxes): the shipped table
``builder/data/template_parameters.json``, or a user's table of the same shape that extends it.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from builder.common import DATA, read_language_table

__all__ = ["ParameterGroup", "read_parameter_table", "template_parameters"]

PARAMETER_TABLE = DATA / "template_parameters.json"
_ROLES = ("image", "caption", "alt")


@dataclasses.dataclass(frozen=True)
class ParameterGroup:
    """The parameter names of one image of a template: its file, caption and alt text (``Bild``/``Untertitel``).

    With ``counter``, the names also match followed by a number, one image per number (``Bild1``, ``Untertitel1``).
    """

    image: str
    caption: str = ""
    alt: str = ""
    counter: bool = False


def read_parameter_table(path: str | Path) -> dict[str, tuple[ParameterGroup, ...]]:
    """The groups per language of a parameter table (the shipped one, or a user's of the same shape).

    Raises ValueError naming the file and the entry that is not a list of groups with an ``image`` name.
    """
    languages = read_language_table(path, "template parameter table", "GROUP")
    groups: dict[str, tuple[ParameterGroup, ...]] = {}
    for code, entries in languages.items():
        if not entries:
            raise ValueError(f"{path}: languages.{code} must be a list of groups")
        parsed = []
        for number, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("image"), str) or not entry["image"].strip():
                raise ValueError(f"{path}: languages.{code}[{number}] needs an 'image' parameter name")
            names = {role: entry.get(role) or "" for role in _ROLES}
            if not all(isinstance(name, str) and "=" not in name and "|" not in name for name in names.values()):
                raise ValueError(f"{path}: languages.{code}[{number}]: a parameter name is text without '=' or '|'")
            parsed.append(
                ParameterGroup(
                    **{role: name.strip() for role, name in names.items()}, counter=bool(entry.get("counter"))
                )
            )
        groups[code] = tuple(parsed)
    return groups


@functools.cache
def _shipped_parameters() -> dict[str, tuple[ParameterGroup, ...]]:
    return read_parameter_table(PARAMETER_TABLE)


def template_parameters(
    code: str, user: dict[str, tuple[ParameterGroup, ...]] | None = None
) -> tuple[ParameterGroup, ...]:
    """The template parameter groups a page of language ``code`` is read with: its own, then English's.

    A user table's groups for a language replace the shipped ones; English's group (the
    paper's ``image``/``caption``/``alt`` with a counter) is read on every wiki, since many
    editions import English templates with their parameter names.
    """
    tables = [user or {}, _shipped_parameters()]
    own = next((table[code] for table in tables if code in table), ())
    english = next(table["en"] for table in tables if "en" in table)
    return own if code == "en" else own + english
