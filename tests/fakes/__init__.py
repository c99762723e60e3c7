"""Test doubles shared across the suite: local fake model servers the real SDKs talk to (fixtures
``fake_openai`` and ``fake_anthropic`` in tests/conftest.py). Script them with ``server.enqueue()``;
with nothing queued they echo the last user message."""

from .fake_anthropic import FakeAnthropic
from .fake_openai import FakeOpenAI
from .http_server import FakeModelServer, RecordedRequest
from .script import Fail, FailKind, Hang, Malformed, Reply, Step

__all__ = [
    "Fail",
    "FailKind",
    "FakeAnthropic",
    "FakeModelServer",
    "FakeOpenAI",
    "Hang",
    "Malformed",
    "RecordedRequest",
    "Reply",
    "Step",
]
