// flynn web chat: gateway protocol 2 (docs/gateway-protocol.md) over ./ws, no dependencies.
"use strict";

(() => {
  // The chat commands of flynn/commands.py, sent as command frames; tests/sessions/test_commands.py
  // keeps the two lists in step.
  const COMMANDS = new Set([
    "new", "reset", "status", "compact", "otr", "forget", "search", "memory", "reminders", "tasks",
    "tier", "help",
  ]);
  const PUSH_LABELS = { reminder: "Reminder", distill: "Memory", notice: "Notice" };
  const HISTORY_LIMIT = 50;
  // Closer to the bottom than this (px) counts as reading the end: new text is followed.
  const FOLLOW_SLACK = 32;
  // What a person is told for an error frame. The server's own message is a sentence meant for
  // people and goes first; these stand in when it has none, and for a refused token.
  const ERRORS = {
    too_large: "That message is too long.",
    rate_limited: "Flynn is taking messages more slowly than they come; wait a moment and try again.",
    llm_unavailable: "Flynn's model is not answering right now; try again in a moment.",
    unauthorized: window.flynnConnection.TOKEN_REFUSED,
    bad_request: "Flynn could not make sense of that request.",
    internal: "Something went wrong on Flynn's side; try again.",
  };

  const $ = (id) => document.getElementById(id);
  const log = $("log");
  const input = $("input");
  const composer = $("composer");
  const attach = $("attach");
  // Files chosen with the attach button, sent with the next message as {name, type, data}.
  let attached = [];
  const jump = $("jump");

  const bubbles = new Map(); // frame id -> {el, text, user, turn} of a reply still being written
  const turns = new WeakMap(); // bubble -> {role, text} of a message the server keeps (history)
  const outgoing = []; // [frame, user bubble] typed while offline; sent after the next ready
  const pushes = new Set(); // push ids already shown: a redelivered push appears once
  const answered = new Set(); // reply and error ids already shown: a redelivered one appears once
  const unasked = new Set(); // replies that came before the first history, asked for by no bubble
  let ready = false; // the gateway said ready on this connection: frames may go
  let sequence = 0;
  let following = true; // the view sticks to the newest text until the person scrolls up
  let historyShown = false; // this page load has shown the conversation so far

  // Unique across reloads too: the server deduplicates on client_id + id.
  function nextId(prefix = "c") {
    sequence += 1;
    return `${prefix}${Date.now().toString(36)}-${sequence}`;
  }

  // Text as it streams, and what people typed: only ever through textContent; ``` fences
  // become <pre>.
  function render(el, text) {
    el.classList.remove("md");
    el.replaceChildren();
    const parts = text.split("```");
    parts.forEach((part, index) => {
      if (index % 2 === 1) {
        const pre = document.createElement("pre");
        const code = document.createElement("code");
        code.textContent = part.replace(/^[^\n]*\n/, "").replace(/\n$/, "");
        pre.append(code);
        el.append(pre);
        return;
      }
      // A <pre> is a block already: drop the line breaks that only surround the fences.
      if (index > 0) part = part.replace(/^\n/, "");
      if (index < parts.length - 1) part = part.replace(/\n$/, "");
      if (part) el.append(document.createTextNode(part));
    });
  }

  // A finished reply: the server renders its Markdown (flynn/channels/gateway/markdown.py) with
  // raw HTML off and only http(s)/mailto links, so its HTML holds no markup of the model's. The
  // page's CSP (no inline script, no javascript: URLs) is the second line of defence.
  function renderReply(el, text, html) {
    if (typeof html !== "string") {
      render(el, text);
      return;
    }
    el.innerHTML = html;
    el.classList.add("md");
  }

  // Scrolling. The view follows new text while the person is at the end; scrolling up to read
  // stops that (and offers a button back), scrolling to the end again resumes it.
  function distanceFromEnd() {
    return log.scrollHeight - log.scrollTop - log.clientHeight;
  }

  function settle() {
    if (following) log.scrollTop = log.scrollHeight;
    jump.hidden = following || distanceFromEnd() <= FOLLOW_SLACK;
  }

  function follow() {
    following = true;
    settle();
  }

  log.addEventListener(
    "scroll",
    () => {
      following = distanceFromEnd() <= FOLLOW_SLACK;
      if (following) jump.hidden = true;
    },
    { passive: true },
  );
  // The keyboard opening on a phone, a rotation, the composer growing: keep the end in view.
  new ResizeObserver(settle).observe(log);
  jump.addEventListener("click", follow);

  function bubble(kind, text, options = {}) {
    const el = document.createElement("div");
    el.className = `msg ${kind}`;
    if (options.html !== undefined) renderReply(el, text, options.html);
    else render(el, text);
    if (options.at) {
      const at = new Date(options.at);
      if (!Number.isNaN(at.getTime())) el.title = at.toLocaleString();
    }
    return el;
  }

  function addBubble(kind, text, options = {}) {
    const el = bubble(kind, text, options);
    log.append(el);
    if (options.follow) follow();
    else settle();
    return el;
  }

  function markTurn(el, role, text) {
    turns.set(el, { role, text });
  }

  // A push answers nothing: its own bubble at the end, never a pending reply's. The log is
  // aria-live, so screen readers hear the label, then the text.
  function showPush(frame) {
    const el = pushBubble(frame);
    if (!el) return;
    log.append(el);
    settle();
  }

  // A push's bubble, or null when this page shows that push already (live, or in a history).
  function pushBubble(frame) {
    if (pushes.has(frame.id)) return null;
    pushes.add(frame.id);
    const kind = Object.hasOwn(PUSH_LABELS, frame.kind) ? frame.kind : "notice";
    const el = document.createElement("div");
    el.className = "msg push";
    el.dataset.kind = kind;
    const label = document.createElement("span");
    label.className = "push-label";
    label.textContent = PUSH_LABELS[kind];
    const body = document.createElement("div");
    render(body, String(frame.text ?? ""));
    el.append(label, body);
    return el;
  }

  function errorText(frame) {
    if (frame.code === "unauthorized") return ERRORS.unauthorized;
    const message = typeof frame.message === "string" ? frame.message.trim() : "";
    return message || ERRORS[frame.code] || ERRORS.internal;
  }

  function showError(frame) {
    if (frame.id !== undefined && answered.has(frame.id)) return;
    if (frame.id !== undefined) answered.add(frame.id);
    const entry = frame.id !== undefined ? bubbles.get(frame.id) : undefined;
    const text = errorText(frame);
    if (entry) {
      bubbles.delete(frame.id);
      // Refused by the gateway, the message was not kept; after a model failure it usually is.
      if (entry.user && (frame.code === "too_large" || frame.code === "bad_request")) {
        turns.delete(entry.user);
      }
      entry.el.className = "msg error";
      render(entry.el, text);
      settle();
      return;
    }
    if (frame.code === "unauthorized") return; // the token form says it (see closed)
    const last = log.lastElementChild;
    if (last?.classList.contains("error") && last.textContent === text) return; // a retry's
    addBubble("error", text);
  }

  // History. The server keeps the conversation (its user and assistant messages); the page
  // shows it after a reload and, after a reconnect, adds what it missed (another tab's turns).
  function turnBubbles() {
    return Array.from(log.children).filter((el) => turns.has(el));
  }

  function sameTurn(el, message) {
    const turn = turns.get(el);
    return turn !== undefined && turn.role === message.role && turn.text === message.text;
  }

  // The bubbles of a history's messages; a push in it (role "push") that this page shows
  // already is left out.
  function historyBubbles(messages) {
    return messages.map(historyBubble).filter((el) => el !== null);
  }

  function historyBubble(message) {
    if (message.role === "push") {
      const el = pushBubble(message);
      el?.classList.add("earlier");
      return el;
    }
    const role = message.role === "user" ? "user" : "assistant";
    const text = String(message.text ?? "");
    const options = { at: message.at };
    if (role === "assistant") options.html = message.html;
    const el = bubble(role, text, options);
    el.classList.add("earlier");
    markTurn(el, role, text);
    return el;
  }

  function showHistory(messages) {
    if (!Array.isArray(messages)) return;
    if (!historyShown) {
      // The first history of this page goes above everything here yet (messages typed while
      // connecting). Replies kept for this client while it was away came just before it and
      // are in it too: each is shown once, in its place.
      for (const el of unasked) {
        if (messages.some((message) => sameTurn(el, message))) el.remove();
      }
      log.prepend(...historyBubbles(messages));
      historyShown = true;
      unasked.clear();
      follow();
      return;
    }
    // After a reconnect: the newest message shown here that the server has too anchors the
    // two, and what the server has after it, this page missed (another tab's turns). With
    // nothing in common (all was forgotten, or the conversation moved on past the limit while
    // this page was away) the page stays as it is.
    const shown = turnBubbles();
    for (let p = shown.length - 1; p >= 0; p -= 1) {
      for (let m = messages.length - 1; m >= 0; m -= 1) {
        if (sameTurn(shown[p], messages[m])) {
          shown[p].after(...historyBubbles(messages.slice(m + 1)));
          settle();
          return;
        }
      }
    }
  }

  function send(frame, user) {
    connection.send(frame);
    // Sent as a message, it is kept by the server (commands are not).
    if (user && frame.type === "message") markTurn(user, "user", frame.text);
  }

  function onFrame(frame) {
    const entry = bubbles.get(frame.id);
    switch (frame.type) {
      case "ready":
        ready = true;
        // Asked before the queued messages go, so the answer is the conversation before them.
        connection.send({ type: "history", id: nextId("h"), limit: HISTORY_LIMIT });
        for (const [queued, user] of outgoing.splice(0)) send(queued, user);
        break;
      case "history":
        showHistory(frame.messages);
        break;
      case "delta":
        if (entry) {
          entry.text += frame.text;
          entry.el.classList.remove("pending");
          render(entry.el, entry.text);
          settle();
        } else {
          bubbles.set(frame.id, { el: addBubble("assistant", frame.text), text: frame.text });
        }
        break;
      case "reply": {
        connection.ack(frame.id);
        if (answered.has(frame.id)) break; // sent again after a reconnect: shown already
        answered.add(frame.id);
        bubbles.delete(frame.id);
        const text = String(frame.text ?? "");
        let el = entry?.el;
        if (el) {
          el.className = "msg assistant";
          renderReply(el, text, frame.html);
          settle();
        } else {
          el = addBubble("assistant", text, { html: frame.html });
        }
        // A reply to a message is kept; one nobody here asked for (kept for this client while
        // it was away, or another tab's) most likely answers a message too.
        if (!entry || entry.turn) markTurn(el, "assistant", text);
        if (!entry && !historyShown) unasked.add(el);
        break;
      }
      case "push":
        showPush(frame);
        connection.ack(frame.id);
        break;
      case "error":
        showError(frame);
        if (frame.id !== undefined) connection.ack(frame.id);
        break;
    }
  }

  const connection = window.flynnConnection.open({
    onFrame,
    onClosed: () => {
      ready = false;
    },
  });

  function submit(raw) {
    const text = raw.trim();
    const files = attached;
    if (!text && !files.length) return;
    attached = [];
    attach.value = "";
    const id = nextId();
    const command = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(text);
    // "id" goes before "text" so the server can name the frame even when refusing it unparsed.
    const frame =
      command && COMMANDS.has(command[1]) && !files.length
        ? { type: "command", id, name: command[1], ...(command[2] ? { arg: command[2] } : {}) }
        : { type: "message", id, text, ...(files.length ? { attachments: files } : {}) };
    const shown = files.map((file) => `[${file.name}]`).concat(text ? [text] : []).join(" ");
    const user = addBubble("user", shown, { follow: true });
    const pending = addBubble("assistant pending", "", { follow: true });
    bubbles.set(id, { el: pending, text: "", user, turn: frame.type === "message" });
    if (ready && connection.isOpen()) send(frame, user);
    else outgoing.push([frame, user]);
  }

  function autosize() {
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 160)}px`;
  }

  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(input.value);
    input.value = "";
    autosize();
    input.focus();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  input.addEventListener("input", autosize);
  attach.addEventListener("change", async () => {
    const read = (file) =>
      new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(file);
      });
    const chosen = [...attach.files].slice(0, 4);
    attached = await Promise.all(
      chosen.map(async (file) => ({
        name: file.name,
        type: file.type || "application/octet-stream",
        data: await read(file),
      })),
    );
    input.placeholder = attached.length
      ? `${attached.map((file) => file.name).join(", ")}: add a caption`
      : "Message flynn";
  });
  for (const button of document.querySelectorAll("[data-command]")) {
    button.addEventListener("click", () => submit(`/${button.dataset.command}`));
  }

  connection.connect();
})();
