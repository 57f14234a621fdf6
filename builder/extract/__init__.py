"""Pages → image references: the markup of a page (:mod:`.wikitext`), template parameters per
language (:mod:`.parameters`), caption cleaning (:mod:`.cleaning`, :mod:`.templates`), revisions
of a history read incrementally (:mod:`.incremental`, :mod:`.history`), and extraction as tasks
over dump files and byte ranges (:mod:`.tasks`)."""
