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
    console.print(Panel(body, title="error", title_align="left", border_style="red"))


def render_markdown(markdown: str) -> None:
    Console().print(Markdown(markdown))


def _tone(data: dict[str, Any]) -> str:
    if data.get("stored") is False:
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
