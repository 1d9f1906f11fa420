-- Whether a pass stored texts whose vectors were not all written yet. The pass that projects new texts
-- sets it in the statement that moves the watermark; embedding them clears it. A command cut short in
-- between (a signal after a write's commit, a full disk, a kill) leaves it set, so the next command
-- embeds every text still without a vector instead of reading the index as fresh.
ALTER TABLE index_state ADD COLUMN vectors_owed BOOLEAN DEFAULT FALSE;
UPDATE index_state SET vectors_owed = FALSE;
