"""`python -m memhtml` runs the CLI."""

from memhtml.cli.entry import main

main()
