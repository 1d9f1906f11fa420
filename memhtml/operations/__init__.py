"""Operations: the use cases (init, write, read, status, ...) that wire configuration and services."""
