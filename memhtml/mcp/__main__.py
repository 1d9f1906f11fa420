"""`python -m memhtml.mcp --repo PATH` runs the stdio MCP server (the same as `memhtml-mcp`)."""

from memhtml.mcp.server import main

# Guarded: worker processes of a parallel batch re-import the main module and must not start a server.
if __name__ == "__main__":
    main()
