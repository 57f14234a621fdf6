"""Wikipedia-IPC's mining pipeline: a Wikipedia dump → caption paraphrase pairs in a dataset folder.

The subpackages follow the data, and imports flow down this list only (a module imports
from its own package or from one above it in the list, never from one below):

==================  ==========================================================================
:mod:`.common`      generic helpers: atomic writes, the folder lock, plurals, the data folder
:mod:`.storage`     where a file lives: a local path, or an object store's URL (fsspec)
:mod:`.config`      the paper's parameters (:class:`~builder.config.PipelineConfig`, the presets)
                    and the settings of a build as a whole (:class:`~builder.config.BuildOptions`)
:mod:`.lang`        what the toolkit knows of each language: namespace names and magic words,
                    the language of a dump, word segmenters
:mod:`.sources`     reading input: XML dumps (compression backends, multistream ranges,
                    damage), SQL tables, verified downloads
:mod:`.extract`     Table 3's input: pages → image references with cleaned captions, as tasks
                    over dump files and ranges; incremental extraction across revisions
:mod:`.filters`     Table 3's steps 0–9: image clusters and identity, caption length and
                    rules (with the POS taggers), pair filters, the filter chain and its funnel
:mod:`.publish`     the dataset folder: pair shards, splits, the card, atomic publishing,
                    work folders, the Hub
:mod:`.engines`     one core that drives a build (prepare, extract, group, tag, filter,
                    publish) and its two drivers: :mod:`.engines.local` (processes and DuckDB)
                    and the package :mod:`.engines.spark`
:mod:`.cli`         the command line (``wikipedia-ipc``), a way in above the engines
==================  ==========================================================================

:mod:`.dataset_builder`, beside :mod:`.cli`, is the other way in: the ``datasets`` builder class
:class:`~builder.dataset_builder.WikipediaIPC` and the released corpus's reader (neither imports the other).

Where a change goes: a new dump format or compression → :mod:`builder.sources`; a language's
vocabulary → ``builder/data/languages.json`` (generated, see ``docs/languages.md``) and
:mod:`builder.lang`; a template whose text a caption needs → :mod:`builder.extract.templates`;
a filter step → :mod:`builder.filters` and :class:`~builder.filters.chain.FilterChain`;
a tagger → :mod:`builder.filters.tagging`; a file of the output → :mod:`builder.publish`; another
object store → :mod:`builder.storage`;
an engine → :mod:`builder.engines` (it implements :class:`~builder.engines.core.Engine`).
See ``docs/pipeline.md`` for the map.
"""
