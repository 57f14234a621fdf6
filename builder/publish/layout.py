"""The layout of a built folder, and its one reader: which files a build writes (card,
``funnel.json``, the marker), where a config's files are, and which files a reader may load.

:func:`read_built` (a whole folder, by its card) and :func:`read_config` (one config folder, by
its ``funnel.json``) are how every reader of a build finds its pairs: the ``datasets`` loader,
the scorer (``python -m metrics score``) and the corpus comparison.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import yaml
from huggingface_hub.repocard import metadata_load

from builder.common import OutputError

__all__ = [
    "BUILD",
    "CARD",
    "CONFIG_ORDER",
    "FORMAT",
    "FUNNEL",
    "MARKER",
    "card_build",
    "card_configs",
    "card_manifest",
    "config_folder",
    "config_record",
    "funnel_manifest",
    "is_plain_name",
    "manifest_files",
    "read_built",
    "read_config",
    "refusal",
    "split_of_file",
]


MARKER = "wikipedia_ipc"
BUILD = "build"  # the key of a build's id in the card's and funnel.json's entry
FORMAT = 1
CARD = "README.md"
FUNNEL = "funnel.json"
CONFIG_ORDER = {"gold": 0, "silver": 1, "bronze": 2}
SPLIT_ORDER = ("train", "validation", "test")


def funnel_manifest(path: Path) -> dict | None:
    """The ``wikipedia_ipc`` entry of a funnel.json, or None if the toolkit did not write it."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    manifest = record.get(MARKER) if isinstance(record, dict) else None
    return manifest if isinstance(manifest, dict) else None


def card_manifest(path: Path) -> dict | None:
    """The ``wikipedia_ipc`` entry of a dataset card's YAML, or None if the toolkit did not write it."""
    if not path.is_file():
        return None
    try:
        metadata = metadata_load(path)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):
        return None
    manifest = metadata.get(MARKER) if isinstance(metadata, dict) else None
    return manifest if isinstance(manifest, dict) else None


def is_plain_name(entry: object) -> bool:
    """One path component the toolkit could have written: no separator, no ``..``, not hidden."""
    return isinstance(entry, str) and bool(entry) and not entry.startswith(".") and not set(entry) & set("/\\\x00")


def is_output_file(entry: object) -> bool:
    """A file of a config the toolkit writes: a parquet file of pairs, or a scored copy's map (``map-<hash>.png``)."""
    return is_plain_name(entry) and (
        str(entry).endswith(".parquet") or (str(entry).startswith("map-") and str(entry).endswith(".png"))
    )


def refusal(record: Path, what: str, entry: object) -> OutputError:
    return OutputError(
        f"{record}: the {what} {entry!r} is not a plain name inside the output folder; refusing to move or "
        "delete any file by this record (it was not written this way by the toolkit)"
    )


def manifest_files(manifest: dict, record: Path) -> list[str]:
    """The files a ``wikipedia_ipc`` entry lists, each a plain ``*.parquet`` (or a scored copy's ``map-*.png``) name,
    else an OutputError."""
    files = manifest.get("files")
    if not isinstance(files, list):
        raise OutputError(f"{record}: the `wikipedia_ipc` entry has no list of files")
    for entry in files:
        if not is_output_file(entry):
            raise refusal(record, "file", entry)
    return files


def config_folder(output: Path, name: object, record: Path) -> Path:
    """The folder of a config a record names: a plain name whose folder resolves inside the output folder."""
    if not is_plain_name(name):
        raise refusal(record, "config", name)
    folder = output / str(name)
    if not folder.resolve().is_relative_to(output.resolve()):
        raise OutputError(
            f"{record}: the config {name!r} leads out of the output folder ({folder} is a link to "
            f"{folder.resolve()}); refusing to write or delete there"
        )
    return folder


def card_configs(output: Path) -> dict[str, list[str]] | None:
    """The configs of the build in the folder, as its card names them, each with its parquet files.

    The card is the build's record: a folder holding a ``funnel.json`` is no config unless
    the card names it (a user's copy ``gold-backup/`` is not one). None if the card is not ours.
    """
    card = output / CARD
    manifest = card_manifest(card)
    if manifest is None:
        return None
    configs = manifest.get("configs")
    if not isinstance(configs, dict):
        raise OutputError(f"{card}: the `wikipedia_ipc` entry has no `configs`")
    checked = {}
    for name, entry in configs.items():
        config_folder(output, name, card)
        if not isinstance(entry, dict):
            raise OutputError(f"{card}: the `wikipedia_ipc` entry of config {name!r} lists no files")
        checked[name] = manifest_files(entry, card)
    return checked


def card_build(output: Path, name: str | None = None) -> str | None:
    """The id of the build that wrote the card (``name`` None) or the named config; None for a card without ids."""
    manifest = card_manifest(output / CARD) or {}
    entry = manifest if name is None else (manifest.get("configs") or {}).get(name)
    build = entry.get(BUILD) if isinstance(entry, dict) else None
    return build if isinstance(build, str) else None


def _unfinished(output: Path, funnel: Path, what: str) -> OutputError:
    return OutputError(
        f"{funnel}: {what}: a build was stopped while it published its files (the card is the last file to "
        f"switch); the next build into {output}, wikipedia-ipc push, or python -m metrics score finishes it"
    )


def config_record(output: Path, name: str, files: Sequence[str]) -> dict:
    """The ``funnel.json`` record of a config the card names: the toolkit's, of this config and of the card's
    build, with the card's files. A funnel.json of another build than the card names is an unfinished publish."""
    funnel = config_folder(output, name, output / CARD) / FUNNEL
    manifest = funnel_manifest(funnel)
    if manifest is None:
        raise OutputError(f"{funnel}: missing or not written by the toolkit, but the card lists config {name!r}")
    record = json.loads(funnel.read_text(encoding="utf-8"))
    if record.get("config") != name:
        raise OutputError(
            f"{funnel}: describes config {record.get('config')!r}, not {name!r}, the folder it is in and the name "
            "the card gives it"
        )
    expected = card_build(output, name)
    if manifest.get(BUILD) != expected:
        raise _unfinished(output, funnel, f"of build {manifest.get(BUILD)}, but the card names build {expected}")
    if manifest_files(manifest, funnel) != list(files):
        raise _unfinished(output, funnel, "lists other parquet files than the card")
    return record


def split_of_file(file: Path | str) -> str:
    """The split of a file named ``{split}-XXXXX-of-YYYYY-<hash>.parquet``."""
    return Path(file).name.split("-", 1)[0]


@dataclasses.dataclass(frozen=True)
class BuiltConfig:
    """One config of a built folder as a reader sees it: its ``funnel.json`` record and the parquet files of its
    pairs (a scored copy's map beside them is listed in the records, not here)."""

    name: str
    folder: Path
    record: dict
    files: tuple[Path, ...]

    @property
    def pairs(self) -> bool:
        """Whether the config's rows are pairs: not a references config's records, nor a Déjà config's caption–image
        edges (its ``funnel.json`` parameters say which); scorers and comparisons read only pairs."""
        parameters = self.record.get("parameters", {})
        return not parameters.get("references") and parameters.get("deja") != "captions"

    def splits(self) -> dict[str, list[Path]]:
        """The config's files per split, in ``train``, ``validation``, ``test`` order; splits without files left out."""
        ordered = sorted(self.files, key=lambda file: (_split_rank(split_of_file(file)), file.name))
        found: dict[str, list[Path]] = {}
        for file in ordered:
            found.setdefault(split_of_file(file), []).append(file)
        return found


def _split_rank(split: str) -> int:
    return SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER)


def read_built(output: Path) -> dict[str, BuiltConfig]:
    """Every config of the build in ``output``, as its card names them; OutputError if the folder holds none.

    Only the files the card lists are the build's (a user's files beside them are not pairs); a
    missing one is an error, not a smaller corpus.
    """
    configs = card_configs(output)
    if configs is None:
        raise OutputError(f"{output}: not a Wikipedia-IPC folder (no {CARD} with a `{MARKER}` entry)")
    built = {}
    for name, names in configs.items():
        record = config_record(output, name, names)
        files = tuple(output / name / file for file in names if file.endswith(".parquet"))
        missing = [str(file) for file in files if not file.is_file()]
        if missing:
            raise OutputError(f"{output / name}: the card lists parquet files that are missing: {', '.join(missing)}")
        built[name] = BuiltConfig(name, output / name, record, files)
    return built


def read_config(folder: Path) -> BuiltConfig:
    """One config folder on its own: the parquet files its ``funnel.json`` names, else every ``*.parquet`` in it."""
    funnel = folder / FUNNEL
    manifest = funnel_manifest(funnel)
    if manifest is None:
        return BuiltConfig(folder.name, folder, {}, tuple(sorted(folder.glob("*.parquet"))))
    files = tuple(folder / name for name in manifest_files(manifest, funnel) if name.endswith(".parquet"))
    record = json.loads(funnel.read_text(encoding="utf-8"))
    return BuiltConfig(str(record.get("config", folder.name)), folder, record, files)
