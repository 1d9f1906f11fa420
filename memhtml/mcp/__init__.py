"""The MCP door: the same operations as the CLI, served over stdio with the official `mcp` SDK.

`server` runs the stdio server, `tools` is the tool table (each tool maps its arguments onto the
operation its CLI command calls), `params` checks argument types and values with the command table's
rules, `answers` turns results and typed failures into tool results, `resources` serves the
`memhtml://` resource templates.
"""
