"""The PostgreSQL backend: the stores of ``flynn.memory`` behind the same Protocols, on a server
(docs/postgresql.md). Only the composition root may choose it; nothing above the stores knows."""
