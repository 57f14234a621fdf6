"""What the toolkit knows of each language: File namespace names, image options and redirect words
(:mod:`.languages`, from MediaWiki's own tables), the language of a dump (:mod:`.dumps`), and how
step 4 counts the words of a caption (:mod:`.segmenters`), and English WordNet for the Déjà rules
(:mod:`.wordnet`)."""
