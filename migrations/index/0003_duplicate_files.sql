-- Second active copies of one article (a hand copy, say). The index holds one memory per active content
-- hash, the copy at the smallest path; the others are listed here with the bytes they were read from,
-- so that when the held copy goes (deleted, edited, archived) the next one takes its place at once,
-- as a rebuild would have chosen it. Rows come and go with their path, like every other table's.
CREATE TABLE duplicate_files (
    path         VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    blob_sha     VARCHAR NOT NULL
);
