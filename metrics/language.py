"""The language of the texts a profile scores: its code, and a cheap check that English is English.

The ``minilm`` and ``paper`` profiles read English only: their models, their stop words and the
authors' Porter stemming give a number for any text, but for a French, Russian or Chinese pair
that number measures nothing. A caller says which language the texts are in (``language``, an
ISO 639 code, ``"en"`` by default); a profile that does not serve it is refused
(:func:`metrics.profiles.check_profile_language`).

Texts passed as English are checked too, so that the default does not silently score another
language (:func:`check_english`). The check is deterministic and cheap, and leans on the side of
English: it refuses only when most texts are clearly not English, because

* more than half of the texts with letters are written mostly in a non-Latin script, or
* the texts in Latin script hold enough words (:data:`MIN_WORDS`) and fewer than
  :data:`MIN_FUNCTION_SHARE` of them are English function words ("the", "of", "a", "in", ...),
  where English running text has 25–45 % and a caption corpus 20 % or more; or more of them
  are function words of other languages written in Latin script ("de", "la", "und", "och", ...)
  than English ones.

It never fires on the English corpora the repository ships (a test measures their shares), and
it can be turned off (``check_language=False``) for English text that it takes for another language.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import regex

# English function words. Some are words of other languages too ("a", "in", "an", "is", "was"): the
# share of foreign function words below is what tells those languages from English.
ENGLISH_FUNCTION_WORDS = frozenset(
    "the a an of and in on at to with from this that these those which who whose is was were are been has have "
    "his her their its it they she he by into for during after between or but than when where while not be".split()
)
# Function words of French, German, Spanish, Italian, Portuguese, Dutch, the Scandinavian languages,
# Polish, Czech, Romanian, Turkish, Hungarian and Indonesian that are no English words (so "die" and "den" are
# in, "I", "do", "no", "per" and "un" – "UN" in English news – are not).
FOREIGN_FUNCTION_WORDS = frozenset(
    "le la les des du une et est dans pour sur par avec qui au aux ce sont "
    "der die das und ein eine ist von mit den dem im zu auf für sich nicht "
    "el los las del y en con por que es una su para al "
    "il di che della è gli nel sono "
    "os da do das dos em um uma com é "
    "het een van op voor zijn niet "
    "och og av af på är er det som til till för ikke inte "
    "w z się nie jest że je v se ve "
    "și în cu este pe din "
    "bir bu ile için az és egy hogy "
    "yang di ini itu dengan untuk dari".split()
) - {"do"}
MIN_WORDS = 20  # Latin-script words below which the function-word share tells nothing
MIN_FUNCTION_SHARE = 0.08
_LANGUAGE_CODE = regex.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$")
_WORD = regex.compile(r"[\p{L}\p{M}]+")
_LETTER = regex.compile(r"\p{L}")
_LATIN = regex.compile(r"\p{Latin}")


class LanguageMismatch(ValueError):
    """Texts given as one language that look like another; the message says how to go on."""


def normalize_language(code: str) -> str:
    """A checked, lower-cased ISO 639 code such as ``en``, ``fr``, ``zh`` or ``pt-br``."""
    if not isinstance(code, str) or not _LANGUAGE_CODE.match(code.lower()):
        raise ValueError(f"language {code!r} is not an ISO 639 code such as 'en', 'fr' or 'zh'")
    return code.lower()


def is_english(code: str) -> bool:
    """``en`` and its regional variants (``en-gb``)."""
    return normalize_language(code).split("-")[0] == "en"


@dataclasses.dataclass
class EnglishEvidence:
    """What the check saw: texts mostly in a non-Latin script, Latin words, English function words among them."""

    texts: int = 0  # texts with at least one letter
    non_latin: int = 0
    words: int = 0
    function_words: int = 0
    foreign_words: int = 0

    @property
    def non_latin_share(self) -> float:
        return self.non_latin / self.texts if self.texts else 0.0

    @property
    def function_share(self) -> float | None:
        """The share of English function words among the Latin words; None when there are too few words to tell."""
        return self.function_words / self.words if self.words >= MIN_WORDS else None

    @property
    def foreign_share(self) -> float | None:
        """The share of other languages' function words among the Latin words; None when too few to tell."""
        return self.foreign_words / self.words if self.words >= MIN_WORDS else None


def english_evidence(texts: Iterable[str]) -> EnglishEvidence:
    """Count, over distinct texts, the scripts of their letters and the function words among their distinct words."""
    evidence = EnglishEvidence()
    for text in set(texts):
        letters = len(_LETTER.findall(text))
        if not letters:
            continue
        evidence.texts += 1
        if 2 * len(_LATIN.findall(text)) < letters:
            evidence.non_latin += 1
            continue
        words = set(_WORD.findall(text.lower()))  # distinct: a word repeated a thousand times is one piece of evidence
        evidence.words += len(words)
        evidence.function_words += sum(word in ENGLISH_FUNCTION_WORDS for word in words)
        evidence.foreign_words += sum(word in FOREIGN_FUNCTION_WORDS for word in words)
    return evidence


def clearly_foreign(text: str) -> bool:
    """One short text (a caption) that is clearly not English: written mostly in a non-Latin script, or holding
    two or more other languages' function words and no English one ("Die Katze sitzt auf dem Tisch"). Leaning on
    the side of English, as :func:`check_english` does: "Place de la Concorde in Paris" has "in"."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return False
    if 2 * len(_LATIN.findall(text)) < letters:
        return True
    words = set(_WORD.findall(text.lower()))
    return sum(word in FOREIGN_FUNCTION_WORDS for word in words) >= 2 and not words & ENGLISH_FUNCTION_WORDS


def check_english(texts: Iterable[str]) -> None:
    """Refuse texts given as English that are mostly not (see the module's notes)."""
    evidence = english_evidence(texts)
    if 2 * evidence.non_latin > evidence.texts:
        why = (
            f"{evidence.non_latin:,} of {evidence.texts:,} texts are written mostly in a non-Latin script, "
            "so they are not English"
        )
    elif evidence.function_share is not None and evidence.function_share < MIN_FUNCTION_SHARE:
        why = (
            f"only {evidence.function_share:.1%} of their {evidence.words:,} words are English function words "
            f"such as 'the', 'of', 'with' (English text has {MIN_FUNCTION_SHARE:.0%} or more), so they do not "
            "look English"
        )
    elif evidence.foreign_share is not None and evidence.foreign_share > evidence.function_share:  # type: ignore[operator]
        why = (
            f"{evidence.foreign_share:.1%} of their {evidence.words:,} words are function words of other "
            f"languages such as 'de', 'la', 'und' and only {evidence.function_share:.1%} English ones, so they "
            "do not look English"
        )
    else:
        return
    raise LanguageMismatch(
        f"the texts were given as English (language 'en', the default) but {why}. Name their language "
        "(language='fr', --language fr, ...) and score them with profile 'multilingual' (the profiles 'minilm' "
        "and 'paper' read English only), or turn this check off (check_language=False, --no-language-check) "
        "if they are English"
    )
