"""English WordNet for the Déjà caption rules: lemmas, senses, and which nouns name physical things.

The default source is the table shipped in the package, ``builder/data/wordnet-en.json.gz``,
derived from the Open English WordNet (CC BY 4.0; see ``builder/data/make_wordnet.py``): every
machine gives the same verdicts, offline, with no download at build time. ``source="nltk"``
reads NLTK's ``wordnet`` corpus instead (Princeton WordNet 3.0 when installed with
``python -m nltk.downloader wordnet``) through the same interface.

A :class:`WordNet` is also what NLTK's ``meteor_score(..., wordnet=...)`` asks for: METEOR calls
``wordnet.synsets(word)`` and reads each synset's ``lemmas()`` and their ``name()``.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from builder.common import DATA, importing_nltk

__all__ = ["POS", "PHYSICAL_ENTITY", "Lemma", "Synset", "WordNet", "WordNetUnavailable", "load_wordnet"]

TABLE = DATA / "wordnet-en.json.gz"
POS = ("n", "v", "a", "r")
PHYSICAL_ENTITY = "physical_entity.n.01"  # the Déjà paper's footnote 7
PHYSICAL_ENTITY_ID = "00001930-n"  # its synset in WordNet 3.1 and the Open English WordNet

# WordNet's detachment rules (morph.c, as NLTK's morphy has them): suffix → replacement, tried in order.
DETACHMENTS = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip


class WordNetUnavailable(RuntimeError):
    """The requested WordNet is not on this machine; the message says how to get it."""


def _key(word: str) -> str:
    """WordNet's lookup spelling: lower case, spaces as underscores."""
    return word.strip().lower().replace(" ", "_")


def _check_pos(pos: str) -> str:
    if pos not in POS:
        raise ValueError(f"unknown part of speech {pos!r}; WordNet's are {', '.join(POS)}")
    return pos


class Lemma:
    """One member of a synset, as NLTK's ``Lemma``: its ``name()`` (spaces as underscores) and ``synset()``."""

    __slots__ = ("_name", "_synset")

    def __init__(self, name: str, synset: Synset) -> None:
        self._name = name
        self._synset = synset

    def name(self) -> str:
        return self._name

    def synset(self) -> Synset:
        return self._synset

    def __repr__(self) -> str:
        return f"Lemma('{self._synset.name()}.{self._name}')"


class Synset:
    """A synset of the shipped table, read like NLTK's: ``name()`` is ``lemma.pos.NN`` (``bird.n.01``)."""

    __slots__ = ("_wordnet", "_index")

    def __init__(self, wordnet: WordNet, index: int) -> None:
        self._wordnet = wordnet
        self._index = index

    def _row(self) -> list:
        return self._wordnet._rows[self._index]

    def id(self) -> str:
        """The Open English WordNet id (WordNet 3.1 offset and POS, ``00001930-n``)."""
        return self._row()[0]

    def pos(self) -> str:
        return self._row()[1]

    def name(self) -> str:
        _, pos, members, numbers, *_ = self._row()
        return f"{_key(members[0])}.{pos}.{numbers[0]:02d}"

    def lemma_names(self) -> list[str]:
        return [member.replace(" ", "_") for member in self._row()[2]]

    def lemmas(self) -> list[Lemma]:
        return [Lemma(name, self) for name in self.lemma_names()]

    def hypernyms(self) -> list[Synset]:
        return [Synset(self._wordnet, target) for target in self._row()[4]]

    def instance_hypernyms(self) -> list[Synset]:
        return [Synset(self._wordnet, target) for target in self._row()[5]]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Synset) and other._wordnet is self._wordnet and other._index == self._index

    def __hash__(self) -> int:
        return hash(self._index)

    def __repr__(self) -> str:
        return f"Synset('{self.name()}')"


class WordNet:
    """The Open English WordNet table: morphy lemmas, synsets in sense order, physical nouns."""

    def __init__(self, path: Path = TABLE) -> None:
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError as error:
            raise WordNetUnavailable(
                f"the WordNet table {path} is missing: reinstall wikipedia-ipc, or regenerate it with "
                "python builder/data/make_wordnet.py (see builder/data/wordnet-en.md)"
            ) from error
        try:
            table = json.loads(gzip.decompress(raw))
            self.header: dict = table["header"]
            self._rows: list[list] = table["synsets"]
            forms: dict[str, dict[str, list[str]]] = table["forms"]
        except (OSError, ValueError, KeyError) as error:
            raise WordNetUnavailable(
                f"the WordNet table {path} is unreadable ({error}): reinstall wikipedia-ipc"
            ) from error
        self._digest = hashlib.sha256(raw).hexdigest()
        self._forms = {
            pos: {_key(form): [_key(base) for base in bases] for form, bases in forms[pos].items()} for pos in POS
        }
        senses: dict[str, dict[str, list[tuple[int, int]]]] = {pos: {} for pos in POS}
        for index, (_, pos, members, numbers, *_) in enumerate(self._rows):
            group = senses["a" if pos == "s" else pos]
            for member, number in zip(members, numbers, strict=True):
                key = member.lower().replace(" ", "_")
                if key in group:
                    group[key].append((number, index))
                else:
                    group[key] = [(number, index)]
        # a lemma's synsets by sense number ("Earth" and "earth" of one synset count once)
        self._senses = {
            pos: {
                lemma: [ranked[0][1]] if len(ranked) == 1 else [index for _, index in sorted(set(ranked))]
                for lemma, ranked in group.items()
            }
            for pos, group in senses.items()
        }
        self._physical = self._below(self._find(PHYSICAL_ENTITY_ID))

    def _find(self, synset_id: str) -> int:
        for index, row in enumerate(self._rows):
            if row[0] == synset_id:
                return index
        raise WordNetUnavailable(f"the WordNet table has no synset {synset_id}: regenerate it")

    def _below(self, root: int) -> frozenset[int]:
        """Every synset with ``root`` among its hypernyms, transitively, and ``root``: common-noun senses only. An
        instance (a synset with instance hypernyms: Clarence Day, Bob Hope, Sojourner Truth) is a named individual,
        not a kind of thing a caption names, so "day", "hope" and "truth" are no visible things."""
        children: dict[int, list[int]] = {}
        for index, row in enumerate(self._rows):
            for parent in row[4]:
                children.setdefault(parent, []).append(index)
        found = {root}
        todo = [root]
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return frozenset(found)

    # What the morphology reads; the NLTK reader answers the same questions from NLTK's corpus.
    def _is_lemma(self, word: str, pos: str) -> bool:
        return word in self._senses[pos]

    def _irregular(self, word: str, pos: str) -> list[str]:
        return self._forms[pos].get(word, [])

    def morphy(self, word: str, pos: str) -> list[str]:
        """Every base form of ``word`` that is a lemma of ``pos``, best first.

        WordNet's order (morph.c): the irregular forms' bases first (``saw`` → ``see``, ``is`` → ``be``),
        then the word itself, then the detachment rules in their order (``flies`` → ``fly``).
        """
        word = _key(word)
        candidates = [*self._irregular(word, _check_pos(pos)), word]
        candidates += [word[: -len(suffix)] + ending for suffix, ending in DETACHMENTS[pos] if word.endswith(suffix)]
        found: list[str] = []
        for candidate in candidates:
            if candidate and candidate not in found and self._is_lemma(candidate, pos):
                found.append(candidate)
        return found

    def lemma(self, word: str, pos: str) -> str:
        """The word's WordNet lemma for ``pos`` ("n", "v", "a", "r"), or the word in lower case when it has none."""
        found = self.morphy(word, pos)
        return found[0] if found else word.strip().lower()

    def synsets(self, word: str, pos: str | None = None) -> list[Synset]:
        """The word's synsets, as NLTK lists them: by POS (n, v, a, r), each lemma of ``morphy`` in sense order."""
        result: list[Synset] = []
        for each in (_check_pos(pos),) if pos else POS:
            for lemma in self.morphy(word, each):
                result += [synset for synset in self._lemma_synsets(lemma, each) if synset not in result]
        return result

    def _lemma_synsets(self, lemma: str, pos: str) -> list[Synset]:
        return [Synset(self, index) for index in self._senses[pos].get(lemma, [])]

    def physical(self, noun_lemma: str) -> bool:
        """Whether some common-noun sense of the lemma is a ``physical_entity.n.01`` (through hypernyms; an instance
        sense, a named individual, does not count).

        "Some sense" because a caption gives no sense: "bank" is a river bank as well as an institution,
        and the rule asks whether the noun can name a visible thing, as the paper's list of 693
        frequent nouns (footnote 7 generalises it to WordNet) holds nouns whatever their senses.
        """
        return any(index in self._physical for index in self._senses["n"].get(_key(noun_lemma), []))

    def signature(self) -> str:
        """Source, release and the table's digest, for the dataset card."""
        release = self.header["release"].removesuffix("-edition")
        return f"oewn-{release}|sha256:{self._digest[:16]}"


class NltkWordNet(WordNet):
    """The same interface over NLTK's ``wordnet`` corpus reader (its synsets are NLTK's own)."""

    def __init__(self) -> None:
        with importing_nltk():
            from nltk.corpus import wordnet

        try:
            wordnet.ensure_loaded()
        except LookupError as error:
            raise WordNetUnavailable(
                "NLTK's wordnet corpus is not installed: run python -m nltk.downloader wordnet "
                "(or point NLTK_DATA at a folder holding corpora/wordnet), or use the shipped table (source 'oewn')"
            ) from error
        self._reader = wordnet
        self._root = wordnet.synset(PHYSICAL_ENTITY)

    def _is_lemma(self, word: str, pos: str) -> bool:
        return bool(self._reader.lemmas(word, pos))

    def _irregular(self, word: str, pos: str) -> list[str]:
        return list(self._reader._exception_map[pos].get(word, []))  # NLTK keeps the .exc files there

    def synsets(self, word: str, pos: str | None = None) -> list:  # NLTK's Synset objects
        return self._reader.synsets(word, pos)

    def _lemma_synsets(self, lemma: str, pos: str) -> list:
        return self._reader.synsets(lemma, pos)

    def physical(self, noun_lemma: str) -> bool:
        return any(self._is_physical(synset) for synset in self._reader.synsets(_key(noun_lemma), "n"))

    @functools.cache  # noqa: B019  # one reader per process (load_wordnet's cache)
    def _is_physical(self, synset: object) -> bool:
        if synset.instance_hypernyms():  # a named individual, not a common noun's sense
            return False
        return synset == self._root or any(parent == self._root for parent in synset.closure(_parents, depth=100))

    def signature(self) -> str:
        from importlib.metadata import version

        return f"nltk-wordnet-{self._reader.get_version()}|nltk-{version('nltk')}"


def _parents(synset: object) -> Iterable:
    return synset.hypernyms()


@functools.cache
def load_wordnet(source: str = "oewn") -> WordNet:
    """The WordNet of ``source``, loaded once per process: "oewn" (the shipped table) or "nltk"."""
    if source == "oewn":
        return WordNet()
    if source == "nltk":
        return NltkWordNet()
    raise ValueError(f"unknown WordNet source {source!r}; choose 'oewn' (shipped) or 'nltk'")
