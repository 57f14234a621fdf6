"""Wikipedia-IPC's mining pipeline: Wikipedia dump → caption paraphrase pairs.

One module per stage, in pipeline order: :mod:`builder.dump` (read dumps),
:mod:`builder.wikitext` (find image references), :mod:`builder.extraction`
(both as tasks over dump files and byte ranges), :mod:`builder.cleaning`
(caption wikitext → plain text), :mod:`builder.captions` and
:mod:`builder.tagging` (caption filters and POS rules), :mod:`builder.clusters`
(image clusters and pair construction), :mod:`builder.pairs` (pair filters),
:mod:`builder.output` (the dataset folder). :mod:`builder.pipeline` lists the
filter steps of the paper's Table 3; :mod:`builder.config` holds the parameters;
:mod:`builder.local` (worker processes and DuckDB on one machine) and
:mod:`builder.spark` (PySpark) are engines: they only schedule the stages.
"""
