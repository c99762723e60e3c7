"""Scheduled work and unprompted messages: durable jobs that fire once, and their delivery."""
