"""The command-line door: argument grammar, envelopes, rendering and the exit-status mapping."""
