"""The corpora of a comparison (:mod:`metrics.compare`), chosen and checked before anything is scored.

They come from ``--corpus NAME[=PATH]`` options and a config file's ``corpora``, or, with neither
(or with ``--default-corpora``), from :func:`default_selection`: the comparison a reader of the paper
expects. :func:`select` refuses a name given twice, a path that does not exist and a folder where a
file of pairs is expected, each in one line, and turns a built folder (``--corpus
wikipedia_ipc=wikipedia_ipc/``) into one corpus per config. :func:`prepare_all` then reads every
corpus (or finds its cached scores) before the first is scored, so that a bad corpus stops the run
before any scoring, and before the output folder is made.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from builder.common import OutputError
from builder.publish.layout import CARD, CONFIG_ORDER, card_manifest, read_built
from builder.publish.layout import read_config as read_built_config
from metrics.corpora import (
    CORPORA,
    HUB_COPIES,
    PAIRS_FILE_SUFFIXES,
    CorpusError,
    HubUnavailable,
    PairRecord,
    ReadReport,
    load,
    load_hub,
    no_hub_copy,
    read_pairs_file,
    sample,
)
from metrics.language import LanguageMismatch, check_english, is_english

CONFIG_KEYS = ("corpora", "profile", "threshold", "sample", "seed", "output", "language")
CACHE_FORMAT = 2  # raise when the cached table's columns change, so that old caches are not read
USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # it names cache files and maps
BUILD = Path("wikipedia_ipc")  # where ``python wikipedia_ipc.py build`` writes by default
FIXTURES_RUN = "python benchmarks/compare.py --config benchmarks/fixtures.json"


def file_stem(name: str) -> str:
    """A corpus's name in file names (cache, maps): a build's ``wikipedia_ipc/gold`` is ``wikipedia_ipc-gold``."""
    return name.replace("/", "-")


@dataclasses.dataclass(frozen=True)
class Source:
    """One corpus of the comparison, one row of its table."""

    name: str  # a corpus (msrpc), a user's name, or a build's config (wikipedia_ipc/gold)
    corpus: str | None  # its reader in CORPORA; None for a user's file of pairs
    path: Path | None  # None: its Hub copy

    @property
    def where(self) -> str:
        """Its path, or its Hub dataset, for messages."""
        return str(self.path) if self.path is not None else HUB_COPIES[str(self.corpus)].dataset


@dataclasses.dataclass(frozen=True)
class Selection:
    """The corpora to compare, whether the default set is among them, and what a default run leaves out."""

    sources: tuple[Source, ...]
    default: bool
    left_out: tuple[str, ...] = ()  # each: a corpus, why it is not compared, and the option that adds it


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A corpus read and checked, ready to be scored: its pairs, or None when its scores are cached."""

    source: Source
    target: Path  # the cache file of its scores
    records: list[PairRecord] | None


def read_config(path: Path) -> dict[str, object]:
    """The JSON config, checked: only known keys, each once; ``corpora`` an object of NAME: PATH (or null)."""

    def once(pairs: list[tuple[str, object]]) -> dict[str, object]:
        keys = [key for key, _ in pairs]
        twice = next((key for key in keys if keys.count(key) > 1), None)
        if twice is not None:  # json would keep the last one and drop the other silently
            raise CorpusError(f"{path}: {twice!r} appears twice in one object; give each corpus and setting once")
        return dict(pairs)

    try:
        settings = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=once)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorpusError(f"{path}: cannot read the config ({error})") from None
    if not isinstance(settings, dict):
        raise CorpusError(f"{path}: the config must be a JSON object with the keys {', '.join(CONFIG_KEYS)}")
    unknown = sorted(set(settings) - set(CONFIG_KEYS))
    if unknown:
        raise CorpusError(f"{path}: unknown config key {unknown[0]!r}; expected {', '.join(CONFIG_KEYS)}")
    corpora = settings.get("corpora", {})
    if not isinstance(corpora, dict) or not all(value is None or isinstance(value, str) for value in corpora.values()):
        raise CorpusError(f"{path}: 'corpora' must map corpus names to paths (or null for the Hub copy)")
    return settings


def select(arguments: argparse.Namespace) -> Selection:
    """``--corpus NAME[=PATH]`` options and/or the config's corpora (no path: the Hub copy), each checked.

    Relative paths in a config file are read from the config file's folder, so that a config in
    the repository runs from anywhere; a ``--corpus`` of a name the config gives replaces it (and
    says so). With no corpus named, or with ``--default-corpora``, the default set
    (:func:`default_selection`) is compared, a corpus named replacing its default copy.
    """
    given: dict[str, tuple[Path | None, str]] = {}  # name: path, and where it was given
    config_names_corpora = False
    if arguments.config:
        config = Path(arguments.config)
        settings = read_config(config)
        config_names_corpora = "corpora" in settings
        for name, path in settings.get("corpora", {}).items():  # type: ignore[union-attr]
            given[name] = (None if path is None else config.parent / path, str(config))
    options: dict[str, str] = {}
    for option in arguments.corpus or []:
        name, equals, path = option.partition("=")
        if equals and not path:
            raise CorpusError(f"--corpus {option!r}: expected NAME=PATH, or NAME alone for the Hub copy")
        if name in options:  # the table has one row per name: the later one would replace the earlier
            raise CorpusError(
                f"--corpus {name} given twice ({options[name]}, {option}): name each corpus once (a second file of "
                "pairs under a name of its own)"
            )
        options[name] = option
        if name in given:
            print(f"{name}: --corpus {option} replaces the corpus {given[name][1]} gives")
        given[name] = (Path(path) if equals else None, f"--corpus {option}")
    if config_names_corpora and not given:
        raise CorpusError(f"{arguments.config}: 'corpora' names no corpus")
    chosen = [source for name, (path, _) in given.items() for source in _sources(name, path)]
    if chosen and not arguments.default_corpora:
        return Selection(_unique_files(chosen), default=False)
    defaults = default_selection()
    named = {source.corpus for source in chosen}  # a corpus named replaces its default copy
    kept = [source for source in defaults.sources if source.corpus not in named]
    order = {name: index for index, name in enumerate(CORPORA)}
    both = sorted([*kept, *chosen], key=lambda source: order.get(str(source.corpus), len(order)))
    left_out = tuple(note for note in defaults.left_out if note.partition(":")[0] not in named)
    return Selection(_unique_files(both), default=True, left_out=left_out)


def default_selection(build: Path = BUILD) -> Selection:
    """The comparison a reader of the paper expects: the build in ``./wikipedia_ipc`` (when there is one)
    against every corpus with a Hub copy; the corpora that need a path are left out, with the option that
    adds them."""
    sources: list[Source] = []
    left_out = []
    if build.is_dir() and card_manifest(build / CARD) is not None:
        sources.extend(build_sources(build))
    else:
        left_out.append(
            f"wikipedia_ipc: no build in {build}/ (python wikipedia_ipc.py build writes one there); add one with "
            "--default-corpora --corpus wikipedia_ipc=PATH"
        )
    sources.extend(Source(name, name, None) for name in CORPORA if name in HUB_COPIES)
    left_out.extend(
        f"{name}: no Hub copy; add it with --default-corpora --corpus {name}=PATH"
        for name in CORPORA
        if name not in HUB_COPIES and name != "wikipedia_ipc"
    )
    return Selection(tuple(sources), default=True, left_out=tuple(left_out))


def build_sources(folder: Path) -> list[Source]:
    """A folder built by this toolkit: each config its card names, one corpus ``wikipedia_ipc/CONFIG``."""
    try:
        built = read_built(folder)
    except OutputError as error:
        raise CorpusError(f"{error} (corpus wikipedia_ipc)") from None
    paired = [name for name in built if built[name].pairs]  # records and Déjà's edges are no pairs to compare
    if not paired:
        raise CorpusError(f"{folder}: no config of pairs ({', '.join(sorted(built))}) (corpus wikipedia_ipc)")
    names = sorted(paired, key=lambda name: (CONFIG_ORDER.get(name, len(CONFIG_ORDER)), name))
    return [Source(f"wikipedia_ipc/{name}", "wikipedia_ipc", built[name].folder) for name in names]


def _sources(name: str, path: Path | None) -> list[Source]:
    """The corpora one NAME[=PATH] gives, checked to exist (a build's folder gives one per config)."""
    if name in CORPORA:
        if path is None:
            if name not in HUB_COPIES:
                raise CorpusError(no_hub_copy(name))
            return [Source(name, name, None)]
        if not path.exists():
            raise CorpusError(f"{path}: no such file or folder (corpus {name})")
        if name == "wikipedia_ipc" and path.is_dir() and card_manifest(path / CARD) is not None:
            return build_sources(path)
        return [Source(name, name, path)]
    if path is None:
        raise CorpusError(
            f"unknown corpus {name!r}; choose from {', '.join(CORPORA)}, or give a file of pairs: {name}=PATH"
        )
    if not USER_NAME.match(name):
        raise CorpusError(f"--corpus {name}={path}: a name of letters, digits, '_', '.' and '-' (it names files)")
    kinds = ", ".join(PAIRS_FILE_SUFFIXES)
    if path.suffix not in PAIRS_FILE_SUFFIXES:
        raise CorpusError(
            f"{path}: {name!r} is no known corpus ({', '.join(CORPORA)}), so PATH is a file of pairs: {kinds}"
        )
    if path.is_dir():
        raise CorpusError(f"{path}: a folder, not a file of pairs (corpus {name}: one {kinds} file)")
    if not path.exists():
        raise CorpusError(f"{path}: no such file (corpus {name}, a file of pairs)")
    return [Source(name, None, path)]


def _unique_files(sources: list[Source]) -> tuple[Source, ...]:
    """The sources, refused if two would write the same files (``wikipedia_ipc-gold`` and a build's gold)."""
    seen: dict[str, str] = {}
    for source in sources:
        stem = file_stem(source.name)
        if stem in seen:
            raise CorpusError(
                f"corpora {seen[stem]!r} and {source.name!r} would share the files maps/{stem}.png and their cached "
                "scores; give the file of pairs another name"
            )
        seen[stem] = source.name
    return tuple(sources)


def fingerprint(origin: str, files: list[Path], size: int | None, seed: int, metric: str) -> str:
    """A cache key: where the corpus came from, its files (path, size, modification time), the sample, the metric."""
    digest = hashlib.sha256(f"{CACHE_FORMAT}|{origin}|{size}|{seed}|{metric}".encode())
    for file in files:
        stat = file.stat()
        digest.update(f"|{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _files(source: Source) -> list[Path]:
    """The files a corpus is read from (for its cache key): a build's config, only the files the build wrote."""
    assert source.path is not None
    if source.corpus is None:
        return [source.path]
    if source.corpus == "wikipedia_ipc" and source.path.is_dir():
        return list(read_built_config(source.path).files)
    return CORPORA[source.corpus].files(source.path)


def prepare(source: Source, arguments: argparse.Namespace, cache: Path, metric: Callable[[], str]) -> Prepared:
    """A corpus read and checked (it exists, is readable, has pairs in the right columns, in the language
    given), sampled, or its cached scores found; a Hub copy is loaded first, its cached files make the key.
    ``metric`` gives the metric signature (its runtime is resolved when first asked, after the Hub copies)."""
    name = source.name
    if source.path is None:
        copy = HUB_COPIES[str(source.corpus)]
        records, report, files = load_hub(str(source.corpus))
        print(f"{name}: Hugging Face Hub copy {copy.dataset} ({copy.note})")
        key = fingerprint(f"{name}|hub:{copy.dataset}", files, arguments.sample, arguments.seed, metric())
    else:
        key = fingerprint(name, _files(source), arguments.sample, arguments.seed, metric())
    target = cache / f"{file_stem(name)}-{key}.parquet"
    if target.is_file():
        print(f"{name}: cached scores {target.name}")
        return Prepared(source, target, None)
    if source.path is not None:
        try:
            if source.corpus is not None:
                records, report = load(source.corpus, source.path)
            else:
                report = ReadReport()
                records = list(read_pairs_file(source.path, report, arguments.columns))
        except OSError as error:  # unreadable: permissions, a file gone while read
            raise CorpusError(
                f"{error.filename or source.path}: cannot read ({error.strerror or error}) (corpus {name})"
            ) from None
    skipped = ", ".join(f"{count:,} {reason}" for reason, count in report.skipped.items()) or "none"
    print(f"{name}: read {report.read:,} records, {len(records):,} pairs (skipped: {skipped})")
    if arguments.sample and len(records) > arguments.sample:
        records = sample(records, arguments.sample, arguments.seed)
        print(f"{name}: sampled {len(records):,} pairs over groups (seed {arguments.seed})")
    if not records:
        raise CorpusError(f"{source.where}: corpus {name} has no pairs")
    if arguments.language_check and is_english(arguments.language):
        try:
            check_english(text for record in records for text in (record.sentence1, record.sentence2))
        except LanguageMismatch as error:
            raise LanguageMismatch(f"corpus {name} ({source.where}): {error}") from None
    return Prepared(source, target, records)


def prepare_all(
    selection: Selection, arguments: argparse.Namespace, cache: Path, metric: Callable[[], str]
) -> list[Prepared]:
    """Every corpus prepared (:func:`prepare`) before any is scored, in the selection's order.

    Hub copies come first, so that one out of reach stops the run before a large file is read; in a
    default run, Hub copies that are neither reachable nor cached are named together in one line.
    """
    prepared: dict[str, Prepared] = {}
    unavailable: list[HubUnavailable] = []
    missing: list[str] = []
    for source in (source for source in selection.sources if source.path is None):
        try:
            prepared[source.name] = prepare(source, arguments, cache, metric)
        except HubUnavailable as error:
            if not selection.default:
                raise
            unavailable.append(error)
            missing.append(source.name)
    if unavailable:
        hub = [source.name for source in selection.sources if source.path is None]
        verb = "is" if len(missing) == 1 else "are"
        raise HubUnavailable(
            f"offline ({unavailable[0].reason}): the default comparison reads {', '.join(hub)} from the Hugging Face "
            f"Hub, downloaded once and then cached, and {', '.join(missing)} {verb} not cached; compare the test "
            f"fixtures offline with `{FIXTURES_RUN}`, or name corpora with --corpus NAME=PATH",
            unavailable[0].reason,
        )
    for source in selection.sources:
        if source.path is not None:
            prepared[source.name] = prepare(source, arguments, cache, metric)
    return [prepared[source.name] for source in selection.sources]
