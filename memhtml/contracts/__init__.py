"""Contracts: vocabularies, typed errors and path algebra shared by every layer (standard library only)."""
