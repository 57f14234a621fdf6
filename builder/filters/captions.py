"""Table 3's step 5: the caption rule (Table 4), read from the tags of each caption.

The gold level keeps captions that are (sequences of) grammatical sentences,
decided by the POS-pattern rules of Table 4; the silver and bronze levels keep
captions that contain a verb. Parenthetical material such as "(pictured)" or
"(left)" is ignored by both rules: it is an aside, not the caption's syntax.

English keeps the paper's rules in Penn Treebank tags. Every other language is read
in Universal Dependencies tags (``"UPOS|Feat=Val|…"``, see ``builder.filters.tagging.ud_tag``)
by :data:`TABLE_4_UD`, the same four rows in UD terms:

1. a *modal*: an ``AUX`` followed, after at most one ``ADV``/``PART`` ("not", "ne"),
   by an infinitive (``VerbForm=Inf``). PTB's ``MD`` has no UD tag of its own, so
   the premise is the modal construction itself, and it matches when that ``AUX``
   is finite (``VerbForm=Fin``), as an ``MD`` always is;
2. a relative or interrogative word (``PronType=Rel`` or ``PronType=Int``, PTB's
   ``WDT``/``WP``/``WRB``): a finite verb must come before the first of them;
3. a subordinating conjunction (``SCONJ``): a finite verb must come before the first.
   PTB's ``IN`` covers both prepositions and subordinating conjunctions; we map it to
   ``SCONJ`` only, not to ``ADP``. The rule is there to reject a fragment whose only
   finite verb sits in a subordinate clause ("Tower, because it is tall"); a phrase
   that merely opens with a preposition ("En 1900, la ville comptait …", common in
   French and German captions) is a sentence, which the PTB rule rejects;
4. otherwise: some finite verb (``VerbForm=Fin`` on ``VERB`` or ``AUX``).

A finite verb is ``VERB`` or ``AUX`` because UD tags copulas and auxiliaries ``AUX``
("La tour est haute"), where PTB gave them ``VBZ``. For the same reason the verb
rule in UD accepts ``VERB`` and ``AUX``: PTB's ``VB*`` covers auxiliaries and copulas.

The rule ``none`` keeps every non-empty caption: the configuration for languages no
tagger covers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from builder.config import CAPTION_RULES
from builder.filters.tagging import TaggedText, Tagger, get_tagger

__all__ = ["rule_verdicts", "satisfies", "tag_batch", "tag_captions", "tag_sequences", "text_batches"]

INFLECTED_VERBS = frozenset({"VBP", "VBZ", "VBD"})
WH_WORDS = frozenset({"WDT", "WP", "WRB"})
TAG_BATCH = 512
TAGSETS = ("ptb", "ud")


def strip_parentheticals(text: str) -> str:
    """Remove ``( … )`` material, nested or not; an unclosed bracket is kept as text."""
    kept: list[str] = []
    depth = 0
    pending: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
            pending.append(char)
        elif char == ")" and depth:
            depth -= 1
            pending.append(char)
            if depth == 0:
                pending.clear()
        elif depth:
            pending.append(char)
        else:
            kept.append(char)
    kept.extend(pending)
    result = " ".join("".join(kept).split())
    for punctuation in ",.;:!?":
        result = result.replace(" " + punctuation, punctuation)
    return result


def _inflected_verb_before(tags: Sequence[str], stops: frozenset[str]) -> bool:
    """``[¬(stops)]* (VBP VBZ VBD) .*``: an inflected verb comes before any stop tag."""
    for tag in tags:
        if tag in stops:
            return False
        if tag in INFLECTED_VERBS:
            return True
    return False


def _modal_then_base_verb(tags: Sequence[str]) -> bool:
    """``.* MD RB? VB .*``: a modal, an optional adverb, then a base-form verb."""
    for index, tag in enumerate(tags):
        if tag != "MD":
            continue
        following = list(tags[index + 1 : index + 3])
        if following[:1] == ["VB"] or following == ["RB", "VB"]:
            return True
    return False


@dataclasses.dataclass(frozen=True)
class SentenceRule:
    """One row of Table 4: the first rule whose premise holds decides."""

    number: int
    premise: Callable[[Sequence[str]], bool]
    pattern: Callable[[Sequence[str]], bool]


TABLE_4: tuple[SentenceRule, ...] = (
    SentenceRule(1, lambda tags: "MD" in tags, _modal_then_base_verb),
    SentenceRule(2, lambda tags: any(t in WH_WORDS for t in tags), lambda tags: _inflected_verb_before(tags, WH_WORDS)),
    SentenceRule(3, lambda tags: "IN" in tags, lambda tags: _inflected_verb_before(tags, frozenset({"IN"}))),
    SentenceRule(4, lambda tags: True, lambda tags: any(t in INFLECTED_VERBS for t in tags)),
)


def is_sentence(tags: Sequence[str]) -> bool:
    """Table 4 on one sentence's tags: the first rule whose premise holds must match."""
    for rule in TABLE_4:
        if rule.premise(tags):
            return rule.pattern(tags)
    return False


def has_verb(tags: Sequence[str]) -> bool:
    """The silver/bronze rule: any verb form (a VB* tag)."""
    return any(tag.startswith("VB") for tag in tags)


@dataclasses.dataclass(frozen=True)
class UDToken:
    """One UD tag read back: the UPOS and the FEATS as name → set of values."""

    upos: str
    feats: dict[str, frozenset[str]]

    @classmethod
    def parse(cls, tag: str) -> UDToken:
        upos, *features = tag.split("|")
        feats = {}
        for feature in features:
            name, _, values = feature.partition("=")
            feats[name] = frozenset(values.split(","))
        return cls(upos, feats)

    def has(self, name: str, value: str) -> bool:
        return value in self.feats.get(name, ())

    @property
    def is_verb(self) -> bool:
        return self.upos in ("VERB", "AUX")

    @property
    def is_finite_verb(self) -> bool:
        return self.is_verb and self.has("VerbForm", "Fin")

    @property
    def is_infinitive(self) -> bool:
        return self.is_verb and self.has("VerbForm", "Inf")

    @property
    def is_wh_word(self) -> bool:
        return self.has("PronType", "Rel") or self.has("PronType", "Int")


def _modal_auxiliaries(tokens: Sequence[UDToken]) -> list[UDToken]:
    """The AUX tokens followed, after at most one ADV or PART, by an infinitive: UD's modal construction."""
    modals = []
    for index, token in enumerate(tokens):
        if token.upos != "AUX":
            continue
        following = list(tokens[index + 1 : index + 3])
        if following and following[0].upos in ("ADV", "PART"):
            following = following[1:]
        if following and following[0].is_infinitive:
            modals.append(token)
    return modals


def _finite_verb_before(tokens: Sequence[UDToken], stop: Callable[[UDToken], bool]) -> bool:
    """A finite verb comes before the first stop token."""
    for token in tokens:
        if stop(token):
            return False
        if token.is_finite_verb:
            return True
    return False


@dataclasses.dataclass(frozen=True)
class UDSentenceRule:
    """One row of Table 4 in UD terms (see the module docstring): the first rule whose premise holds decides."""

    number: int
    premise: Callable[[Sequence[UDToken]], bool]
    pattern: Callable[[Sequence[UDToken]], bool]


def _is_sconj(token: UDToken) -> bool:
    return token.upos == "SCONJ"


TABLE_4_UD: tuple[UDSentenceRule, ...] = (
    UDSentenceRule(
        1,
        lambda tokens: bool(_modal_auxiliaries(tokens)),
        lambda tokens: any(modal.is_finite_verb for modal in _modal_auxiliaries(tokens)),
    ),
    UDSentenceRule(
        2,
        lambda tokens: any(token.is_wh_word for token in tokens),
        lambda tokens: _finite_verb_before(tokens, lambda token: token.is_wh_word),
    ),
    UDSentenceRule(
        3, lambda tokens: any(map(_is_sconj, tokens)), lambda tokens: _finite_verb_before(tokens, _is_sconj)
    ),
    UDSentenceRule(4, lambda tokens: True, lambda tokens: any(token.is_finite_verb for token in tokens)),
)


def is_sentence_ud(tags: Sequence[str]) -> bool:
    """Table 4 in UD terms on one sentence's UD tags."""
    tokens = [UDToken.parse(tag) for tag in tags]
    for rule in TABLE_4_UD:
        if rule.premise(tokens):
            return rule.pattern(tokens)
    return False


def has_verb_ud(tags: Sequence[str]) -> bool:
    """The silver/bronze rule in UD terms: a VERB or an AUX."""
    return any(UDToken.parse(tag).is_verb for tag in tags)


def satisfies(rule: str, sentences: Sequence[Sequence[str]], tagset: str = "ptb") -> bool:
    """Apply a caption rule to the tag sequences of one caption's sentences.

    ``sentence``: every sentence satisfies Table 4. ``verb``: some token is a verb.
    ``none``: any caption with a sentence. ``tagset`` says how the tags are written:
    ``ptb`` (English, the paper's rules) or ``ud`` (every other language).
    """
    if tagset not in TAGSETS:
        raise ValueError(f"unknown tagset {tagset!r}; choose 'ptb' or 'ud'")
    if not sentences:
        return False
    if rule == "sentence":
        sentence_rule = is_sentence if tagset == "ptb" else is_sentence_ud
        return all(sentence_rule(tags) for tags in sentences)
    if rule == "verb":
        verb_rule = has_verb if tagset == "ptb" else has_verb_ud
        return any(verb_rule(tags) for tags in sentences)
    if rule == "none":
        return True
    raise ValueError(f"unknown caption rule {rule!r}; choose 'sentence', 'verb' or 'none'")


def tag_captions(texts: Sequence[str], tagger: str | Tagger = "auto", language: str = "en") -> list[TaggedText]:
    """Tag captions as the rules see them: parenthetical material removed first."""
    return get_tagger(tagger, language).tag([strip_parentheticals(text) for text in texts])


def classify(
    texts: Sequence[str], rule: str = "sentence", tagger: str | Tagger = "auto", language: str = "en"
) -> list[bool]:
    """Which captions pass a caption rule (``sentence`` for gold, ``verb`` for silver/bronze, ``none``).

    ``none`` tags nothing and keeps every non-empty caption.
    """
    if rule not in CAPTION_RULES:
        raise ValueError(f"unknown caption rule {rule!r}; choose 'sentence', 'verb' or 'none'")
    if rule == "none":
        return [bool(text.strip()) for text in texts]
    instance = get_tagger(tagger, language)
    return [satisfies(rule, tag_sequences(tagged), instance.tagset) for tagged in tag_captions(texts, instance)]


def tag_sequences(tagged: TaggedText) -> list[list[str]]:
    """Only the tags of a tagged caption, sentence by sentence."""
    return [[tag for _, tag in sentence] for sentence in tagged]


def tag_batch(texts: list[str], tagger: Tagger) -> list[list[list[str]]]:
    """The tag sequences of a batch of texts, as the engines store them between tagging and the rule."""
    return [tag_sequences(tagged) for tagged in tag_captions(texts, tagger)]


def text_batches(texts: Iterable[str]) -> Iterator[list[str]]:
    """Texts in lists of :data:`TAG_BATCH`, the unit in which taggers work."""
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) >= TAG_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def rule_verdicts(rows: Iterable[dict], rule: str, tagsets: Mapping[str, str]) -> Callable[[str, str], bool]:
    """Each text of a cluster's rows, judged by the caption rule from its stored tags.

    ``tagsets`` names the tag set of each language's tagger (``ptb`` or ``ud``); the verdict
    is looked up by ``(text, language)``, as a text is judged in its own wiki's language.
    """
    verdicts: dict[tuple[str, str], bool] = {}
    for row in rows:
        language = row["language"]
        for text, tags in ((row["caption"], row["caption_tags"]), (row["alt"], row["alt_tags"])):
            if text:
                verdicts[text, language] = rule == "none" or satisfies(rule, tags or [], tagsets[language])
    return lambda text, language: verdicts[text, language]
