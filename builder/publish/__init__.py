"""The dataset folder: pair rows and shards (:mod:`.writer`), train/validation/test (:mod:`.splits`),
the card (:mod:`.card`, :mod:`.fidelity`), the folder's layout and its reader (:mod:`.layout`),
atomic publishing (:mod:`.publisher`), work folders (:mod:`.workdir`), the Hub (:mod:`.hub`)."""
