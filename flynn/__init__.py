"""Flynn: a personal assistant daemon that remembers one person across channels and restarts."""

__version__ = "0.1.0"
