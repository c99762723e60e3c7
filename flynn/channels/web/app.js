// flynn web chat: gateway protocol v1 (DESIGN.md section 8) over ./ws, no dependencies.
"use strict";

(() => {
  const COMMANDS = new Set(["new", "reset", "status", "compact", "otr", "forget", "help", "search"]);
  const TOKEN_KEY = "flynn.token";
  const CLIENT_KEY = "flynn.client_id";
  const PUSH_LABELS = { reminder: "Reminder", distill: "Memory", notice: "Notice" };

  const $ = (id) => document.getElementById(id);
  const log = $("log");
  const stateLabel = $("state");
  const input = $("input");
  const composer = $("composer");
  const tokenForm = $("token-form");

  const bubbles = new Map(); // frame id -> {el, text} of a reply still being written
  const outgoing = []; // frames typed while offline; sent after the next ready
  const pushes = new Set(); // push ids already shown: a redelivered push appears once
  let socket = null;
  let ready = false;
  let attempt = 0;
  let retryTimer = 0;
  let sequence = 0;

  // The token comes in the URL fragment, which browsers never send to the server. It is kept
  // for this tab only and dropped from the address bar, so a copied URL does not carry it.
  function readToken() {
    const token = new URLSearchParams(location.hash.slice(1)).get("token");
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  }

  function clientId() {
    let id = localStorage.getItem(CLIENT_KEY);
    if (!id || !/^[A-Za-z0-9_.:-]{1,128}$/.test(id)) {
      const bytes = crypto.getRandomValues(new Uint8Array(8));
      id = "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem(CLIENT_KEY, id);
    }
    return id;
  }

  // Unique across reloads too: the server deduplicates on client_id + id.
  function nextId() {
    sequence += 1;
    return `c${Date.now().toString(36)}-${sequence}`;
  }

  function setState(state, label) {
    stateLabel.dataset.state = state;
    stateLabel.textContent = label;
  }

  // Model output only ever reaches the page through textContent; ``` fences become <pre>.
  function render(el, text) {
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

  function addBubble(kind, text, scroll) {
    const follow = scroll || log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    const el = document.createElement("div");
    el.className = `msg ${kind}`;
    render(el, text);
    log.append(el);
    if (follow) log.scrollTop = log.scrollHeight;
    return el;
  }

  // A push answers nothing: its own bubble at the end, never a pending reply's. The log is
  // aria-live, so screen readers hear the label, then the text.
  function showPush(frame) {
    if (pushes.has(frame.id)) return;
    pushes.add(frame.id);
    const kind = Object.hasOwn(PUSH_LABELS, frame.kind) ? frame.kind : "notice";
    const follow = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    const el = document.createElement("div");
    el.className = "msg push";
    el.dataset.kind = kind;
    const label = document.createElement("span");
    label.className = "push-label";
    label.textContent = PUSH_LABELS[kind];
    const body = document.createElement("div");
    render(body, String(frame.text ?? ""));
    el.append(label, body);
    log.append(el);
    if (follow) log.scrollTop = log.scrollHeight;
  }

  function showError(frame) {
    const entry = frame.id !== undefined ? bubbles.get(frame.id) : undefined;
    const text = `${frame.message || "error"} (${frame.code || "error"})`;
    if (entry) {
      bubbles.delete(frame.id);
      entry.el.className = "msg error";
      render(entry.el, text);
    } else {
      addBubble("error", text);
    }
  }

  function onFrame(frame) {
    const entry = bubbles.get(frame.id);
    switch (frame.type) {
      case "ready":
        ready = true;
        attempt = 0;
        setState("online", "connected");
        for (const queued of outgoing.splice(0)) socket.send(JSON.stringify(queued));
        break;
      case "delta":
        if (entry) {
          entry.text += frame.text;
          entry.el.classList.remove("pending");
          render(entry.el, entry.text);
        } else {
          bubbles.set(frame.id, { el: addBubble("assistant", frame.text), text: frame.text });
        }
        break;
      case "reply":
        bubbles.delete(frame.id);
        if (entry) {
          entry.el.className = "msg assistant";
          render(entry.el, frame.text);
        } else {
          addBubble("assistant", frame.text);
        }
        break;
      case "push":
        showPush(frame);
        break;
      case "error":
        showError(frame);
        break;
    }
  }

  function connect() {
    clearTimeout(retryTimer);
    const token = readToken();
    if (!token) {
      setState("offline", "token needed");
      tokenForm.hidden = false;
      return;
    }
    tokenForm.hidden = true;
    const url = new URL("ws", location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.hash = "";
    url.search = "";
    setState("connecting", "connecting…");
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: "hello", token, client_id: clientId() }));
    ws.onmessage = (event) => {
      if (socket === ws) onFrame(JSON.parse(event.data));
    };
    ws.onclose = (event) => {
      if (socket === ws) closed(event.code);
    };
  }

  function closed(code) {
    socket = null;
    ready = false;
    if (code === 4401) {
      sessionStorage.removeItem(TOKEN_KEY);
      setState("offline", "token refused");
      tokenForm.hidden = false;
      return;
    }
    if (code === 4400) localStorage.removeItem(CLIENT_KEY);
    const delay = Math.min(15000, 500 * 2 ** attempt) * (0.75 + Math.random() / 2);
    attempt += 1;
    setState("offline", `offline, retrying in ${Math.ceil(delay / 1000)} s`);
    retryTimer = setTimeout(connect, delay);
  }

  function submit(raw) {
    const text = raw.trim();
    if (!text) return;
    const id = nextId();
    const command = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(text);
    // "id" goes before "text" so the server can name the frame even when refusing it unparsed.
    const frame =
      command && COMMANDS.has(command[1])
        ? { type: "command", id, name: command[1], ...(command[2] ? { arg: command[2] } : {}) }
        : { type: "message", id, text };
    addBubble("user", text, true);
    bubbles.set(id, { el: addBubble("assistant pending", "", true), text: "" });
    if (ready && socket) socket.send(JSON.stringify(frame));
    else outgoing.push(frame);
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
  for (const button of document.querySelectorAll("[data-command]")) {
    button.addEventListener("click", () => submit(`/${button.dataset.command}`));
  }
  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const field = $("token-input");
    sessionStorage.setItem(TOKEN_KEY, field.value.trim());
    field.value = "";
    attempt = 0;
    connect();
  });
  // Opening another #token= link in the same tab changes only the fragment: no page load.
  window.addEventListener("hashchange", () => {
    if (!new URLSearchParams(location.hash.slice(1)).has("token")) return;
    const previous = socket;
    socket = null;
    if (previous) previous.close();
    attempt = 0;
    connect();
  });
  window.addEventListener("online", () => {
    if (!socket) connect();
  });

  connect();
})();
