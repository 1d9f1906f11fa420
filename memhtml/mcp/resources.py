"""The `memhtml://` resource templates, their URIs, and the text a read returns.

`memhtml://file/{path}` is the live memory (an explicit open: it counts as an access, as `read`
does); `memhtml://at/{commit}/{path}` is the memory as a commit holds it, a citation that cannot
move. Both answer `# title`, the gist and the body text, separated by blank lines, as the original
does. The original's third template (`memhtml://sleep/{run-id}`) serves curation reports, which
this version does not have.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

import mcp_types as types

from memhtml.contracts.errors import UsageError

FILE_PREFIX: Final[str] = "memhtml://file/"
AT_PREFIX: Final[str] = "memhtml://at/"
TEXT: Final[str] = "text/plain"

TEMPLATES: Final[tuple[types.ResourceTemplate, ...]] = (
    types.ResourceTemplate(
        name="memory",
        uri_template=FILE_PREFIX + "{path}",
        description="A memory as it is now: title, gist and body. Counts as an explicit open.",
        mime_type=TEXT,
    ),
    types.ResourceTemplate(
        name="memory-at-commit",
        uri_template=AT_PREFIX + "{commit}/{path}",
        description="A memory as a commit (7 to 64 lowercase hex digits) holds it: a citation that cannot move.",
        mime_type=TEXT,
    ),
)


def read_resource(root: Path, uri: str) -> types.ReadResourceResult:
    """The text of the memory `uri` names; raises the operation's MemhtmlError when it cannot."""
    if uri.startswith(FILE_PREFIX):
        from memhtml.operations.read import read

        detail: Mapping[str, Any] = read(root, unquote(uri[len(FILE_PREFIX) :]))
    elif uri.startswith(AT_PREFIX):
        from memhtml.operations.read import read_at

        # A template client percent-encodes the slashes of {path}; decode before splitting off the commit.
        commit, _, path = unquote(uri[len(AT_PREFIX) :]).partition("/")
        detail = read_at(root, commit, path)
    else:
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"unknown resource URI: {uri}. Templates: {', '.join(template.uri_template for template in TEMPLATES)}",
            [f"{FILE_PREFIX}<path>", f"{AT_PREFIX}<commit>/<path>"],
        )
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=TEXT, text=_text(detail))])


def pinned_uri(resolved: Mapping[str, Any]) -> str | None:
    """The pinned citation of a resolved memory, at the commit the index answered from; None when the
    walk found nothing indexed to pin."""
    commit, path = resolved.get("indexedCommit"), resolved.get("path")
    if not commit or not path or resolved.get("stopReason") not in ("live", "archived"):
        return None
    return f"{AT_PREFIX}{commit}/{path}"


def _text(detail: Mapping[str, Any]) -> str:
    return f"# {detail.get('title') or ''}\n\n{detail.get('gist') or ''}\n\n{detail.get('body') or ''}"
