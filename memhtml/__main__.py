"""`python -m memhtml` runs the CLI."""

# Guarded: worker processes of a parallel rebuild import the main module and must not run the CLI.
if __name__ == "__main__":
    try:
        from memhtml.launch import main
    except KeyboardInterrupt:  # while the launcher itself loaded: it has no import of its own to cut
        from memhtml.launch import answer_interrupted

        answer_interrupted()
    main()
