-- Second active copies of one article (a hand copy, say). The index holds one memory per active content
-- hash: a committed copy before an uncommitted one, then the copy at the smallest path. The others are
-- listed here with the bytes they were read from (HEAD's, or the working tree's when uncommitted),
-- so that when the held copy goes (deleted, edited, archived) the next one takes its place at once,
-- as a rebuild would have chosen it. Rows come and go with their path, like every other table's.
CREATE TABLE duplicate_files (
    path         VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    blob_sha     VARCHAR NOT NULL
);
-- An index built before this table skipped second copies without listing them, and held the copy it met
-- first: the next pass rebuilds it (an index without a watermark commit is rebuilt from git; the
-- vectors, keyed by text, are kept).
UPDATE index_state SET head_sha = NULL;
