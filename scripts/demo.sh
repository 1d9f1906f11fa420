#!/usr/bin/env bash
# The 2-minute tour: a demo store, a handful of memories (one written twice), git log and status.
set -euo pipefail
cd "$(dirname "$0")/.."
memhtml=(.venv/bin/memhtml)
store=${DEMO_STORE:-.demo-store}
rm -rf "$store"
# A demo must run on a machine with no git identity; real stores use the user's own.
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-memhtml demo} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-demo@memhtml.invalid}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-memhtml demo} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-demo@memhtml.invalid}
export MEMHTML_ROOT=$store

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step "${memhtml[@]}" init --dense
step "${memhtml[@]}" write --dense --title "One writer and many readers share the index" \
  --claim "WAL admits a single writer at a time and any number of concurrent readers." \
  --body "So a CLI command never waits on a search." --type semantic --tag infra \
  --entity service:index-db --importance 7 --confidence 0.9
step "${memhtml[@]}" write --dense --title "Checkout retries" --claim "The checkout service retries twice." \
  --type procedural --entity service:checkout --workspace payments
step "${memhtml[@]}" write --dense --title "Deploy freeze" --type episodic \
  --article-html '<p><mark>The release froze on <time datetime="2026-07-28">28 July</time>.</mark> A failing canary held it.</p>'
step "${memhtml[@]}" write --dense --title "Prefers short answers" --type user_preference \
  --claim "The user prefers answers under five lines."
echo; echo "# the same fact again: nothing is stored, the existing path is returned"
step "${memhtml[@]}" write --dense --title "One writer and many readers share the index" \
  --claim "WAL admits a single writer at a time and any number of concurrent readers." \
  --body "So a CLI command never waits on a search." --type semantic --tag infra \
  --entity service:index-db --importance 7 --confidence 0.9
echo; echo "# a refused write: no <mark>, so nothing touches the tree (exit 1)"
"${memhtml[@]}" write --dense --title "No claim" --type semantic --article-html '<p>no mark</p>' || echo "exit status $?"
echo; echo "# the same fact with a new confidence: that one file is updated (outcome updated, changed)"
step "${memhtml[@]}" write --dense --title "Checkout retries" --claim "The checkout service retries twice." \
  --type procedural --entity service:checkout --workspace payments --confidence 0.6
echo; echo "# a batch: one commit, one answer per op; an in-batch duplicate is unchanged"
printf '%s\n' \
  '{"op":"write","title":"API timeout","type":"semantic","body":"The API timeout is 30 seconds. Set at the gateway.","entity":"service:api"}' \
  '{"op":"write","title":"API timeout","type":"semantic","body":"The API timeout is 30 seconds. Set at the gateway.","entity":"service:api"}' \
  '{"op":"write","title":"Pool ceiling","type":"semantic","body":"The connection pool ceiling is 64.","tag":"db"}' \
  | step "${memhtml[@]}" apply --dense --detect-conflicts
echo; echo "# a correction: the new fact and the archived old one, in one commit"
step "${memhtml[@]}" correct resources/db/pool-ceiling.html --dense --title "Pool ceiling" \
  --claim "The connection pool ceiling is 96." --reason "raised for the holiday peak"
step "${memhtml[@]}" why resources/db/pool-ceiling.html --dense
step "${memhtml[@]}" read resources/infra/one-writer-and-many-readers-share-the-index.html --dense
step "${memhtml[@]}" search "concurrent readers" --dense
echo; echo "# nothing in the store mentions zebras: no hits, not the newest memories"
step "${memhtml[@]}" search "zebra" --dense
step git -C "$store" log --stat --format='%h %s'
step "${memhtml[@]}" status
