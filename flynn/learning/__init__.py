"""Learning: what to keep from a conversation (rule and model extraction, reconciliation, graph
learning, what is never learnt). Writes memory through its Protocols."""
