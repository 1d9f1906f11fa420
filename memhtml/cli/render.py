"""Terminal rendering with rich: the same result a script gets as JSON, laid out for a person."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any, Final

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text


def render_success(response_type: str, data: Mapping[str, Any]) -> None:
    console = Console()
    if response_type == "cli.version":
        line = f"{data['name']} {data['version']} (the command contract of memhtml {data['compat']})"
        console.print(line, highlight=False)
        return
    if response_type == "validate.report":
        console.print(Panel(_validation(data), title=response_type, title_align="left", border_style="green"))
        return
    if response_type == "batch.applied":
        tone = "yellow" if data.get("partial") or data.get("stored") is False else "green"
        console.print(Panel(_batch(data), title=response_type, title_align="left", border_style=tone))
        return
    if response_type == "doctor.report":
        data = _doctor_findings(data)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in data.items():
        table.add_row(key, _cell(value))
    console.print(Panel(table, title=response_type, title_align="left", border_style=_tone(data)))


def render_failure(envelope: dict[str, Any]) -> None:
    console = Console()
    body = Text(envelope["error"], style="bold")
    body.append(f"\n{envelope['code']}", style="red")
    for suggestion in envelope.get("suggestions", []):
        body.append(f"\n  try: {suggestion}", style="dim")
    if "outcome" in envelope:
        body.append(f"\nstored: false ({envelope['outcome']})", style="yellow")
    data = envelope.get("data")
    if isinstance(data, dict) and isinstance(data.get("violations"), list):
        body.append("\n\n").append_text(_validation(data))
    console.print(Panel(body, title="error", title_align="left", border_style="red"))


def render_markdown(markdown: str) -> None:
    Console().print(Markdown(markdown))


def _validation(data: Mapping[str, Any]) -> Text:
    """A `validate.report` as a listing: every violation under its file, then warnings and skips."""
    text = Text(f"{data['checked']} memory file(s) checked, {data['invalid']} invalid", style="bold")
    sections = (("violations", "red"), ("warnings", "yellow"), ("skipped", "dim"))
    for key, style in sections:
        entries = data.get(key) or []
        if not entries:
            continue
        text.append(f"\n{key}:", style=style)
        for entry in entries:
            code = f" [{entry['code']}]" if "code" in entry else ""
            text.append(f"\n  {entry['path']}: ", style="cyan").append(f"{entry['reason']}{code}")
    return text


_DOCTOR_ALWAYS: tuple[str, ...] = ("healthy", "root", "headSha", "filesChecked", "remedies", "repaired")


# A finding lists at most this many entries on a terminal (a hand-edited 100k store can have thousands
# of stale hashes, nine lines each); JSON lists every one.
RENDERED_FINDINGS: Final[int] = 20


def _doctor_findings(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A person reads a doctor report for what is wrong: empty findings and false flags are left out,
    and a long finding shows its first entries and how many more there are."""
    kept = {
        key: value
        for key, value in data.items()
        if key in _DOCTOR_ALWAYS
        or (value not in ([], {}, None, False, 0) and key != "indexDrift")
        or (key == "indexDrift" and isinstance(value, dict) and any(value.values()))
    }
    for key, value in kept.items():
        if isinstance(value, dict):  # `indexDrift` holds its path lists one level down
            kept[key] = {name: _first_entries(entries) for name, entries in value.items()}
        else:
            kept[key] = _first_entries(value)
    return kept


def _first_entries(value: Any) -> Any:
    """A list longer than `RENDERED_FINDINGS` cut to its first entries and a line saying how many more."""
    if not isinstance(value, list) or len(value) <= RENDERED_FINDINGS:
        return value
    return [*value[:RENDERED_FINDINGS], f"… {len(value) - RENDERED_FINDINGS:,} more; --json lists every one"]


# A batch answer lists at most this many ops on a terminal: a 10k-op answer laid out whole is 200k lines
# and took rich most of a minute to draw. JSON keeps every op's answer.
RENDERED_OPS: Final[int] = 20


def _batch(data: Mapping[str, Any]) -> Group:
    """A batch answer as a person reads it: the counts, whether and where it landed, then a row per op.
    Past `RENDERED_OPS` ops, the rows are every op that went wrong (refused, failed, in conflict) and
    then the first ops, up to that many, and a last line says how many more there are."""
    summary: dict[str, int] = data.get("summary") or {}
    counts = [f"{name} {count:,}" for name, count in summary.items() if count or name in ("total", "written")]
    text = Text(" · ".join(counts), style="bold")
    landing = [f"stored {str(bool(data.get('stored'))).lower()}", f"partial {str(bool(data.get('partial'))).lower()}"]
    if data.get("preview"):
        landing.append("preview (nothing written)")
    if data.get("commit_sha"):
        landing.append(f"commit {data['commit_sha']}")
    text.append("\n" + " · ".join(landing))
    index = data.get("index")
    if isinstance(index, dict) and index.get("warning"):
        text.append(f"\n{index['warning']}", style="yellow")
        if index.get("remedy"):
            text.append(f"\n  try: {index['remedy']}", style="dim")
    if data.get("near_duplicates_degraded"):
        text.append("\nnear-duplicate detection ran without vectors", style="yellow")
    results: list[dict[str, Any]] = data.get("results") or []
    shown = results
    if len(results) > RENDERED_OPS:
        troubled = [
            position for position, result in enumerate(results) if not result.get("ok") or result.get("conflict")
        ]
        first = troubled[:RENDERED_OPS]
        picked = set(first)
        others = (position for position in range(len(results)) if position not in picked)
        first += itertools.islice(others, RENDERED_OPS - len(first))  # then the first ops, up to the limit
        shown = [results[position] for position in first]
    ops = Table(show_header=False, box=None, pad_edge=False)
    ops.add_column(justify="right", no_wrap=True)
    ops.add_column(no_wrap=True)
    ops.add_column(overflow="fold")  # a long path folds inside its column, on its op's row
    for result in shown:
        ops.add_row(str(result["index"]), *_op_cells(result))
    parts: list[Text | Table] = [text]
    if shown:
        parts += [Text(""), ops]
    if len(shown) < len(results):
        parts.append(Text(f"… {len(results) - len(shown):,} more; --json answers every op", style="dim"))
    return Group(*parts)


def _op_cells(result: dict[str, Any]) -> tuple[Text, Text]:
    outcome = Text(str(result.get("outcome", "?")), style="green" if result.get("ok") else "red")
    detail = Text(str(result.get("path") or "—"))
    if result.get("error"):
        detail.append(f"\n{result.get('code')}: {result['error']}", style="red")
    for key in ("conflict", "near_duplicates", "redacted", "stripped"):  # what the op's JSON answer adds
        if result.get(key):
            detail.append(f"\n{key}: {json.dumps(result[key], ensure_ascii=False)}", style="yellow")
    return outcome, detail


def _tone(data: Mapping[str, Any]) -> str:
    if data.get("stored") is False or data.get("healthy") is False:
        return "yellow"
    return "green"


def _cell(value: Any) -> Text:
    if value is None:
        return Text("—", style="dim")
    if isinstance(value, bool):
        return Text(str(value).lower(), style="green" if value else "yellow")
    if isinstance(value, str):
        return Text(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return Text("\n".join(value) if value else "[]")
    return Text(json.dumps(value, ensure_ascii=False, indent=1))
