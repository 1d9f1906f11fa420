"""`python -m memhtml` runs the CLI."""

from memhtml.launch import main

# Guarded: worker processes of a parallel rebuild import the main module and must not run the CLI.
if __name__ == "__main__":
    main()
