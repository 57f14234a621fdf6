"""Words per language, for step 4 (caption words ≥ 6): Penn Treebank tokens for English,
Unicode word runs for languages written with spaces, and a word segmenter (jieba, Sudachi,
PyThaiNLP) for Chinese, Japanese and Thai, whose absence is said before a build starts.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from collections.abc import Callable
from typing import Any

import regex

__all__ = ["WordCounterUnavailable", "has_min_words", "word_counter_signature"]


@functools.cache
def _treebank() -> Any:
    """NLTK's Treebank word tokenizer, imported on first use and without the optional libraries ``import nltk``
    loads (:func:`builder.common.importing_nltk`: scikit-learn, SciPy, pandas, about 250 MB), which a build's
    processes should not hold while they read dumps or group references."""
    from builder.common import importing_nltk

    with importing_nltk():
        from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_count(text: str, language: str = "en") -> int:
    """Step 4's length in words of ``language`` (see :func:`word_counter_signature`).

    English: Penn Treebank tokens with at least one letter or digit. The authors
    counted the tokens of CoreNLP's PTB tokenizer that are not all punctuation, so
    "Algeria's" is two words and "–" none; NLTK's Treebank tokenizer splits the same
    way. Unlike their ASCII ``\\W``, letters of every script count. Other languages
    written with spaces: Unicode word tokens (runs of letters, marks and digits, so
    "l'église" is two words, as PTB splits "Algeria's"). Scripts without spaces: the
    tokens of the language's segmenter that hold a letter or digit.
    """
    if language in ("en", "simple"):
        return sum(1 for token in _treebank().tokenize(text) if any(char.isalnum() for char in token))
    if language in UNSPACED_LANGUAGES:
        return sum(1 for token in _segmenter(language)(text) if any(char.isalnum() for char in token))
    return len(_WORD_TOKEN.findall(text))


def has_min_words(text: str, minimum: int, language: str = "en") -> bool:
    """``word_count(text, language) >= minimum``, without tokenizing most English captions.

    The Treebank tokenizer only splits whitespace-separated tokens further, never joins
    them, so a caption with ``minimum`` such tokens holding a letter or digit passes as is.
    """
    english = language in ("en", "simple")
    if english and sum(1 for token in text.split() if any(char.isalnum() for char in token)) >= minimum:
        return True
    return word_count(text, language) >= minimum


class WordCounterUnavailable(RuntimeError):
    """No segmenter for a language written without spaces; the message says how to install one."""


# Letters, combining marks (Devanagari, Arabic vowel signs) and digits; apostrophes and hyphens split.
_WORD_TOKEN = regex.compile(r"[\p{L}\p{M}\p{N}]+")

# Languages written without spaces between words: whitespace runs would count whole clauses.
UNSPACED_LANGUAGES = frozenset(
    {"zh", "zh-yue", "yue", "wuu", "gan", "zh-classical", "lzh", "ja", "th", "lo", "km", "my", "bo", "dz", "shn"}
)
# The segmenter of each unspaced language that has one: (package to import, distribution, pip install).
SEGMENTERS = {
    "zh": ("jieba", "jieba", "pip install jieba"),
    "ja": ("sudachipy", "sudachipy", "pip install sudachipy sudachidict-core"),
    "th": ("pythainlp", "pythainlp", "pip install pythainlp"),
}
_SEGMENTER_CACHE: dict[str, Callable[[str], list[str]]] = {}


def _segmenter(language: str) -> Callable[[str], list[str]]:
    """The word segmenter of an unspaced language, loaded once; refused with how to install it."""
    if language in _SEGMENTER_CACHE:
        return _SEGMENTER_CACHE[language]
    if language not in SEGMENTERS:
        raise WordCounterUnavailable(
            f"cannot count words in {language!r}: it is written without spaces and the toolkit has no word segmenter "
            f"for it (segmenters: {', '.join(f'{code} ({SEGMENTERS[code][0]})' for code in sorted(SEGMENTERS))})"
        )
    module, _, install = SEGMENTERS[language]
    if importlib.util.find_spec(module) is None or (module == "sudachipy" and not _sudachi_dictionary()):
        raise WordCounterUnavailable(
            f"cannot count words in {language!r}: it is written without spaces and its segmenter {module} is not "
            f"installed; run {install}"
        )
    if module == "jieba":
        import jieba

        jieba.setLogLevel(60)  # its dictionary-loading chatter goes to stderr otherwise
        segment = jieba.lcut
    elif module == "sudachipy":
        from sudachipy import Dictionary, SplitMode

        tokenizer = Dictionary(dict=_sudachi_dictionary()).tokenizer()

        def segment(text: str) -> list[str]:
            return [morpheme.surface() for morpheme in tokenizer.tokenize(text, SplitMode.C)]
    else:
        from pythainlp.tokenize import word_tokenize

        def segment(text: str) -> list[str]:
            return word_tokenize(text, engine="newmm")

    _SEGMENTER_CACHE[language] = segment
    return segment


def _sudachi_dictionary() -> str | None:
    """The installed sudachi dictionary (``core`` preferred), or None."""
    for name in ("core", "full", "small"):
        if importlib.util.find_spec(f"sudachidict_{name}") is not None:
            return name
    return None


def word_counter_signature(language: str) -> str:
    """How :func:`word_count` counts words of ``language``, for the dataset card."""
    if language in ("en", "simple"):
        return f"PTB tokens (NLTK {importlib.metadata.version('nltk')})"
    if language in UNSPACED_LANGUAGES:
        _segmenter(language)  # refuses when there is none
        _, distribution, _ = SEGMENTERS[language]
        version = importlib.metadata.version(distribution)
        if distribution == "sudachipy":
            dictionary = f"sudachidict-{_sudachi_dictionary()}"
            return f"sudachipy {version} tokens (mode C, {dictionary} {importlib.metadata.version(dictionary)})"
        return f"{distribution} {version} tokens"
    return "Unicode word tokens"
