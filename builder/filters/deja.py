"""Déjà Image-Captions §2 on the text of a caption: its sentences, their canonical forms, the three rules.

Chen et al. (NAACL 2015) keep a caption sentence that names a visible thing, gives no personal
information and says more than a keyword, and find captions in repetition through a canonical
form: "The bird flies in blue sky" and "A bird flying into the blue sky" are both
``bird fly IN blue sky``. This module decides all of it for one text at a time, from the
build's Penn Treebank tagger and WordNet (:mod:`builder.lang.wordnet`); grouping the canonical
forms by images and users is the engines' part. docs/deja.md gives the choices the paper leaves open.

Which tags are content words (kept in the canonical form, lower case):

* nouns ``NN``/``NNS`` (WordNet noun lemma), ``NNP``/``NNPS`` (as written: a name has no lemma);
* verbs ``VB*`` (verb lemma; be, have and do stay: Table 5's top verbs are "be, have, do …");
* adjectives ``JJ*`` and adverbs ``RB*`` (their lemmas), particles ``RP`` that are no prepositions ("running
  *away*"), interjections ``UH`` ("hello little flower") and foreign words ``FW``;
* ``IN`` (a preposition, or a subordinating conjunction, which Penn tags alike) becomes ``IN``, and so does a
  particle that is a preposition ("reaching *out*", "looking *down*": :data:`PREPOSITION_PARTICLES`).

Everything else is a function word, a number or punctuation and is dropped: ``DT PDT CC PRP PRP$
WDT WP WP$ WRB EX MD TO POS LS CD SYM``, the punctuation tags, and any token without a letter or a
digit. ``TO`` is dropped because Penn tags the preposition and the infinitive marker alike, and
Table 5's prepositions ("in, of, on, at, with, for, from, by, over, through") have no "to".
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence

from builder.filters.tagging import SentenceSplitter, TaggedSentence, Tagger
from builder.lang.wordnet import WordNet
from metrics.language import clearly_foreign

__all__ = [
    "DEJA_LANGUAGES",
    "DEJA_RULES",
    "ENGLISH_RULE",
    "DejaSentence",
    "analyse_texts",
    "check_deja_language",
    "uncapitalised",
]

# Before §2's three rules, the scorer's language check on each sentence (:func:`metrics.language.clearly_foreign`):
# the rules read English WordNet and Penn tags, and a German sentence's "die" would be its visible thing.
ENGLISH_RULE = "In English"
DEJA_RULES = (ENGLISH_RULE, "Names a visible thing", "No personal information", "Has a verb, preposition or adjective")
DEJA_LANGUAGES = ("en", "simple")  # WordNet and the Penn Treebank tags are English

FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())
PRONOUN_TAGS = frozenset({"PRP", "PRP$"})
# A first-person word the tagger did not tag as a pronoun is one still ("Me and my dog", Me/NN), but for
# its homographs: the US (us/NNP) and a coal mine (mine/NN); see _first_person for the numeral I and US/PRP.
NOT_PRONOUNS = frozenset({("us", "NNP"), ("us", "NNPS"), ("mine", "NN"), ("mine", "NNS")})
COMMON_NOUNS = frozenset({"NN", "NNS"})
PROPER_NOUNS = frozenset({"NNP", "NNPS"})
VERBS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
ADJECTIVES = frozenset({"JJ", "JJR", "JJS"})
# the tags of a word before a noun that make it a thing ("the mine", "a coal mine", "the old mine", "his mine")
NAMES_A_NOUN = COMMON_NOUNS | PROPER_NOUNS | ADJECTIVES | {"DT", "PRP$", "POS", "CD"}
ADVERBS = frozenset({"RB", "RBR", "RBS"})
PREPOSITION = "IN"
# Particles (RP) that are prepositions in the paper's sense: "looking *down* at", "hanging *out* with" are IN, as
# its rule reads them; "away", "back" and "together" are adverbs and stay words.
PREPOSITION_PARTICLES = frozenset("about across along around by down in off on out over past through under up".split())
AS_WRITTEN = frozenset({"RP", "UH", "FW"}) | PROPER_NOUNS
WORDNET_POS = {**dict.fromkeys(COMMON_NOUNS, "n"), **dict.fromkeys(VERBS, "v")}
WORDNET_POS |= {**dict.fromkeys(ADJECTIVES, "a"), **dict.fromkeys(ADVERBS, "r")}
# The tags of an inflected form: its lemma is a base form other than the word, where WordNet has one
# ("flies"/NNS is "fly", though "flies" is a noun lemma of its own).
INFLECTED = frozenset({"NNS", "VBD", "VBG", "VBN", "VBZ", "JJR", "JJS", "RBR", "RBS"})
# Clitics of the Treebank tokenizer: "It's raining" is it 's raining, 's a form of be.
CLITICS = {"'s": "be", "'re": "be", "'m": "be", "'ve": "have", "n't": "not"}


@dataclasses.dataclass(frozen=True)
class DejaSentence:
    """One sentence of a caption as §2 sees it."""

    text: str  # the sentence as written (footnote 2: originals kept beside the canonical form)
    canonical: str  # "bird fly IN blue sky"; "" when the sentence has no content word at all
    nouns: tuple[str, ...]  # its physical-object noun lemmas, sorted, unique (§5's candidates share these)
    kind: str  # Table 5: "verb" (≥ 1 verb), "prep" (a preposition, no verb), "adj" (an adjective only), ""
    verdict: str  # "kept", or the first of DEJA_RULES it fails
    tokens: int  # its words (Table 2's tokens per caption)
    words: tuple[str, ...] = ()  # the words that make its kind, in order: its verbs' lemmas, prepositions or
    # adjectives' lemmas (Table 5's top words)


def check_deja_language(language: str) -> None:
    """Refuse, in one line, a language that WordNet and the Penn Treebank rules of §2 do not cover."""
    if language not in DEJA_LANGUAGES:
        raise ValueError(
            f"Déjà's caption rules (§2) read English WordNet and Penn Treebank tags: language {language!r} is not "
            f"covered (only {', '.join(DEJA_LANGUAGES)})"
        )


@functools.lru_cache(maxsize=1 << 17)
def _lemma(wordnet: WordNet, word: str, tag: str) -> str:
    """The word's lemma for its tag: WordNet's morphy, an inflected form's base form first."""
    lower = word.lower()
    if lower in CLITICS and (tag in VERBS or tag in ADVERBS):
        return CLITICS[lower]
    pos = WORDNET_POS.get(tag)
    if pos is None:
        return lower
    found = wordnet.morphy(lower, pos)  # WordNet's exception lists first ("saw" → see), then its rules
    if tag in INFLECTED:
        found = [base for base in found if base != lower] or found
        if len(found) > 1 and found[0].endswith("e") and found[0][:-1] in found:
            found.remove(_spelled_base(found[0][:-1]))  # "swinging": swing, not swinge; "hoping": hope, not hop
    return found[0] if found else lower


_SHORT_STEM = re.compile(r"(?:^|[^aeiou])[aeiou][b-df-hj-np-tvz]$")


def _spelled_base(stem: str) -> str:
    """Of ``stem`` and ``stem + "e"``, both lemmas by WordNet's rules for an -ing or -ed form, the one English
    spelling rules out: a short stem that ends in one vowel and one consonant doubles it (hop → hopping), so
    "hoping" is from hope; any other stem keeps its spelling (swing → swinging), so "swinging" is not from
    swinge. morph.c tries the "e" first and would answer swinge."""
    return stem if _SHORT_STEM.search(stem) else stem + "e"


def _first_person(token: str, tag: str, previous: str, following: str) -> bool:
    """Whether a first-person word is the pronoun (``previous`` and ``following`` are the neighbours' tags). The
    perceptron tags PRP an I after a name, which is a numeral ("Elizabeth I", "World War I") or Catalan "and"
    ("Ferrer i Guàrdia"), and "US" in capitals, the country: read as pronouns, they would wrongly reject many
    Wikipedia captions. An I after a name that a verb follows is the pronoun still ("In London I photographed",
    "Monday I fed"), and so is a "mine" that a verb follows and nothing names ("Mine is the red car", not "A coal
    mine is flooded"), which the tagger calls a noun."""
    verb_follows = following in VERBS or following == "MD"
    if token in ("I", "i") and previous in PROPER_NOUNS and not verb_follows or token == "US":
        return False
    if token.lower() == "mine" and verb_follows and previous not in NAMES_A_NOUN:
        return True
    return tag in PRONOUN_TAGS or (token.lower(), tag) not in NOT_PRONOUNS and token != "I"


def _is_word(token: str) -> bool:
    return any(character.isalnum() for character in token)


def analyse_sentence(text: str, tagged: TaggedSentence, wordnet: WordNet) -> DejaSentence:
    """§2 on one tagged sentence: its canonical form, physical nouns, Table 5 kind and the first rule it fails."""
    canonical: list[str] = []
    nouns: set[str] = set()
    personal = False
    tags: set[str] = set()
    by_kind: dict[str, list[str]] = {"verb": [], "prep": [], "adj": []}
    previous = previous_word = ""
    words_of = [(token, tag) for token, tag in tagged if _is_word(token)]
    for position, (token, tag) in enumerate(words_of):
        lower = token.lower()
        if tag == "RP" and lower in PREPOSITION_PARTICLES:
            tag = PREPOSITION
        tags.add(tag)
        following = words_of[position + 1][1] if position + 1 < len(words_of) else ""
        let_us = lower == "'s" and previous_word == "let"  # "Let's walk the dog"
        if let_us or lower in FIRST_PERSON and _first_person(token, tag, previous, following):
            personal = True
        previous, previous_word = tag, lower
        if tag == PREPOSITION:
            canonical.append("IN")
            by_kind["prep"].append(lower)
        elif tag in WORDNET_POS:
            lemma = _lemma(wordnet, token, tag)
            canonical.append(lemma)
            if tag in VERBS or tag in ADJECTIVES:
                by_kind["verb" if tag in VERBS else "adj"].append(lemma)
            if tag in COMMON_NOUNS and wordnet.physical(lemma):
                nouns.add(lemma)
        elif tag in AS_WRITTEN:
            canonical.append(lower)
    kind = "verb" if tags & VERBS else "prep" if PREPOSITION in tags else "adj" if tags & ADJECTIVES else ""
    if clearly_foreign(text):
        verdict = ENGLISH_RULE
    elif not nouns:
        verdict = DEJA_RULES[1]
    elif personal:
        verdict = DEJA_RULES[2]
    elif not kind:
        verdict = DEJA_RULES[3]
    else:
        verdict = "kept"
    kind_words = tuple(dict.fromkeys(by_kind[kind])) if kind else ()
    return DejaSentence(text, " ".join(canonical), tuple(sorted(nouns)), kind, verdict, len(words_of), kind_words)


def _mostly_capitals(sentence: str) -> bool:
    """Three or more words of two letters or more, most of them in capitals: written in capitals, not names."""
    words = [word for word in sentence.split() if sum(character.isalpha() for character in word) > 1]
    return len(words) >= 3 and 2 * sum(word.isupper() for word in words) > len(words)


def uncapitalised(sentence: str, wordnet: WordNet) -> str:
    """The sentence as the tagger reads it: a first word written with a capital only because it starts the sentence
    in lower case, when WordNet knows it so and the next word is not a capitalised one too ("Dogs", "Sun"; not
    "NASA", "McDonald", "Mildred", nor "Charles I" or "Neil Armstrong", names). Flickr's and
    Wikipedia's captions mostly start with a capital, COCO's and Flickr8k's often not; a tagger reads a capitalised
    first noun as a name, so "Children playing in water" and "children playing in water" would get two canonical
    forms, and "Sun is going to bed" (Déjà's Figure 1) no visible thing. A sentence written mostly in capitals is
    read in lower case whole."""
    if _mostly_capitals(sentence):  # "PEOPLE ARE SITTING IN THE STANDS": a tagger reads every word as a name
        return sentence.lower()
    first, space, rest = sentence.partition(" ")
    if rest[:1].isupper():
        return sentence
    if len(first) > 1 and first[0].isupper() and first[1:].islower() and wordnet.synsets(first.lower()):
        return f"{first.lower()}{space}{rest}"
    return sentence


def analyse_texts(texts: Sequence[str], tagger: Tagger, wordnet: WordNet) -> list[list[DejaSentence]]:
    """Each text's sentences with their §2 analysis, all texts' sentences tagged in one batch.

    Sentences are cut by the toolkit's :class:`SentenceSplitter` (CoreNLP's boundaries) so that each
    keeps its text as written; a sentence the tagger splits further is one sentence still.
    """
    if tagger.tagset != "ptb":
        raise ValueError(
            f"Déjà's caption rules read Penn Treebank tags; the {tagger.name} tagger gives {tagger.tagset}"
        )
    check_deja_language(tagger.language)
    splitter = SentenceSplitter()
    sentences = [[sentence.strip() for sentence in splitter.split(text) if sentence.strip()] for text in texts]
    tagged = iter(tagger.tag([uncapitalised(sentence, wordnet) for group in sentences for sentence in group]))
    return [
        [analyse_sentence(sentence, [token for part in next(tagged) for token in part], wordnet) for sentence in group]
        for group in sentences
    ]
