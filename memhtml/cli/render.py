"""Terminal rendering with rich: the same result a script gets as JSON, laid out for a person."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text


def render_success(response_type: str, data: dict[str, Any]) -> None:
    console = Console()
    if response_type == "validate.report":
        console.print(Panel(_validation(data), title=response_type, title_align="left", border_style="green"))
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


def _validation(data: dict[str, Any]) -> Text:
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


def _doctor_findings(data: dict[str, Any]) -> dict[str, Any]:
    """A person reads a doctor report for what is wrong: empty findings and false flags are left out."""
    return {
        key: value
        for key, value in data.items()
        if key in _DOCTOR_ALWAYS
        or (value not in ([], {}, None, False, 0) and key != "indexDrift")
        or (key == "indexDrift" and isinstance(value, dict) and any(value.values()))
    }


def _tone(data: dict[str, Any]) -> str:
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
