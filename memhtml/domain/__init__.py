"""Domain: pure computations over memories (standard library only)."""
