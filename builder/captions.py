"""Stage 4–5: the caption filters – minimum length and the caption rule (Table 4).

The gold level keeps captions that are (sequences of) grammatical sentences,
decided by the POS-pattern rules of Table 4; the silver and bronze levels keep
captions that contain a verb. Parenthetical material such as "(pictured)" or
"(left)" is ignored by both rules: it is an aside, not the caption's syntax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from nltk.tokenize import NLTKWordTokenizer

from builder.tagging import TaggedText, Tagger, get_tagger

INFLECTED_VERBS = frozenset({"VBP", "VBZ", "VBD"})
WH_WORDS = frozenset({"WDT", "WP", "WRB"})
TAG_BATCH = 512


_WORDS = NLTKWordTokenizer()


def word_count(text: str) -> int:
    """Step 4's length: Penn Treebank tokens with at least one letter or digit.

    The authors counted the tokens of CoreNLP's PTB tokenizer that are not all
    punctuation, so "Algeria's" is two words and "–" none; NLTK's Treebank tokenizer
    splits the same way. Unlike their ASCII ``\\W``, letters of every script count.
    """
    return sum(1 for token in _WORDS.tokenize(text) if any(char.isalnum() for char in token))


def has_min_words(text: str, minimum: int, language: str = "en") -> bool:
    """``word_count(text) >= minimum``, without tokenizing most captions.

    The Treebank tokenizer only splits whitespace-separated tokens further, never joins
    them, so a caption with ``minimum`` such tokens holding a letter or digit passes as is.
    """
    if sum(1 for token in text.split() if any(char.isalnum() for char in token)) >= minimum:
        return True
    return word_count(text) >= minimum


def word_counter_signature(language: str = "en") -> str:
    """How step 4 counts the words of a language, for the dataset card."""
    return "Penn Treebank tokens with a letter or digit (NLTK's Treebank tokenizer)"


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


def satisfies(rule: str, sentences: Sequence[Sequence[str]], tagset: str = "ptb") -> bool:
    """Apply a caption rule to the tag sequences of one caption's sentences.

    ``sentence``: every sentence satisfies Table 4. ``verb``: some token is a verb.
    """
    if not sentences:
        return False
    if rule == "sentence":
        return all(is_sentence(tags) for tags in sentences)
    if rule == "verb":
        return any(has_verb(tags) for tags in sentences)
    raise ValueError(f"unknown caption rule {rule!r}; choose 'sentence' or 'verb'")


def tag_captions(texts: Sequence[str], tagger: str | Tagger = "auto") -> list[TaggedText]:
    """Tag captions as the rules see them: parenthetical material removed first."""
    return get_tagger(tagger).tag([strip_parentheticals(text) for text in texts])


def classify(texts: Sequence[str], rule: str = "sentence", tagger: str | Tagger = "auto") -> list[bool]:
    """Which captions pass a caption rule (``sentence`` for gold, ``verb`` for silver/bronze)."""
    if rule not in ("sentence", "verb"):
        raise ValueError(f"unknown caption rule {rule!r}; choose 'sentence' or 'verb'")
    return [satisfies(rule, tag_sequences(tagged)) for tagged in tag_captions(texts, tagger)]


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
