"""What the two doors share above the operations: the command table and how a call's arguments become
an operation's request.

The CLI (`memhtml.cli`) and the MCP server (`memhtml.mcp`) are two spellings of one surface. The table
here says what each command takes (names, types, ranges, defaults) and what it is (whether it writes
memories, whether it changes the store); `requests` turns arguments into the request value an operation
takes, with the table's defaults, so the two doors cannot build different requests for the same call.
Nothing here opens a store: importing the table costs a command its parse only.
"""
