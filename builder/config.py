"""The pipeline's parameters in one place, with the paper's three presets.

Every number here comes from section 3 of Gohsen et al. (EACL 2023): the
reference bounds of the image filter (Table 3, steps 1–2 and 6), the minimum
caption length (step 4), the caption rule (step 5, Table 4) and the dump kind
that separates gold/silver (pages-articles) from bronze (full edit history).
The paper mines the extended image syntax and the ``image`` parameters of
templates; ``<gallery>`` lines are this toolkit's extension, read only when a
config's ``sources`` asks for them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from builder.splits import DEFAULT_FRACTIONS, check_fractions

CaptionRule = Literal["sentence", "verb", "none"]
CAPTION_RULES = ("sentence", "verb", "none")
DumpKind = Literal["articles", "history"]
HistoryReferences = Literal["revision", "first_seen"]
SOURCES = ("link", "template", "gallery")
PAPER_SOURCES = ("link", "template")
# how an image is recognised: its normalized title (the paper), File-namespace redirects, equal SHA-1
IDENTITIES = ("title", "redirect", "sha1")


@dataclasses.dataclass(frozen=True)
class PipelineConfig:
    """Parameters of one Wikipedia-IPC quality level."""

    name: str
    min_references: int = 2
    max_references: int = 10
    min_words: int = 6
    caption_rule: CaptionRule = "sentence"
    dump_kind: DumpKind = "articles"
    namespaces: tuple[int, ...] = (0,)
    sources: tuple[str, ...] = PAPER_SOURCES
    # history dumps: every revision's use of an image is a reference (the paper's 180 bound
    # assumes it), or "first_seen": once per page and wording, carried by its first revision
    history_references: HistoryReferences = "revision"
    # this toolkit's extension: also merge images by File redirects and by the SHA-1 of their files
    identities: tuple[str, ...] = ("title",)
    # train/validation/test fractions (builder.splits); () writes the paper's single set as one train split
    splits: tuple[float, ...] = DEFAULT_FRACTIONS
    # beyond the paper: the language whose references the config reads ("": every reference of a
    # one-language build), and cross-lingual pairing of the captions of different editions
    language: str = ""
    crosslingual: bool = False

    def __post_init__(self) -> None:
        if self.caption_rule not in CAPTION_RULES:
            raise ValueError(f"caption_rule must be one of {list(CAPTION_RULES)}, not {self.caption_rule!r}")
        if self.crosslingual and self.language:
            raise ValueError("a cross-lingual config reads every language; it cannot be restricted to one")
        if self.dump_kind not in ("articles", "history"):
            raise ValueError(f"dump_kind must be 'articles' or 'history', not {self.dump_kind!r}")
        if self.history_references not in ("revision", "first_seen"):
            raise ValueError(f"history_references must be 'revision' or 'first_seen', not {self.history_references!r}")
        if not 1 <= self.min_references <= self.max_references:
            raise ValueError("need 1 <= min_references <= max_references")
        unknown = set(self.sources) - set(SOURCES)
        if unknown:
            raise ValueError(f"unknown reference sources {sorted(unknown)}; known: {list(SOURCES)}")
        if not self.sources:
            raise ValueError(f"sources must name at least one of {list(SOURCES)}")
        # One spelling per set of sources, so the card and funnel.json of equal configs are equal.
        object.__setattr__(self, "sources", tuple(source for source in SOURCES if source in self.sources))
        unknown = set(self.identities) - set(IDENTITIES)
        if unknown:
            raise ValueError(f"unknown image identities {sorted(unknown)}; known: {list(IDENTITIES)}")
        # the title is always an identity; one spelling per set, as for the sources
        wanted = {"title", *self.identities}
        object.__setattr__(self, "identities", tuple(kind for kind in IDENTITIES if kind in wanted))
        object.__setattr__(self, "splits", check_fractions(self.splits))

    def parameters(self) -> dict[str, object]:
        """The parameters as plain data, for the dataset card and funnel.json.

        The multilingual fields appear when set: the card of a one-language build stays as it was.
        """
        parameters = dataclasses.asdict(self)
        for name, unset in (("language", ""), ("crosslingual", False)):
            if parameters[name] == unset:
                del parameters[name]
        return parameters


GOLD = PipelineConfig(name="gold", caption_rule="sentence")
SILVER = PipelineConfig(name="silver", caption_rule="verb")
# Bronze: 18 revisions per page on average x 10 references = 180 (paper, section 3).
BRONZE = PipelineConfig(name="bronze", caption_rule="verb", max_references=180, dump_kind="history")

# Beyond the paper: the captions that different language editions wrote for one Commons file, paired across
# languages; the verb rule of silver, each caption in its own language.
CROSSLINGUAL = PipelineConfig(name="crosslingual", caption_rule="verb", crosslingual=True)

PRESETS: dict[str, PipelineConfig] = {c.name: c for c in (GOLD, SILVER, BRONZE, CROSSLINGUAL)}


def configs_for_languages(configs: Sequence[PipelineConfig], languages: Sequence[str]) -> list[PipelineConfig]:
    """The configs of a build over dumps of the given languages.

    A one-language build keeps the names (``gold``), so ``load_dataset(path, "gold")`` works
    as for English; a build over several languages builds each monolingual config once per
    language (``de.gold``, ``fr.gold``), reading that language's references only. The
    cross-lingual config reads every language and needs two at least.
    """
    crosslingual = [config.name for config in configs if config.crosslingual]
    if crosslingual and len(languages) < 2:
        raise ValueError(
            f"{crosslingual[0]} pairs captions across languages, but the dumps are of one language "
            f"({', '.join(languages)}); give dumps of two or more language editions (and --language where their "
            "<dbname> does not tell)"
        )
    if len(languages) < 2:
        return list(configs)
    expanded = []
    for config in configs:
        if config.crosslingual or config.language:
            expanded.append(config)
            continue
        expanded.extend(dataclasses.replace(config, name=f"{code}.{config.name}", language=code) for code in languages)
    return expanded


def preset(name: str) -> PipelineConfig:
    """Look up a preset by name with an error that lists the choices."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown config {name!r}; choose from {sorted(PRESETS)}") from None
