"""The four real files of reference §1.6, written by the original CLI 0.15.1, shared by the html tests."""

# Reference §1.6 (a): prose with a fence, provenance, entities/tags and a relates_to link.
FILE_A = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Prod rollbacks drain the VIP first</title>
<meta name="memhtml-type" content="procedural">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="2026-11-30T04:21:21Z">
<meta name="memhtml-updated" content="2026-11-30T04:21:21Z">
<meta name="memhtml-confidence" content="0.90">
<meta name="memhtml-importance" content="8">
<meta name="memhtml-content-hash" content="sha256:1257c3313e0d22235a5fbe2db221ea6d4813505ef78b2176540634659ffc9e0b">
<meta name="memhtml-session" content="f7e32699-d45b-4248-8ae6-894dfc606f49">
<meta name="memhtml-prompt" content="pr_01JQ8ZK3">
<meta name="memhtml-turn" content="t_7c1a">
<meta name="memhtml-entity" content="service:checkout-api">
<meta name="memhtml-entity" content="person:sanju">
<meta name="memhtml-tag" content="deploy">
<meta name="memhtml-tag" content="oncall">
<link rel="memhtml-relates-to" href="/resources/people/sanju-owns-the-checkout-api.html">
</head>
<body>
<article>
<p><mark>If a prod rollback is issued, drain the VIP before reverting the deploy.</mark> The revert alone leaves in-flight connections pinned to the old target group.</p>
<figure><pre><code data-lang="bash">aws elbv2 modify-target-group-attributes \\
  --target-group-arn "$TG"</code></pre></figure>
</article>
</body>
</html>
"""

# Reference §1.6 (b): the new file of a correction pair, and the archived old file.
FILE_B_NEW = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>WAL admits one writer, many readers</title>
<meta name="memhtml-type" content="semantic">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="2026-11-30T04:21:35Z">
<meta name="memhtml-updated" content="2026-11-30T04:21:35Z">
<meta name="memhtml-content-hash" content="sha256:5e6f7b9b65254895ff26b871ad61b3ee0d942ed9a79fce57f66bad3de031357d">
<meta name="memhtml-session" content="sess-3">
<meta name="memhtml-valid-from" content="2026-11-30T04:21:35Z">
<link rel="memhtml-supersedes" href="/archive/2026/resources/infra/wal-admits-one-writer-2.html">
</head>
<body>
<article>
<p><mark>SQLite WAL admits one writer at a time and unlimited concurrent readers.</mark></p>
</article>
</body>
</html>
"""

FILE_B_OLD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>WAL admits one writer</title>
<meta name="memhtml-type" content="semantic">
<meta name="memhtml-status" content="archived">
<meta name="memhtml-created" content="2026-11-30T04:21:24Z">
<meta name="memhtml-updated" content="2026-11-30T04:21:35Z">
<meta name="memhtml-content-hash" content="sha256:101810528cfcef916e74e630ea59782784504ac7c8c26c8fbf04da84619eb896">
<meta name="memhtml-valid-until" content="2026-11-30T04:21:35Z">
<meta name="memhtml-archived" content="2026-11-30T04:21:35Z">
<meta name="memhtml-superseded-by" content="/areas/inbox/wal-admits-one-writer-many-readers.html">
<meta name="memhtml-tag" content="infra">
</head>
<body>
<article>
<p><mark>WAL admits a single writer at a time, with many readers.</mark></p>
</article>
</body>
</html>
"""

# Reference §1.6 (c): a blocked task with a task-class edge.
FILE_C = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Rotate the deploy key</title>
<meta name="memhtml-type" content="task">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="2026-11-30T04:21:41Z">
<meta name="memhtml-updated" content="2026-11-30T04:21:53Z">
<meta name="memhtml-content-hash" content="sha256:fd35c9d0fe5bdd863c8d1f80397cdbbcde9bfce369f2397391bc374c64f050a5">
<meta name="memhtml-task-status" content="blocked">
<meta name="memhtml-due" content="2026-12-01">
<link rel="memhtml-blocks" href="/projects/checkout-api/tasks/wire-the-drain-step-into-the-runbook.html">
</head>
<body>
<article>
<p><mark>Rotate the deploy key</mark></p>
</article>
</body>
</html>
"""
