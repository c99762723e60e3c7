"""Memory: namespaced documents, working memory, facts, message history and costs (SQLite)."""
