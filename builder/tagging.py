"""Stage 5a: part-of-speech tagging with Penn Treebank tags, behind one small interface.

The caption rules of Table 4 read Penn Treebank tags. Four real backends:

* ``corenlp`` – the paper's own tagger: Stanford CoreNLP (tokenize, ssplit, pos
  with the ``english-left3words-distsim`` model) run as a Java server through
  stanza's client; the default when CoreNLP is installed;
* ``stanza`` – Stanford's neural pipeline (tokenizer, sentence splitter, xpos
  tagger); the default when CoreNLP is not, but stanza's English models are;
* ``spacy`` – spaCy's ``en_core_web_sm`` pipeline, whose fine-grained ``tag_`` is
  a Penn Treebank tag; chosen by name only;
* ``perceptron`` – NLTK's averaged-perceptron tagger, which runs anywhere. Its
  model is NLTK's ``averaged_perceptron_tagger_eng`` resource (found through
  ``NLTK_DATA``, and downloaded into NLTK's data folder on first use when the
  network allows) or, offline, the older model file that the ``textblob-aptagger``
  package ships, with a :class:`TaggerWarning` saying so: the two give other
  verdicts on some captions.

The perceptron and spaCy backends share one sentence splitter that, like CoreNLP's
ssplit, ends sentences only at sentence-final punctuation (``.``, ``?``, ``!``) and
not after the abbreviations common in captions. A tagger turns a batch of texts
into sentences of ``(token, tag)`` pairs.
"""

from __future__ import annotations

import bisect
import importlib.metadata
import importlib.util
import os
import pickle
import re
import shutil
import socket
import urllib.request
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

TaggedSentence = list[tuple[str, str]]
TaggedText = list[TaggedSentence]

# Abbreviations that end in a period inside captions but do not end a sentence.
ABBREVIATIONS = frozenset(
    "c ca cca fl b d r st mt ft dr mr mrs ms jr sr prof gen col lt capt sgt maj adm cmdr rev hon no nos "
    "vol vols fig figs approx est inc ltd co corp bros dept univ ave blvd rd hwy jan feb mar apr jun jul "
    "aug sep sept oct nov dec e.g i.e etc vs cf al u.s u.k a.m p.m".split()
)

TAGGER_NAMES = ("auto", "corenlp", "stanza", "spacy", "perceptron")
CORENLP_POS_MODEL = "edu/stanford/nlp/models/pos-tagger/english-left3words-distsim.tagger"
REQUEST_SEPARATOR = "\n\n"  # a blank line: a sentence break under ssplit.newlineIsSentenceBreak=two


NLTK_TAGGER = "averaged_perceptron_tagger_eng"
NLTK_INDEX = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/index.xml"
NLTK_PROBE_SECONDS = 5


class TaggerUnavailable(RuntimeError):
    """No model for the requested tagger; the message says how to get one."""


class TaggerWarning(UserWarning):
    """The tagger runs, but not with the model the toolkit prefers; the message says how to get that one."""


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


class SentenceSplitter:
    """Sentence boundaries at sentence-final punctuation, as CoreNLP's ssplit draws them.

    An untrained Punkt splitter (no ``punkt_tab`` download) that knows the
    abbreviations common in captions (``c. 1900``, ``St. Paul``), so their periods
    do not end a sentence; ``;`` and ``:`` never do, as in CoreNLP.
    """

    def __init__(self) -> None:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

        parameters = PunktParameters()
        parameters.abbrev_types = set(ABBREVIATIONS)
        self._punkt = PunktSentenceTokenizer(parameters)

    def split(self, text: str) -> list[str]:
        return self._punkt.tokenize(text)


# Typographic quotes and dashes as CoreNLP's PTB3 escaping writes them: the Treebank tokenizer then
# splits "Joseph’s" into "Joseph 's" (not "’ s"), and a dash becomes the "--" the WSJ-trained
# perceptron knows as punctuation. An en dash inside a range ("1809–1865") is left alone.
_PTB_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"'})
_PTB_DASHES = re.compile(r"\s*[—―]\s*|\s+–\s+")


def ptb_normalize(text: str) -> str:
    """Curly quotes to ASCII quotes, em dashes and spaced en dashes to ``--``."""
    return _PTB_DASHES.sub(" -- ", text.translate(_PTB_QUOTES))


def _nltk_model(factory: type) -> object | None:
    """NLTK's perceptron with its own model; fetched on first use when missing, None when it cannot be had.

    A quick probe comes first, so that an offline machine does not wait on NLTK's downloader.
    """
    try:
        return factory(load=True, lang="eng")
    except LookupError:
        pass
    try:
        urllib.request.urlopen(urllib.request.Request(NLTK_INDEX, method="HEAD"), timeout=NLTK_PROBE_SECONDS).close()
    except (OSError, ValueError):  # URLError is an OSError; no route, no name, no proxy
        return None
    from nltk.downloader import Downloader

    if not Downloader(server_index_url=NLTK_INDEX).download(NLTK_TAGGER, quiet=True):
        return None
    try:
        return factory(load=True, lang="eng")
    except LookupError:  # downloaded into a folder that is not on NLTK's search path
        return None


class PerceptronTagger:
    """NLTK's averaged perceptron on Penn-Treebank tokens (NLTK's Treebank word tokenizer on PTB-normalized text)."""

    name = "perceptron"

    def __init__(self) -> None:
        from nltk.tag.perceptron import PerceptronTagger as NLTKPerceptron
        from nltk.tokenize import NLTKWordTokenizer

        self._tagger = _nltk_model(NLTKPerceptron)
        self.model = f"nltk:{NLTK_TAGGER}"
        if self._tagger is None:
            self._tagger = self._textblob_model(NLTKPerceptron)
            self.model = "textblob-aptagger:trontagger-0.1.0"
            warnings.warn(
                f"NLTK's {NLTK_TAGGER} model is not installed and could not be downloaded (offline?); tagging with "
                "textblob-aptagger's older trontagger-0.1.0 model, which gives other verdicts on some captions (the "
                f"card names the model). To use NLTK's: python -c \"import nltk; nltk.download('{NLTK_TAGGER}')\", "
                f"or point NLTK_DATA at a folder holding taggers/{NLTK_TAGGER}",
                TaggerWarning,
                stacklevel=2,
            )
        self._sentences = SentenceSplitter()
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

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        tagged: list[TaggedText] = []
        for text in texts:
            sentences = [self._words.tokenize(sentence) for sentence in self._sentences.split(ptb_normalize(text))]
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


class SpacyTagger:
    """spaCy's tagger (Penn Treebank ``tag_``) on the sentences of the shared splitter.

    Only the tokenizer, ``tok2vec``, ``tagger`` and ``attribute_ruler`` run: the
    parser would only add its own sentence boundaries, which differ from CoreNLP's.
    ``model`` is a package name or a model folder; the default is the real
    ``en_core_web_sm``.
    """

    name = "spacy"
    UNUSED_COMPONENTS = ("parser", "senter", "ner", "lemmatizer")

    def __init__(self, model: str = "en_core_web_sm", batch_size: int = 256) -> None:
        install = "pip install spacy && python -m spacy download en_core_web_sm"
        try:
            import spacy
        except ImportError as error:
            raise TaggerUnavailable(f"spaCy is not installed: run {install}") from error
        try:
            self._nlp = spacy.load(model, exclude=list(self.UNUSED_COMPONENTS))
        except OSError as error:
            raise TaggerUnavailable(f"the spaCy model {model!r} is not installed: run {install}") from error
        if "tagger" not in self._nlp.pipe_names:
            raise TaggerUnavailable(f"the spaCy model {model!r} has no tagger (components: {self._nlp.pipe_names})")
        self.model = f"{self._nlp.meta['lang']}_{self._nlp.meta['name']}-{self._nlp.meta['version']}"
        self.batch_size = batch_size
        self._sentences = SentenceSplitter()

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        split = [[sentence for sentence in self._sentences.split(text) if sentence.strip()] for text in texts]
        flat = [sentence for sentences in split for sentence in sentences]
        documents = iter(self._nlp.pipe(flat, batch_size=self.batch_size))
        tagged: list[TaggedText] = []
        for sentences in split:
            tagged_text: TaggedText = []
            for _ in sentences:
                tokens = [(token.text, token.tag_) for token in next(documents) if not token.is_space]
                if tokens:
                    tagged_text.append(tokens)
            tagged.append(tagged_text)
        return tagged

    def signature(self) -> str:
        return f"spacy|spacy-{_version('spacy')}|{self.model}"


def corenlp_home() -> Path | None:
    """Where CoreNLP lives: ``CORENLP_HOME``, else where ``stanza.install_corenlp()`` puts it.

    None when stanza, whose client runs CoreNLP, is not installed.
    """
    if os.environ.get("CORENLP_HOME"):
        return Path(os.environ["CORENLP_HOME"])
    if importlib.util.find_spec("stanza") is None:
        return None
    from stanza.resources.installation import DEFAULT_CORENLP_DIR

    return Path(DEFAULT_CORENLP_DIR)


def corenlp_version(home: Path) -> str | None:
    """The CoreNLP version installed in ``home`` (its main jar and English models jar), or None."""
    versions = []
    for jar in home.glob("stanford-corenlp-*.jar"):
        match = re.fullmatch(r"stanford-corenlp-(\d+(?:\.\d+)*)\.jar", jar.name)
        if match and (home / f"stanford-corenlp-{match.group(1)}-models.jar").is_file():
            versions.append(match.group(1))
    return max(versions, key=lambda version: tuple(int(part) for part in version.split("."))) if versions else None


def pack_requests(texts: Sequence[str], limit: int) -> list[list[str]]:
    """Consecutive texts in groups whose joined length stays within ``limit`` (a longer text goes alone)."""
    separator = len(REQUEST_SEPARATOR)
    requests: list[list[str]] = []
    size = 0
    for text in texts:
        if not requests or size + separator + len(text) > limit:
            requests.append([])
            size = -separator
        requests[-1].append(text)
        size += separator + len(text)
    return requests


def assign_sentences(texts: Sequence[str], sentences: Sequence[tuple[int, TaggedSentence]]) -> list[TaggedText]:
    """Give each sentence of a joined request back to its text, by the offset of its first token.

    Offsets count UTF-16 code units, as Java does, in the texts joined by :data:`REQUEST_SEPARATOR`.
    """
    starts = []
    offset = 0
    for text in texts:
        starts.append(offset)
        offset += len(text.encode("utf-16-le")) // 2 + len(REQUEST_SEPARATOR)
    results: list[TaggedText] = [[] for _ in texts]
    for begin, tokens in sentences:
        results[bisect.bisect_right(starts, begin) - 1].append(tokens)
    return results


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


class CoreNLPTagger:
    """The paper's tagger: Stanford CoreNLP's tokenize, ssplit and pos annotators.

    One Java server per tagger (on a free port, so worker processes do not collide),
    started once and stopped by :meth:`close` (stanza's client also stops it at
    exit). Each batch of texts goes to the server as one document, texts separated
    by blank lines, which end sentences (``ssplit.newlineIsSentenceBreak=two``);
    sentences are mapped back to their texts by offset, counted as Java counts
    characters (UTF-16 code units).
    """

    name = "corenlp"
    MAX_REQUEST_CHARS = 90_000  # below the server's default maxCharLength of 100,000

    def __init__(
        self, home: str | os.PathLike[str] | None = None, memory: str = "2G", timeout_ms: int = 120_000
    ) -> None:
        found = Path(home) if home is not None else corenlp_home()
        if found is None or importlib.util.find_spec("stanza") is None:
            raise TaggerUnavailable(
                'the corenlp tagger runs Stanford CoreNLP through stanza\'s client: pip install -e ".[stanza]", then '
                'python -c "import stanza; stanza.install_corenlp()"; CoreNLP needs Java 17 or newer'
            )
        self.home = found
        version = corenlp_version(self.home)
        if version is None:
            raise TaggerUnavailable(
                f"Stanford CoreNLP is not installed in {self.home} (no stanford-corenlp-X.jar with its "
                'stanford-corenlp-X-models.jar): run python -c "import stanza; stanza.install_corenlp()" and set '
                "CORENLP_HOME to the folder it fills; CoreNLP needs Java 17 or newer (check with java -version)"
            )
        if shutil.which("java") is None:
            raise TaggerUnavailable("Stanford CoreNLP needs Java 17 or newer on the PATH (java -version finds none)")
        from stanza.server import CoreNLPClient, StartServer

        self.version = version
        self._client = CoreNLPClient(
            start_server=StartServer.FORCE_START,
            endpoint=f"http://localhost:{_free_port()}",
            annotators="tokenize,ssplit,pos",
            properties={"pos.model": CORENLP_POS_MODEL, "ssplit.newlineIsSentenceBreak": "two"},
            classpath=str(self.home / "*"),
            memory=memory,
            timeout=timeout_ms,
            be_quiet=True,
        )
        self._client.start()

    def close(self) -> None:
        """Stop the Java server (safe to call twice)."""
        self._client.stop()

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        tagged: list[TaggedText] = []
        for request in pack_requests([" ".join(text.split()) for text in texts], self.MAX_REQUEST_CHARS):
            document = self._client.annotate(REQUEST_SEPARATOR.join(request))
            sentences = [
                (sentence.token[0].beginChar, [(token.word, token.pos) for token in sentence.token])
                for sentence in document.sentence
                if sentence.token
            ]
            tagged.extend(assign_sentences(request, sentences))
        return tagged

    def signature(self) -> str:
        return f"corenlp|stanza-{_version('stanza')}|corenlp-{self.version}|pos:english-left3words-distsim"


def stanza_models_installed(model_dir: str | None = None) -> bool:
    """Whether stanza and its English tokenize/pos models are on this machine."""
    if importlib.util.find_spec("stanza") is None:
        return False
    if model_dir is None and not os.environ.get("STANZA_RESOURCES_DIR"):
        from stanza.resources.common import DEFAULT_MODEL_DIR

        model_dir = DEFAULT_MODEL_DIR
    root = Path(model_dir or os.environ["STANZA_RESOURCES_DIR"])
    return any((root / "en" / "pos").glob("*.pt")) if (root / "en").is_dir() else False


def auto_backend() -> str:
    """The backend ``auto`` means here: CoreNLP if installed, then stanza with its models, then the perceptron."""
    home = corenlp_home()
    if home is not None and importlib.util.find_spec("stanza") is not None and corenlp_version(home) is not None:
        return "corenlp"
    if stanza_models_installed():
        return "stanza"
    return "perceptron"


def get_tagger(spec: str | Tagger = "auto", language: str = "en") -> Tagger:
    """A tagger by name (one of :data:`TAGGER_NAMES`), or the object given."""
    if not isinstance(spec, str):
        return spec
    if language != "en":
        raise TaggerUnavailable(f"no tagger for the language {language!r}")
    if spec == "auto":
        spec = auto_backend()
    if spec == "corenlp":
        return CoreNLPTagger()
    if spec == "stanza":
        return StanzaTagger()
    if spec == "spacy":
        return SpacyTagger()
    if spec == "perceptron":
        return PerceptronTagger()
    choices = ", ".join(repr(name) for name in TAGGER_NAMES)
    raise ValueError(f"unknown tagger {spec!r}; choose one of {choices}")
