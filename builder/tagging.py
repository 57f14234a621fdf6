"""Stage 5a: part-of-speech tagging with Penn Treebank tags, behind one small interface.

The caption rules of Table 4 read Penn Treebank tags. The paper used Stanford
CoreNLP; we offer two real backends:

* ``stanza`` – Stanford's neural pipeline (tokenizer, sentence splitter, xpos
  tagger); the default when its English models are installed;
* ``perceptron`` – NLTK's averaged-perceptron tagger, which runs anywhere. Its
  model is NLTK's ``averaged_perceptron_tagger_eng`` resource (found through
  ``NLTK_DATA``) or, failing that, the compatible model file that the
  ``textblob-aptagger`` package ships.

A tagger turns a batch of texts into sentences of ``(token, tag)`` pairs.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

TaggedSentence = list[tuple[str, str]]
TaggedText = list[TaggedSentence]

# Abbreviations that end in a period inside captions but do not end a sentence.
ABBREVIATIONS = frozenset(
    "c ca cca fl b d r st mt ft dr mr mrs ms jr sr prof gen col lt capt sgt maj adm cmdr rev hon no nos "
    "vol vols fig figs approx est inc ltd co corp bros dept univ ave blvd rd hwy jan feb mar apr jun jul "
    "aug sep sept oct nov dec e.g i.e etc vs cf al u.s u.k".split()
)


class TaggerUnavailable(RuntimeError):
    """No model for the requested tagger; the message says how to get one."""


class Tagger(Protocol):
    """What the caption rules need from a POS tagger."""

    name: str

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        """Split each text into sentences and tag every token."""
        ...

    def signature(self) -> str:
        """Backend, library version and model, for the dataset card."""
        ...


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class PerceptronTagger:
    """NLTK's averaged perceptron with an offline tokenizer (no ``punkt_tab`` needed).

    Sentences are split by an untrained Punkt splitter that knows the abbreviations
    common in captions (``c. 1900``, ``St. Paul``); tokens come from NLTK's
    Treebank-style word tokenizer.
    """

    name = "perceptron"

    def __init__(self) -> None:
        from nltk.tag.perceptron import PerceptronTagger as NLTKPerceptron
        from nltk.tokenize import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

        try:
            self._tagger = NLTKPerceptron(load=True, lang="eng")
            self.model = "nltk:averaged_perceptron_tagger_eng"
        except LookupError:
            self._tagger = self._textblob_model(NLTKPerceptron)
            self.model = "textblob-aptagger:trontagger-0.1.0"
        parameters = PunktParameters()
        parameters.abbrev_types = set(ABBREVIATIONS)
        self._sentences = PunktSentenceTokenizer(parameters)
        self._words = NLTKWordTokenizer()

    @staticmethod
    def _textblob_model(factory: type) -> object:
        spec = importlib.util.find_spec("textblob_aptagger")
        if spec is None or spec.origin is None:
            raise TaggerUnavailable(
                'the perceptron tagger has no model: run python -c "import nltk; '
                "nltk.download('averaged_perceptron_tagger_eng')\" (or point NLTK_DATA at a folder "
                "holding taggers/averaged_perceptron_tagger_eng), or pip install textblob-aptagger"
            )
        model_file = Path(spec.origin).parent / "trontagger-0.1.0.pickle"
        with open(model_file, "rb") as handle:  # a model file shipped inside an installed package
            weights, tagdict, classes = pickle.load(handle, encoding="latin1")  # noqa: S301
        tagger = factory(load=False)
        tagger.model.weights = weights
        tagger.model.classes = classes
        tagger.tagdict = tagdict
        tagger.classes = classes
        return tagger

    def split_sentences(self, text: str) -> list[str]:
        return self._sentences.tokenize(text)

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        tagged: list[TaggedText] = []
        for text in texts:
            sentences = [self._words.tokenize(sentence) for sentence in self.split_sentences(text)]
            tagged.append([self._tagger.tag(tokens) for tokens in sentences if tokens])
        return tagged

    def signature(self) -> str:
        return f"perceptron|nltk-{_version('nltk')}|{self.model}"


class StanzaTagger:
    """Stanza's English tokenizer, sentence splitter and xpos (Penn Treebank) tagger."""

    name = "stanza"

    def __init__(self, model_dir: str | None = None, use_gpu: bool = False, batch_size: int = 256) -> None:
        import stanza

        self.model_dir = model_dir or os.environ.get("STANZA_RESOURCES_DIR") or str(Path.home() / "stanza_resources")
        try:
            self._pipeline = stanza.Pipeline(
                "en",
                processors="tokenize,pos",
                dir=self.model_dir,
                download_method=None,
                use_gpu=use_gpu,
                pos_batch_size=batch_size,
                logging_level="WARN",
            )
        except Exception as error:  # stanza raises several types for a missing model
            raise TaggerUnavailable(
                f"stanza's English models are not installed in {self.model_dir} ({type(error).__name__}: {error}); "
                "run python -c \"import stanza; stanza.download('en', processors='tokenize,pos')\" "
                "or choose the perceptron tagger"
            ) from error

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        import stanza

        documents = self._pipeline([stanza.Document([], text=text) for text in texts])
        return [
            [[(word.text, word.xpos) for word in sentence.words] for sentence in document.sentences]
            for document in documents
        ]

    def signature(self) -> str:
        return f"stanza|stanza-{_version('stanza')}|en:tokenize,pos"


def stanza_models_installed(model_dir: str | None = None) -> bool:
    """Whether stanza and its English tokenize/pos models are on this machine."""
    if importlib.util.find_spec("stanza") is None:
        return False
    root = Path(model_dir or os.environ.get("STANZA_RESOURCES_DIR") or Path.home() / "stanza_resources")
    return any((root / "en" / "pos").glob("*.pt")) if (root / "en").is_dir() else False


def get_tagger(spec: str | Tagger = "auto") -> Tagger:
    """A tagger by name (``auto``, ``stanza``, ``perceptron``), or the object given."""
    if not isinstance(spec, str):
        return spec
    if spec == "auto":
        spec = "stanza" if stanza_models_installed() else "perceptron"
    if spec == "stanza":
        return StanzaTagger()
    if spec == "perceptron":
        return PerceptronTagger()
    raise ValueError(f"unknown tagger {spec!r}; choose 'auto', 'stanza' or 'perceptron'")
