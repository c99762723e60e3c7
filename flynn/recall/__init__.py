"""Recall: what to bring back from memory for a message (query analysis, ranking, BM25, related
words, embeddings, packing, weights). Reads memory through its Protocols; never writes it."""
