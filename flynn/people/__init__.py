"""A person's own things outside the memory database: their folder of files and their task list."""
