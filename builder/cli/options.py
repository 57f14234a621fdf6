"""The one place that maps a parsed ``build`` command line onto what a build takes: :class:`PipelineConfig` values
(the configs' parameters, recorded in each config's ``funnel.json``) and a :class:`BuildOptions`.

Each option of a config is applied to every config it concerns, from the presets, whatever other options are given,
and refused in one line when no config of the command takes it: an option is never dropped without a word.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence

from builder.config import LISTING_SCHEMES, BuildOptions, PipelineConfig, preset
from builder.sources.download import expand_dumps
from builder.storage import resolved

__all__ = [
    "CONFIG_OPTIONS",
    "ConfigOption",
    "build_options",
    "dumps_and_languages",
    "pipeline_configs",
    "refuse_unused_options",
    "web_inputs",
]


def _pairing(config: PipelineConfig) -> bool:
    """A config that pairs captions (every one but ``references`` and ``deja``, which read step 0's records)."""
    return not config.records


def _history(config: PipelineConfig) -> bool:
    return config.dump_kind == "history"


def _web_family(config: PipelineConfig) -> bool:
    """Web and dataset configs, and the configs of records, which take a web build's image equivalence."""
    return config.web or config.records


def _every(config: PipelineConfig) -> bool:
    return True


def _deja(config: PipelineConfig) -> bool:
    """Déjà's configs (``deja``, ``deja-paracaption``, ``deja-paraphrases``)."""
    return bool(config.deja)


def _visual(config: PipelineConfig) -> bool:
    """Déjà's visual paraphrases (``deja-paraphrases``), which rerank by the images' features."""
    return config.deja == "paraphrases"


@dataclasses.dataclass(frozen=True)
class ConfigOption:
    """One option of ``build`` that sets a field of the configs it ``concerns``; ``takers`` names those configs."""

    flag: str
    field: str
    concerns: Callable[[PipelineConfig], bool]
    takers: str
    value: Callable[[argparse.Namespace], object]  # None: not given


def _tuple(name: str) -> Callable[[argparse.Namespace], object]:
    return lambda arguments: tuple(values) if (values := getattr(arguments, name, None)) else None


def _plain(name: str) -> Callable[[argparse.Namespace], object]:
    return lambda arguments: getattr(arguments, name, None)


def _set_bound(arguments: argparse.Namespace) -> object:
    bound = getattr(arguments, "set_bound", None)
    return _NO_BOUND if bound == "none" else bound


_NO_BOUND = object()  # --set-bound none: set_size_z None, which is not "not given"

_PAIRING = "configs that pair captions"
_WEB = "web and dataset configs"
CONFIG_OPTIONS: tuple[ConfigOption, ...] = (
    ConfigOption("--history-references", "history_references", _history, "history configs (bronze)",
                 _plain("history_references")),
    ConfigOption("--caption-rule", "caption_rule", _pairing, _PAIRING, _plain("caption_rule")),
    ConfigOption("--splits", "splits", _pairing, _PAIRING, _plain("splits")),
    ConfigOption("--sources", "sources", _pairing, _PAIRING, _tuple("sources")),
    ConfigOption("--identity", "identities", _every, "every config", _tuple("identity")),
    ConfigOption("--equivalence", "equivalence", _web_family, _WEB, _plain("equivalence")),
    ConfigOption("--hash-threshold", "hash_threshold", _web_family, _WEB, _plain("hash_threshold")),
    ConfigOption("--hash-size", "hash_size", _web_family, _WEB, _plain("hash_size")),
    ConfigOption("--set-bound", "set_size_z", _web_family, _WEB, _set_bound),
    ConfigOption("--deja-feature", "deja_feature", _visual, "deja-paraphrases", _plain("deja_feature")),
    ConfigOption("--deja-sigma", "deja_sigma", _visual, "deja-paraphrases", _plain("deja_sigma")),
    ConfigOption("--deja-query-image", "deja_query_image", _visual, "deja-paraphrases", _plain("deja_query_image")),
    ConfigOption("--deja-user-column", "deja_user_column", _deja, "Déjà configs", _plain("deja_user_column")),
)  # fmt: skip
_WEB_ONLY = ("--equivalence", "--hash-threshold", "--hash-size", "--set-bound")


def _given(arguments: argparse.Namespace) -> list[tuple[ConfigOption, object]]:
    """The config options on the command line, each with the value it sets."""
    found = []
    for option in CONFIG_OPTIONS:
        value = option.value(arguments)
        if value is not None:
            found.append((option, None if value is _NO_BOUND else value))
    return found


def refuse_unused_options(arguments: argparse.Namespace, names: Sequence[str]) -> None:
    """A ValueError naming each option that no config of the command (every run of it: ``names``) takes; the web
    options also when a config of the command reads MediaWiki dumps, as they never did."""
    configs = [preset(name) for name in names]
    given = _given(arguments)
    web_options = [option.flag for option, _ in given if option.flag in _WEB_ONLY]
    if web_options and not all(_web_family(config) for config in configs):
        raise ValueError(f"{', '.join(web_options)} apply to web and dataset configs (--configs web, captions) only")
    for option, _ in given:
        if not any(option.concerns(config) for config in configs):
            raise ValueError(
                f"{option.flag} applies to {option.takers}, and this build has none ({', '.join(names)}); "
                "leave it out, or add such a config to --configs"
            )


def pipeline_configs(
    arguments: argparse.Namespace, names: Sequence[str], command: Sequence[str] | None = None
) -> list[PipelineConfig]:
    """The presets named, each with every config option given that concerns it, whatever the others are; a
    value a config cannot take is a ValueError naming the option and the config. ``command``: the configs of
    every run of the command (the samples build articles and history apart), which must take each option."""
    refuse_unused_options(arguments, command or names)
    given = _given(arguments)
    return [_configured(preset(name), given) for name in names]


def _configured(config: PipelineConfig, given: Sequence[tuple[ConfigOption, object]]) -> PipelineConfig:
    """``config`` with the options that concern it, in one step (``--hash-size`` and ``--hash-threshold`` are
    checked together); an option it refuses is named, with the config's own reason."""
    mine = [(option, value) for option, value in given if option.concerns(config)]
    try:
        return dataclasses.replace(config, **{option.field: value for option, value in mine})
    except ValueError as error:
        refused = [option.flag for option, value in mine if not _takes(config, option, value)]
        named = ", ".join(refused or [option.flag for option, _ in mine])
        raise ValueError(f"{named} ({config.name}): {error}") from None


def _takes(config: PipelineConfig, option: ConfigOption, value: object) -> bool:
    try:
        dataclasses.replace(config, **{option.field: value})
    except ValueError:
        return False
    return True


def build_options(arguments: argparse.Namespace, languages: str | dict[str, str] | None) -> BuildOptions:
    """The settings a build shares across its configs; ``languages`` from :func:`dumps_and_languages` or
    :func:`web_inputs`, which resolve ``--language`` against the inputs."""
    return BuildOptions(
        tagger=arguments.tagger,
        workers=arguments.workers,
        memory_limit=arguments.memory,
        image_tables=tuple(arguments.image_table),
        languages=languages,
        template_parameters=arguments.template_parameters,
        inline_templates=arguments.inline_templates,
        unrendered_templates=arguments.unrendered_templates,
        captions_tsv=arguments.captions_tsv,
        listing_schemes=(*LISTING_SCHEMES, *(scheme.lower() for scheme in arguments.listing_scheme)),
        work_dir=arguments.work_dir,
        resume=arguments.resume,
        overwrite=arguments.overwrite,
        show_progress=not arguments.quiet,
        spark_one_task_bytes=arguments.spark_one_task_bytes,
    )


def web_inputs(given: Sequence[str], languages: Sequence[str]) -> tuple[list[str], str | None]:
    """A web or dataset build's inputs as given (the build expands folders and listings) and its captions' language."""
    if not given:
        raise ValueError(
            "--configs web reads WARC files: give .warc/.warc.gz files, folders, *.paths.gz or URLs; "
            "--configs captions reads one img2dataset output folder"
        )
    if len(languages) > 1 or any("=" in language for language in languages):
        raise ValueError("a web build's captions have one language: give --language CODE once")
    return list(given), (languages[0] if languages else None)


def dumps_and_languages(given: Sequence[str], languages: Sequence[str]) -> tuple[list[str], dict[str, str] | None]:
    """The dump files of ``build``'s arguments (download folders expanded) and ``--language`` per file.

    ``--language CODE`` applies to every dump; ``CODE=DUMP`` to one dump, or to every file of a download folder.
    """
    from builder.publish.card import SAMPLE_DUMP

    dumps = expand_dumps(given) or [str(SAMPLE_DUMP)]
    if not languages:
        return dumps, None
    everywhere = [value for value in languages if "=" not in value]
    if len(everywhere) > 1:
        raise ValueError(f"--language names one code for every dump, or CODE=DUMP per dump; got {everywhere}")
    chosen = dict.fromkeys(dumps, everywhere[0]) if everywhere else {}
    for value in languages:
        if "=" not in value:
            continue
        code, _, dump = value.partition("=")
        if resolved(dump) not in {resolved(name) for name in given}:  # ./x and x are one dump, as for the engines
            raise ValueError(f"--language {value}: {dump} is not one of the dumps given")
        chosen.update(dict.fromkeys(expand_dumps([dump]), code))
    return dumps, chosen
