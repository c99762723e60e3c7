"""Each vendor's default model and endpoint, kept apart from the SDK modules so that choosing a
provider does not import an SDK (about a second of start-up for both)."""

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_OPENAI_MODEL = "gpt-5.5"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
