"""Configuration: one pydantic model per component, from a YAML file and ``FLYNN_*`` variables.

Precedence, highest first: environment (``FLYNN_<SECTION>__<KEY>``), the YAML file, the defaults
embedded here. Unknown keys are errors everywhere, the environment's too: a ``FLYNN_X__...``
variable whose ``X`` is no section is refused by name (``FLYNN_CONFIG``, which names the file, is
not a setting). ``load_settings`` turns every validation problem into a ``ConfigProblem`` naming its
dotted key path (or the variable at fault), so the CLI can print them and exit 2.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    IPvAnyNetwork,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from flynn.errors import ConfigError, ConfigProblem

EmbeddingModel = Literal["auto", "minilm-int8", "minilm", "wordllama"]
"""``memory.embeddings_model`` (``flynn.recall.embeddings`` says what each is)."""

ENV_PREFIX = "FLYNN_"
NON_SETTING_VARIABLES = frozenset({"FLYNN_CONFIG"})
"""``FLYNN_`` variables that are not settings (``FLYNN_CONFIG`` names the file, read by the CLI)."""

ProviderName = Literal["anthropic", "openai", "offline"]
ProviderChoice = Literal["auto", "anthropic", "openai", "offline"]
TaskName = Literal[
    "compaction", "extraction", "distill", "distill_mid", "distill_long", "synthesis"
]
VisionChoice = Literal["auto", "on", "off"]
"""``llm.vision``: whether the chat model is shown pictures (``auto``: Anthropic and OpenAI
models are, the offline provider is not)."""
SynthesisMode = Literal["off", "model"]
"""``memory.synthesis``: ``model`` condenses recalled memory (``flynn.recall.synthesis``)."""
AccountId = Annotated[str, BeforeValidator(lambda value: str(value))]
"""A channel account id; YAML may spell Telegram and Discord ids as numbers."""


def _switch_word(value: object) -> object:
    """YAML 1.1 reads a bare ``off`` as false and ``on`` as true: take them as meant."""
    if isinstance(value, bool):
        return "model" if value else "off"
    return value


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class ProviderSettings(_Section):
    """One concrete backend: used for fallbacks and per-task overrides."""

    provider: ProviderName
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None


class TaskSettings(_Section):
    """Per-task override; unset fields inherit from ``llm``."""

    provider: ProviderName | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    max_output_tokens: int | None = Field(default=None, ge=16, le=200_000)


# Strict: a number, not "3" or true (which pydantic would otherwise read as 1.0).
UsdPerMillion = Annotated[float, Field(ge=0, le=10_000, allow_inf_nan=False, strict=True)]


class ModelPrice(_Section):
    """What one model costs, in US dollars per million tokens (``flynn.providers.prices``)."""

    input: UsdPerMillion
    output: UsdPerMillion


class LlmSettings(_Section):
    provider: ProviderChoice = "auto"
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    context_window: int = Field(default=200_000, ge=1024, le=10_000_000)
    max_output_tokens: int = Field(default=2048, ge=16, le=200_000)
    timeout_seconds: float = Field(default=60, gt=0, le=3600)
    stream_idle_seconds: float = Field(default=30, gt=0, le=3600)
    max_retries: int = Field(default=3, ge=0, le=10)
    turn_timeout_seconds: float = Field(default=120, gt=0, le=3600)
    """The longest a turn waits for the model in all: every call, retry and fallback."""
    stream: bool = True
    fallbacks: list[ProviderSettings] = Field(default_factory=list)
    tasks: dict[TaskName, TaskSettings] = Field(default_factory=dict)
    prices: dict[Annotated[str, Field(min_length=1)], ModelPrice] = Field(default_factory=dict)
    """Added to (or overriding) the built-in prices; a name prices every model it begins."""
    vision: VisionChoice = "auto"
    """Whether pictures sent to Flynn are shown to the chat model; ``off`` for a text-only
    model (an OpenAI-compatible server that refuses images)."""

    @field_validator("vision", mode="before")
    @classmethod
    def _vision_word(cls, value: object) -> object:
        # YAML 1.1 reads a bare on/off as a boolean.
        return ("on" if value else "off") if isinstance(value, bool) else value


class MemorySettings(_Section):
    # A personal assistant has an owner: one memory across channels by default.
    user_namespace: str | None = Field(default="user", pattern=r"^[A-Za-z0-9_.-]+$", max_length=64)
    working_memory_ttl_days: int = Field(default=14, ge=1, le=365)
    working_memory_max_tokens: int = Field(default=1000, ge=100, le=4000)
    profile_max_tokens: int = Field(default=400, ge=50, le=4000)
    proactive_session_greeting: bool = False
    auto_extract: bool = True
    extraction_threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    extract_every_turns: int = Field(default=4, ge=0, le=1000)
    retrieval_threshold: float = Field(default=0.3, ge=0.0, le=1.0)
    recall_max_tokens: int = Field(default=1500, ge=0, le=20_000)
    recall_depth: Literal["adaptive", "full"] = "adaptive"
    # On by default; ``off`` (YAML 1.1 reads it as false) or ``false`` turns it off.
    embeddings: bool = True
    embeddings_model: EmbeddingModel = "auto"
    synthesis: Annotated[SynthesisMode, BeforeValidator(_switch_word)] = "off"
    synthesis_timeout_seconds: float = Field(default=3, gt=0, le=60)

    @field_validator("user_namespace")
    @classmethod
    def _not_reserved(cls, value: str | None) -> str | None:
        # users/<name>, sessions/<key> and the team's documents live under these names.
        if value is not None and value.casefold() in RESERVED_NAMESPACES:
            names = ", ".join(sorted(RESERVED_NAMESPACES))
            raise ValueError(f"{value!r} is reserved ({names} are); choose another name")
        return value


RESERVED_NAMESPACES = frozenset({"users", "sessions", "team", "persona"})


class SessionSettings(_Section):
    idle_restart_hours: float = Field(default=6, gt=0, le=24 * 30)


class CompactionSettings(_Section):
    reserve_tokens: int = Field(default=16_384, ge=0)
    keep_recent_tokens: int = Field(default=20_000, ge=0)
    timeout_seconds: float = Field(default=20, gt=0, le=600)


class PersonaSettings(_Section):
    name: str = Field(default="flynn", pattern=r"^[A-Za-z0-9_.-]+$", max_length=64)
    tier: int = Field(default=2, ge=1, le=4)
    max_tier: int = Field(default=4, ge=1, le=4)
    """The highest tier a session may choose with ``/tier N``; ``tier`` must be within it."""
    inject_datetime: bool = True
    timezone: str | None = None

    @model_validator(mode="after")
    def _tier_within_max(self) -> PersonaSettings:
        if self.tier > self.max_tier:
            raise ValueError(f"tier ({self.tier}) must be at most max_tier ({self.max_tier})")
        return self

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA timezone {value!r}") from None
        return value


class UserAccounts(_Section):
    """The accounts one person uses; ids are kept as strings whatever the YAML type.

    ``notify`` is where messages Flynn sends on its own (reminders) reach them, whichever chat
    they were set in: the first account listed for that channel."""

    telegram: list[AccountId] = Field(default_factory=list)
    discord: list[AccountId] = Field(default_factory=list)
    gateway: list[AccountId] = Field(default_factory=list)
    cli: list[AccountId] = Field(default_factory=list)
    notify: Literal["telegram", "discord", "gateway"] | None = None

    @model_validator(mode="after")
    def _notify_has_an_account(self) -> UserAccounts:
        if self.notify is not None and not getattr(self, self.notify):
            raise ValueError(f"notify: {self.notify} needs a {self.notify} account listed")
        return self


McpServerName = Annotated[str, Field(pattern=r"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$", max_length=32)]
"""A server's name in ``tools.mcp_servers``: its tools are ``<server>__<tool>``, so no ``__``."""


class McpServerSettings(_Section):
    """One MCP server (``flynn.tools.mcp``): a stdio ``command`` or a streamable HTTP ``url``."""

    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    """The stdio server's working directory (default: the daemon's)."""
    url: str | None = Field(default=None, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=20, gt=0, le=600)
    """The longest one call may take; past it, that call's result is an error."""
    tools: list[str] | None = None
    """Which of its tools to offer (default: all)."""
    read_only: list[str] = Field(default_factory=list)
    """Its tools that change nothing: the only ones offered off the record."""
    people: list[str] | None = None
    """Who may use it (``users:`` names, or the owner's ``memory.user_namespace``); default: the
    owner only."""
    keepalive_seconds: float = Field(default=30, gt=0, le=3600)
    """How often a quiet connection is pinged, so a dropped session is noticed and reopened."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (stdio) or url (streamable HTTP), not both")
        if self.url is not None and (self.args or self.env or self.cwd is not None):
            raise ValueError("args, env and cwd are for a stdio command, not a url")
        if self.command is not None and self.headers:
            raise ValueError("headers are for a url, not a stdio command")
        return self


class ToolsSettings(_Section):
    enabled: bool = True
    max_steps: int = Field(default=8, ge=1, le=50)
    timeout_seconds: float = Field(default=20, gt=0, le=600)
    result_max_chars: int = Field(default=4000, ge=200, le=100_000)
    mcp_servers: dict[McpServerName, McpServerSettings] = Field(default_factory=dict)
    """Tools from MCP servers, offered as ``<server>__<tool>`` (``flynn.tools.mcp``)."""


class FilesSettings(_Section):
    """Pictures and files people send, kept in ``data_dir/<namespace>/files/``."""

    max_file_bytes: int = Field(default=10 * 1024 * 1024, ge=1024, le=100 * 1024 * 1024)
    max_files: int = Field(default=200, ge=1, le=100_000)
    """Per person."""
    max_total_bytes: int = Field(default=200 * 1024 * 1024, ge=1024, le=100 * 1024**3)
    """Per person, all their files together."""
    text_max_chars: int = Field(default=20_000, ge=200, le=1_000_000)
    """Of a text file: how much goes to the model with the message, and what ``file_read``
    returns at most in one call."""


def _cron_or_off(value: object) -> object:
    """A distillation schedule: a cron expression, or null / ``off`` (YAML's false) for none."""
    if value is False or (isinstance(value, str) and value.strip().casefold() in ("off", "")):
        return None
    return value


CronSchedule = Annotated[str | None, BeforeValidator(_cron_or_off)]


class DistillSettings(_Section):
    """When each person's MEMORY_SHORT/MID/LONG.md are rewritten, in their time,
    and how long each may grow."""

    enabled: bool = True
    """The one switch: off, no distillation is scheduled (jobs made before are cancelled at
    start); ``flynn distill`` still runs a tier by hand."""
    short: CronSchedule = "0 3 * * *"
    mid: CronSchedule = "30 3 * * 0"
    long: CronSchedule = "0 4 1 * *"
    notify: bool = False
    short_max_tokens: int = Field(default=3000, ge=200, le=50_000)
    mid_max_tokens: int = Field(default=2000, ge=200, le=50_000)
    long_max_tokens: int = Field(default=2000, ge=200, le=50_000)
    timeout_seconds: float = Field(default=120, gt=0, le=3600)

    @field_validator("short", "mid", "long")
    @classmethod
    def _readable_cron(cls, value: str | None) -> str | None:
        if value is not None:
            from flynn.cron import Cron  # APScheduler, only when a schedule is read

            Cron(value, "UTC")  # ValueError names the expression
        return value

    def budget(self, tier: str) -> int:
        """The token budget of ``tier`` (short, mid or long)."""
        budget: int = getattr(self, f"{tier}_max_tokens")
        return budget


class ScheduleSettings(_Section):
    """How many reminders people may hold, and how many pushes may wait for them, for how long
    (``flynn.schedule.backlog`` says what happens at each limit)."""

    max_reminders_per_person: int = Field(default=200, ge=1, le=100_000)
    max_reminders_total: int = Field(default=2000, ge=1, le=1_000_000)
    """Over everyone: every unlisted gateway client id is a person of its own."""
    max_pending_per_person: int = Field(default=50, ge=1, le=100_000)
    max_pending_total: int = Field(default=1000, ge=1, le=1_000_000)
    expire_after_days: float = Field(default=7, gt=0, le=3650, allow_inf_nan=False)

    @model_validator(mode="after")
    def _totals_hold_a_person(self) -> ScheduleSettings:
        if self.max_reminders_total < self.max_reminders_per_person:
            raise ValueError(
                f"max_reminders_total ({self.max_reminders_total}) must be at least "
                f"max_reminders_per_person ({self.max_reminders_per_person})"
            )
        if self.max_pending_total < self.max_pending_per_person:
            raise ValueError(
                f"max_pending_total ({self.max_pending_total}) must be at least "
                f"max_pending_per_person ({self.max_pending_per_person})"
            )
        return self


GATEWAY_TOKEN_MIN_CHARS = 16
"""The shortest gateway token accepted; the generated one has 43 characters."""


def gateway_token_problem(token: str) -> str | None:
    """Why ``token`` cannot be a gateway token (too short, or holding whitespace, which no
    client would send back intact), or None when it can. Never quotes the token."""
    if any(character.isspace() for character in token):
        return "must not contain spaces or other whitespace"
    if len(token) < GATEWAY_TOKEN_MIN_CHARS:
        return f"must be at least {GATEWAY_TOKEN_MIN_CHARS} characters (it is {len(token)})"
    return None


class GatewaySettings(_Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    token: SecretStr | None = None
    max_message_bytes: int = Field(default=65_536, ge=1024, le=16 * 1024 * 1024)
    trusted_proxies: list[IPvAnyNetwork] = Field(default_factory=list)
    """Reverse proxies (addresses or networks) whose ``X-Forwarded-For`` names the client."""

    @field_validator("token")
    @classmethod
    def _real_token(cls, value: SecretStr | None) -> SecretStr | None:
        problem = None if value is None else gateway_token_problem(value.get_secret_value())
        if problem is not None:
            # Leaving it out is the easy way to a good one.
            raise ValueError(f"{problem}; leave it out to have one generated into the data dir")
        return value


TELEGRAM_WEBHOOK_PORTS = (443, 80, 88, 8443)
"""The ports Telegram posts webhooks to (its ``setWebhook`` refuses any other)."""
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
"""What Telegram accepts as ``secret_token``."""


def listen_address(value: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8443`` for IPv6) as a host and a port; port 0 is any free one.
    Raises ``ValueError`` saying what is wrong."""
    host, colon, port = value.strip().rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"must be host:port, like 127.0.0.1:8443 (not {value!r})")
    if host.startswith("["):
        if not host.endswith("]"):
            raise ValueError(f"an IPv6 address goes in brackets, like [::1]:8443 (not {value!r})")
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"an IPv6 address goes in brackets, like [::1]:8443 (not {value!r})")
    return host, int(port)


class TelegramSettings(_Section):
    enabled: bool = False
    token: SecretStr | None = None
    base_url: str | None = None
    allowed_users: list[AccountId] = Field(default_factory=list)
    require_mention_in_groups: bool = True
    webhook_url: str | None = None
    """Webhook mode: the public https URL Telegram posts updates to (a proxy in front forwards
    its path to ``webhook_listen``); unset, the channel polls."""
    webhook_secret: SecretStr | None = None
    """What Telegram sends in ``X-Telegram-Bot-Api-Secret-Token``; unset, one is derived from
    the bot token, the same on every worker."""
    webhook_listen: str = "127.0.0.1:8443"
    """Where the webhook listener binds (``host:port``), behind the TLS proxy."""

    @field_validator("webhook_url")
    @classmethod
    def _public_https(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            url = urlsplit(value.strip())
            port = url.port
        except ValueError:
            raise ValueError("must be a URL, like https://bot.example.com/telegram") from None
        if url.scheme != "https" or not url.hostname:
            raise ValueError("must be an https URL (Telegram posts only over TLS)")
        if url.username is not None or url.password is not None or url.fragment:
            raise ValueError("must not hold a user name, password or #fragment")
        if port is not None and port not in TELEGRAM_WEBHOOK_PORTS:
            ports = ", ".join(str(p) for p in TELEGRAM_WEBHOOK_PORTS)
            raise ValueError(f"Telegram posts only to ports {ports} (not {port})")
        return url.geturl()

    @field_validator("webhook_secret")
    @classmethod
    def _telegram_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _WEBHOOK_SECRET.fullmatch(value.get_secret_value()):
            # Never quotes it.
            raise ValueError("must be 1 to 256 of A-Z, a-z, 0-9, _ and - (Telegram's rule)")
        return value

    @field_validator("webhook_listen")
    @classmethod
    def _host_and_port(cls, value: str) -> str:
        listen_address(value)
        return value.strip()

    @property
    def webhook_address(self) -> tuple[str, int]:
        """``webhook_listen`` as a host and a port."""
        return listen_address(self.webhook_listen)


class DiscordSettings(_Section):
    enabled: bool = False
    token: SecretStr | None = None
    allowed_users: list[AccountId] = Field(default_factory=list)
    require_mention_in_guilds: bool = True


class ChannelsSettings(_Section):
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)


STORAGE_SCHEMES = ("postgresql", "postgres")
"""The URL schemes ``storage.url`` takes (libpq's two spellings)."""


class StorageSettings(_Section):
    url: SecretStr | None = None
    """``postgresql://user:password@host/db`` (or ``?host=/socket/dir``): keep everything in
    that PostgreSQL database, which several workers may share; unset, SQLite in ``data_dir``.
    A secret: it usually carries the password."""

    @field_validator("url", mode="before")
    @classmethod
    def _database_url(cls, value: object) -> object:
        # The value is never repeated in the message: it may hold a password.
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if not isinstance(text, str):
            return value
        if not text.strip():
            raise ValueError("must not be empty (leave it out to keep SQLite in data_dir)")
        scheme, separator, _ = text.strip().partition("://")
        if not separator or scheme.lower() not in STORAGE_SCHEMES:
            raise ValueError(
                "must be a PostgreSQL URL, postgresql://user:password@host/database (or "
                "postgres://); leave it out to keep SQLite in data_dir"
            )
        return text.strip()


class LoggingSettings(_Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "console", "json"] = "auto"


class Settings(BaseSettings):
    """The whole configuration. Build it with ``load_settings``, not directly."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
        case_sensitive=False,
    )

    data_dir: Path = Path("~/.flynn")
    llm: LlmSettings = Field(default_factory=LlmSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    persona: PersonaSettings = Field(default_factory=PersonaSettings)
    session: SessionSettings = Field(default_factory=SessionSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    files: FilesSettings = Field(default_factory=FilesSettings)
    distill: DistillSettings = Field(default_factory=DistillSettings)
    schedule: ScheduleSettings = Field(default_factory=ScheduleSettings)
    users: dict[str, UserAccounts] = Field(default_factory=dict)
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)

    @field_validator("data_dir", mode="before")
    @classmethod
    def _not_empty(cls, value: object) -> object:
        # Path("") is the current directory: a database would land wherever flynn was started.
        if isinstance(value, str) and not value.strip():
            raise ValueError("must not be empty (it would mean the current directory)")
        return value

    @field_validator("data_dir")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("users")
    @classmethod
    def _user_names(cls, value: dict[str, UserAccounts]) -> dict[str, UserAccounts]:
        seen: dict[tuple[str, str], str] = {}
        for name, accounts in value.items():
            if not name.replace("_", "").replace("-", "").isalnum():
                raise ValueError(f"user name {name!r} may hold only letters, digits, - and _")
            for channel in ("telegram", "discord", "gateway", "cli"):
                for external_id in getattr(accounts, channel):
                    other = seen.setdefault((channel, external_id), name)
                    if other != name:
                        raise ValueError(
                            f"{channel} account {external_id} is listed for both {other} and {name}"
                        )
        return value

    @model_validator(mode="after")
    def _mcp_people_known(self) -> Settings:
        owner = self.memory.user_namespace
        for name, server in self.tools.mcp_servers.items():
            for person in server.people or ():
                if person not in self.users and person != owner:
                    raise ValueError(
                        f"tools.mcp_servers.{name}.people: {person!r} is neither a person of "
                        "users: nor the owner (memory.user_namespace)"
                    )
        return self

    @model_validator(mode="after")
    def _budgets_fit_window(self) -> Settings:
        usable = self.llm.context_window - self.compaction.reserve_tokens
        if usable < 512:
            raise ValueError(
                "compaction.reserve_tokens must leave at least 512 tokens of llm.context_window "
                f"(context_window={self.llm.context_window}, "
                f"reserve_tokens={self.compaction.reserve_tokens})"
            )
        if self.compaction.keep_recent_tokens >= usable:
            # Keeping this much verbatim would leave compaction nothing to summarise; clamp
            # rather than refuse, since the defaults are sized for a 200k window.
            self.compaction.keep_recent_tokens = usable // 2
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The YAML file arrives as init kwargs; the environment must win over it.
        return (env_settings, init_settings)


def parse_yaml(text: str, source: str | None = None) -> dict[str, Any]:
    """The YAML document as a mapping; an empty file is an empty mapping."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([_yaml_problem(exc, text)], source) from exc
    except RecursionError:
        # PyYAML's composer recurses once per level; no config needs more than a handful.
        problem = ConfigProblem("file", "not valid YAML (nested too deeply)")
        raise ConfigError([problem], source) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError([ConfigProblem("(top level)", "must be a mapping of keys")], source)
    return data


def _yaml_problem(exc: yaml.YAMLError, text: str) -> ConfigProblem:
    """PyYAML's error in one line, at the line and column where it stopped (its marks count
    from 0; editors count from 1), with where the construct it was reading began. PyYAML's own
    text repeats the offending lines with a caret and calls the file ``<unicode string>``."""
    if isinstance(exc, yaml.reader.ReaderError):
        # A control character: PyYAML gives only its offset in the text.
        before = text[: exc.position]
        line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
        problem = f"not valid YAML: character U+{exc.character:04X} is not allowed"
        return ConfigProblem(f"line {line}, column {column}", problem)
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return ConfigProblem("file", f"not valid YAML ({' '.join(str(exc).split())})")
    mark = exc.problem_mark
    reason = exc.problem or "cannot be read"
    if exc.context:
        started = exc.context_mark
        at = f" at line {started.line + 1}, column {started.column + 1}" if started else ""
        reason += f" ({exc.context}{at})"
    where = f"line {mark.line + 1}, column {mark.column + 1}"
    return ConfigProblem(where, "not valid YAML: " + " ".join(reason.split()))


def load_settings(
    data: Mapping[str, Any] | None = None,
    source: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Validate ``data`` (the parsed YAML) merged under ``FLYNN_*`` variables.

    ``env`` is the environment the variables come from (the process's when ``None``; the CLI
    passes ``os.environ``). Raises ``ConfigError`` listing every problem with its key path, or
    naming the variable at fault (unknown, or not parsable as JSON).
    """
    env = os.environ if env is None else env
    unknown = unknown_variables(env)
    if unknown:
        raise ConfigError(unknown, source)
    try:
        return Settings(**dict(data or {}))
    except ValidationError as exc:
        raise ConfigError(_problems(exc, env), source) from None
    except SettingsError as exc:
        raise ConfigError([_unparsable_variable(exc, env)], source) from None
    except RecursionError:
        problem = ConfigProblem("(top level)", "nested too deeply")
        raise ConfigError([problem], source) from None


def unknown_variables(env: Mapping[str, str]) -> list[ConfigProblem]:
    """One problem naming every ``FLYNN_<X>__...`` variable whose ``X`` is no top-level key (none
    when all are known): shaped as a setting, it would otherwise be ignored in silence. Then one
    for each variable that misspells a key's path with one underscore (``FLYNN_STORAGE_URL``).
    Case-insensitive, as settings are."""
    sections = set(Settings.model_fields)
    unknown = []
    for name in sorted(env):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in NON_SETTING_VARIABLES:
            continue
        head, nested, _ = upper.removeprefix(ENV_PREFIX).partition("__")
        if nested and head.lower() not in sections:
            unknown.append(name)
    if not unknown:
        return [_misspelt(name, path) for name in sorted(env) if (path := _one_underscore(name))]
    known = ", ".join(sorted(sections))
    return [ConfigProblem(", ".join(unknown), f"unknown setting (config sections: {known})")]


def _one_underscore(name: str) -> list[str] | None:
    """The key path a ``FLYNN_`` variable meant when it joins a section and its key with one
    underscore (``FLYNN_STORAGE_URL``) or drops one from a top-level key (``FLYNN_DATADIR``):
    such a variable is no setting, and ignoring it would run on SQLite while its writer thinks
    otherwise. ``None`` for a setting, ``FLYNN_CONFIG`` and every other name: variables of the
    same prefix that look like no key (``FLYNN_BENCH_CACHE``) are left alone."""
    upper = name.upper()
    if not upper.startswith(ENV_PREFIX) or upper in NON_SETTING_VARIABLES or "__" in upper:
        return None
    rest = upper.removeprefix(ENV_PREFIX).lower()
    if rest in Settings.model_fields:
        return None
    for field in Settings.model_fields:
        if rest.replace("_", "") == field.replace("_", ""):
            return [field]
    return _path_in(Settings, rest.split("_"))


def _path_in(model: type[BaseModel], words: list[str]) -> list[str] | None:
    """Fields of ``model`` (and of the models below them) that ``words`` spell out, each field's
    own underscores kept: ``["storage", "url"]`` for ``storage_url``; two keys at least."""
    for end in range(1, len(words)):
        field = "_".join(words[:end])
        info = model.model_fields.get(field)
        if info is None:
            continue
        tail = words[end:]
        inner = info.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            key = "_".join(tail)
            if key in inner.model_fields:
                return [field, key]
            deeper = _path_in(inner, tail)
            if deeper is not None:
                return [field, *deeper]
    return None


def _misspelt(name: str, path: list[str]) -> ConfigProblem:
    meant = ENV_PREFIX + "__".join(part.upper() for part in path)
    why = " (a section and its keys are joined by two underscores)" if len(path) > 1 else ""
    return ConfigProblem(name, f"not a setting: did you mean {meant}{why}?")


_FIELD_IN_SETTINGS_ERROR = re.compile(r'field "([^"]+)"')


def _unparsable_variable(exc: SettingsError, env: Mapping[str, str]) -> ConfigProblem:
    """pydantic-settings parses a section (``FLYNN_LLM``) or a list as JSON, and says only which
    top-level field failed: name the variables that set it."""
    match = _FIELD_IN_SETTINGS_ERROR.search(str(exc))
    field = match.group(1) if match else "(environment)"
    prefix = f"{ENV_PREFIX}{field}".upper()
    names = sorted(
        name for name in env if name.upper() == prefix or name.upper().startswith(prefix + "__")
    )
    cause = f": {exc.__cause__}" if exc.__cause__ is not None else ""
    return ConfigProblem(
        " or ".join(names) or field,
        f"cannot be parsed (sections and lists set in the environment are JSON{cause})",
    )


RETIRED = {
    "memory.recall_ranker": "no longer a setting: recall always uses the hybrid ranker "
    "(`flynn bench recall --ranker` still compares bm25 and baseline); delete the line",
}
"""Keys that were settings once, refused with what to do instead of as unknown."""


def _problems(exc: ValidationError, env: Mapping[str, str]) -> list[ConfigProblem]:
    """A problem per error, its key path; a key a ``FLYNN_*`` variable set is named by the
    variable too, since the file may not hold it at all."""
    by_variable = {name.upper(): name for name in env if name.upper().startswith(ENV_PREFIX)}
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        path = ".".join(str(part) for part in error["loc"]) or "(top level)"
        parts = [str(part) for part in error["loc"]]
        variable = by_variable.get((ENV_PREFIX + "__".join(parts)).upper()) if parts else None
        key = path if variable is None else f"{variable} ({path})"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = RETIRED.get(path, "unknown key")
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        problems.append(ConfigProblem(key, message))
    return problems
