"""Reading input: MediaWiki XML dumps (:mod:`.xml`) over their decompressors (:mod:`.compression`),
cut into ranges for workers (:mod:`.multistream`), with damage located by byte (:mod:`.damage`);
what a dump file is (:mod:`.files`); MySQL table dumps (:mod:`.sqldump`); verified downloads
(:mod:`.download`) over bounded requests to a mirror (:mod:`.mirror`)."""
