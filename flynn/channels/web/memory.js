// flynn memory page: what Flynn remembers of the person this browser is, read over the gateway's
// WebSocket ("memory" frames, an extension of the protocol), no dependencies. Everything the
// server sends is put on the page as text (textContent, SVG attributes), never as markup.
"use strict";

(() => {
  const KINDS = {
    profile: "Profile",
    pattern: "Pattern",
    action: "Action",
    observation: "Observation",
  };
  const SECTIONS = [
    ["profile", "Profile"],
    ["patterns", "Patterns"],
    ["facts", "Facts and observations"],
  ];
  const FILE_NOTES = {
    "USER.md": "what you want Flynn to know from the start",
    "MEMORY_SHORT.md": "your recent days, distilled daily",
    "MEMORY_MID.md": "the last few weeks, distilled weekly",
    "MEMORY_LONG.md": "the long run, distilled monthly",
    "REMINDERS.md": "things to bring up, by hand",
  };
  const EDITABLE = ["USER.md", "REMINDERS.md"]; // yours to write; the others are Flynn's

  const $ = (id) => document.getElementById(id);
  const notice = $("notice");
  const filter = $("filter");
  const entitySelect = $("entity");

  const pending = new Map(); // request id -> {op, fact, el} awaiting its answer
  let refreshTimer = 0;
  let sequence = 0;
  let centre = null; // the graph's chosen entity id (null: the server's choice)

  function nextId() {
    sequence += 1;
    return `m${Date.now().toString(36)}-${sequence}`;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function when(iso) {
    if (!iso) return "";
    const at = new Date(iso);
    if (Number.isNaN(at.getTime())) return String(iso);
    return at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function day(iso) {
    const at = new Date(iso);
    if (Number.isNaN(at.getTime())) return String(iso ?? "");
    return at.toLocaleDateString(undefined, { dateStyle: "medium" });
  }

  // "Nov 25, 2026, 12:04 PM → 3:10 PM": the end's date only when it is another day.
  function during(from, until) {
    if (!until) return `${when(from)} → now`;
    const start = new Date(from);
    const end = new Date(until);
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return `${from} → ${until}`;
    const sameDay = start.toDateString() === end.toDateString();
    const tail = sameDay ? end.toLocaleTimeString(undefined, { timeStyle: "short" }) : when(until);
    return `${when(from)} → ${tail}`;
  }

  function percent(confidence) {
    return `${Math.round(Number(confidence) * 100)}%`;
  }

  function say(text, kind = "info") {
    notice.textContent = text;
    notice.dataset.kind = kind;
    notice.hidden = !text;
  }

  // Requests. Each carries an id; its answer (or error) comes back with it.
  function ask(op, extra = {}, context = {}) {
    if (!connection.isOpen()) return false;
    const id = nextId();
    pending.set(id, { op, ...context });
    connection.send({ type: "memory", id, op, ...extra });
    return true;
  }

  function refresh() {
    ask("overview");
    ask("map");
    ask("graph", centre === null ? {} : { entity: centre });
  }

  // Something may have been learnt (a reply in this client's chat) or become due (a push).
  function refreshSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 800);
  }

  // Who this is, and the facts.
  function showWho(who) {
    const name = who.person ? String(who.person) : "";
    if (who.kind === "person") {
      $("who").textContent = `Memory of ${name} (${who.namespace}).`;
    } else if (who.kind === "owner") {
      $("who").textContent = `Your memory (${who.namespace}), shared by every channel you use.`;
    } else {
      $("who").textContent =
        `This browser's own session memory (${who.namespace}): it is not listed under a ` +
        "person in users:, so it sees nobody's memory but what was said here.";
    }
  }

  function factLabel(fact) {
    return fact.field ? `${String(fact.field).replaceAll("_", " ")}: ${fact.value}` : fact.value;
  }

  function factMeta(fact) {
    const parts = [KINDS[fact.kind] || fact.kind, fact.source, `${percent(fact.confidence)} sure`];
    parts.push(`learnt ${day(fact.learnt_at)}`);
    if (fact.channel) parts.push(`via ${fact.channel}`);
    // A line breaks between the parts, never inside one ("learnt Nov 24, 2026" stays whole).
    return parts.map((part) => String(part).replaceAll(" ", "\u00a0")).join(" · ");
  }

  function factItem(fact) {
    const item = el("article", "fact");
    item.dataset.id = fact.id;
    item.dataset.kind = fact.kind;
    item.dataset.text = factLabel(fact).toLowerCase();
    const main = el("div", "fact-main");
    if (fact.field) main.append(el("span", "fact-field", String(fact.field).replaceAll("_", " ")));
    main.append(el("span", "fact-value", fact.value));
    if (fact.has_history) main.append(el("span", "badge", "updated"));
    const meta = el("div", "fact-meta", factMeta(fact));
    meta.title = `learnt ${when(fact.learnt_at)}`;
    const actions = el("div", "fact-actions");
    const historyButton = el("button", "quiet", "History");
    historyButton.type = "button";
    historyButton.setAttribute("aria-expanded", "false");
    const forgetButton = el("button", "danger", "Forget");
    forgetButton.type = "button";
    actions.append(historyButton, forgetButton);
    const history = el("div", "fact-history");
    history.hidden = true;
    const confirm = el("div", "confirm");
    confirm.hidden = true;
    confirm.setAttribute("role", "alertdialog");
    const question = el(
      "p",
      "",
      `Forget “${factLabel(fact)}” for good? Its earlier values go too, and it is blanked ` +
        "out wherever past messages mention it. This cannot be undone.",
    );
    const yes = el("button", "danger solid", "Forget it");
    yes.type = "button";
    const no = el("button", "quiet", "Keep it");
    no.type = "button";
    const status = el("p", "confirm-status");
    confirm.append(question, el("div", "row-buttons"), status);
    confirm.children[1].append(yes, no);

    historyButton.addEventListener("click", () => {
      const open = history.hidden;
      history.hidden = !open;
      historyButton.setAttribute("aria-expanded", String(open));
      if (open && !history.dataset.loaded) {
        history.replaceChildren(el("p", "hint", "Reading its history…"));
        ask("history", { fact: fact.id }, { target: history });
      }
    });
    forgetButton.addEventListener("click", () => {
      confirm.hidden = false;
      status.textContent = "";
      no.focus();
    });
    no.addEventListener("click", () => {
      confirm.hidden = true;
      forgetButton.focus();
    });
    yes.addEventListener("click", () => {
      yes.disabled = true;
      no.disabled = true;
      status.textContent = "Forgetting…";
      if (!ask("forget", { fact: fact.id }, { item, status, buttons: [yes, no], fact })) {
        status.textContent = "Not connected; try again in a moment.";
        yes.disabled = false;
        no.disabled = false;
      }
    });
    item.append(main, meta, actions, history, confirm);
    return item;
  }

  function showFacts(data) {
    const box = $("facts");
    const facts = Array.isArray(data.facts) ? data.facts : [];
    box.replaceChildren();
    if (!facts.length) {
      box.append(el("p", "empty", "Nothing yet. Tell Flynn about yourself in the chat."));
    }
    for (const [section, title] of SECTIONS) {
      const mine = facts.filter((fact) => fact.section === section);
      if (!mine.length) continue;
      const group = el("div", "fact-group");
      group.append(el("h3", "", `${title} (${mine.length})`));
      for (const fact of mine) group.append(factItem(fact));
      box.append(group);
    }
    const total = Number(data.facts_total) || 0;
    $("facts-note").textContent =
      total > facts.length
        ? `The newest ${facts.length} of ${total} facts Flynn holds now.`
        : `${total} ${total === 1 ? "fact" : "facts"} Flynn holds now. What was replaced ` +
          "stays in each one's history.";
    applyFilter();
  }

  function applyFilter() {
    const words = filter.value.trim().toLowerCase();
    for (const item of document.querySelectorAll("#facts .fact")) {
      item.hidden = Boolean(words) && !item.dataset.text.includes(words);
    }
  }

  function showHistory(target, data) {
    target.dataset.loaded = "1";
    target.replaceChildren();
    const rows = Array.isArray(data.history) ? data.history : [];
    if (rows.length <= 1) target.append(el("p", "hint", "No earlier values: this is the first."));
    const list = el("ol", "history");
    for (const row of rows) {
      const item = el("li", `history-row ${row.retraction ? "retraction" : row.status}`);
      item.append(el("span", "history-value", row.value));
      let badge = row.status === "active" ? "believed now" : row.status;
      if (row.retraction) badge = "retracted";
      item.append(el("span", "badge", badge));
      const span = row.retraction
        ? `recorded ${when(row.created_at)}`
        : `believed ${during(row.believed_from, row.believed_until)}`;
      item.append(el("div", "fact-meta", `${span} · ${row.source} · ${percent(row.confidence)}`));
      list.append(item);
    }
    target.append(list);
  }

  function forgotten(context, data) {
    const counts = data.forgotten || {};
    const redacted = Object.entries(counts)
      .filter(([kind]) => kind.startsWith("redacted"))
      .reduce((sum, [, n]) => sum + Number(n || 0), 0);
    context.item.remove();
    say(
      `Forgotten: “${factLabel(context.fact)}” (${counts.facts || 0} stored ` +
        `${counts.facts === 1 ? "value" : "values"}` +
        (redacted ? `, ${redacted} mention${redacted === 1 ? "" : "s"} blanked out` : "") +
        "). Flynn will not recall it again.",
    );
    refresh();
  }

  // Working memory, reminders, tasks, files.
  function showWorking(working) {
    const box = $("working");
    box.replaceChildren();
    if (!working) {
      const none = "None yet: it is written when a long conversation is compacted.";
      box.append(el("p", "empty", none));
      return;
    }
    const times = `Updated ${when(working.updated_at)} · Expires ${when(working.expires_at)}`;
    const meta = el("p", "fact-meta", times);
    if (working.expired) meta.append(" ", el("span", "badge", "expired: no longer shown to Flynn"));
    box.append(meta, el("pre", "text", working.content));
  }

  function showPlans(data) {
    const reminders = $("reminders");
    reminders.replaceChildren();
    const items = data.reminders?.items || [];
    if (!items.length) reminders.append(el("li", "empty", "No reminders set."));
    for (const job of items) {
      const item = el("li");
      item.append(el("span", "", job.number ? `${job.number}. ${job.text}` : job.text));
      const repeat = job.repeat ? ` · repeats ${job.repeat}` : "";
      // Written by the server, as the chat and `flynn reminders` write it (one rule).
      item.append(el("div", "fact-meta", `next ${job.when}${repeat}`));
      reminders.append(item);
    }
    if (data.reminders?.more) {
      reminders.append(el("li", "hint", "… and more (/reminders lists them all)."));
    }
    const tasks = $("tasks");
    tasks.replaceChildren();
    if (data.tasks?.error) {
      tasks.append(el("li", "empty", `The task list cannot be read: ${data.tasks.error}`));
    }
    const open = data.tasks?.items || [];
    if (!open.length && !data.tasks?.error) tasks.append(el("li", "empty", "No tasks."));
    for (const task of open) {
      const item = el("li", task.done ? "task done" : "task");
      item.append(el("span", "tick", task.done ? "✓" : "○"), el("span", "", task.text));
      tasks.append(item);
    }
  }

  function showFiles(files) {
    const box = $("files");
    // A refresh (something learnt in a chat tab) must not take away text being edited.
    if (box.querySelector(".file-editor")) return;
    box.replaceChildren();
    for (const file of files || []) {
      const details = el("details", "file");
      const summary = el("summary");
      summary.append(el("span", "file-name", file.name));
      let state;
      if (file.error) state = `cannot be read: ${file.error}`;
      else if (!file.exists) state = "not written yet";
      else if (!file.text && file.guidance_only) state = "only the template's guidance";
      else if (!file.text) state = "empty";
      else state = `${file.text.length.toLocaleString()} characters${file.cut ? ", cut" : ""}`;
      summary.append(el("span", "file-state", state));
      details.append(summary, el("p", "hint", FILE_NOTES[file.name] || ""));
      if (file.text) details.append(el("pre", "text", file.text));
      if (EDITABLE.includes(file.name)) {
        const edit = el("button", "edit-file", `Edit ${file.name}`);
        edit.type = "button";
        edit.addEventListener("click", () => {
          edit.disabled = true;
          ask("file", { name: file.name }, { details, edit });
        });
        details.append(edit);
      }
      box.append(details);
    }
  }

  // Editing one of your own files: the whole text as kept (guidance comments too), saved whole,
  // and only over the text it was opened from (its base): a save over a file Flynn or another
  // editor wrote meanwhile is refused, and the text typed here stays.
  function showEditor(context, data) {
    const { details, edit } = context;
    const form = el("form", "file-editor");
    const area = el("textarea", "file-text");
    area.value = typeof data.text === "string" ? data.text : "";
    const editing = { base: typeof data.base === "string" ? data.base : null };
    area.rows = 14;
    area.setAttribute("aria-label", `${data.name} text`);
    const save = el("button", "", "Save");
    save.type = "submit";
    const cancel = el("button", "", "Cancel");
    cancel.type = "button";
    const status = el("span", "file-status", "");
    status.setAttribute("role", "status");
    cancel.addEventListener("click", () => {
      form.remove();
      edit.disabled = false;
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      save.disabled = cancel.disabled = true;
      status.textContent = "Saving…";
      const buttons = [save, cancel];
      const request = { name: data.name, text: area.value };
      if (editing.base !== null) request.base = editing.base;
      if (!ask("save_file", request, { status, buttons, saved: true, form, area, editing })) {
        status.textContent = "Not connected; nothing saved.";
        save.disabled = cancel.disabled = false;
      }
    });
    form.append(area, save, cancel, status);
    details.open = true;
    details.append(form);
    area.focus();
  }

  // The file changed since the editor opened it: nothing was saved. What was typed stays in the
  // box; the file as it is now is shown below it, and loading it starts the edit again from it.
  function changedMeanwhile(context, message, current) {
    const { form, area, editing, status } = context;
    form.querySelector(".file-conflict")?.remove();
    status.textContent = message;
    status.dataset.kind = "error";
    if (typeof current?.text !== "string" || typeof current?.base !== "string") return;
    const conflict = el("div", "file-conflict");
    const load = el("button", "", "Load current version");
    load.type = "button";
    load.addEventListener("click", () => {
      area.value = current.text;
      editing.base = current.base;
      conflict.remove();
      delete status.dataset.kind;
      status.textContent = `This is ${current.name} as it is now: make your change again, then save.`;
      area.focus();
    });
    conflict.append(
      el("p", "hint", `${current.name} as it is now (what you typed is still in the box above):`),
      el("pre", "text", current.text),
      load,
    );
    form.append(conflict);
  }

  function saved(context, data) {
    context.status.closest("form")?.remove();
    say(
      data.redacted
        ? `${data.name} saved. A credential in it was left out: Flynn never keeps one.`
        : `${data.name} saved. Flynn reads it from your next message.`,
    );
    ask("overview");
  }

  function showEntities(entities) {
    entitySelect.replaceChildren();
    const list = Array.isArray(entities) ? entities : [];
    entitySelect.disabled = !list.length;
    if (!list.length) entitySelect.append(el("option", "", "no entities yet"));
    for (const entity of list) {
      const option = el("option", "", `${entity.name} (${entity.type})`);
      option.value = String(entity.id);
      entitySelect.append(option);
    }
    if (centre !== null) entitySelect.value = String(centre);
  }

  function showOverview(data) {
    showWho(data.who || {});
    showFacts(data);
    showWorking(data.working);
    showPlans(data);
    showFiles(data.files);
    showEntities(data.entities);
  }

  // The map and the graph (memory-draw.js).
  function showMap(data) {
    $("map-note").textContent = window.flynnDraw.map($("map"), $("legend"), data, KINDS);
  }

  function showGraph(data) {
    if (data.centre) {
      centre = Number(data.centre.id);
      entitySelect.value = String(centre);
    }
    $("graph-note").textContent = window.flynnDraw.graph($("graph"), data, (id) => {
      centre = id;
      ask("graph", { entity: id });
    });
  }

  // Frames.
  function onAnswer(frame, context) {
    const data = frame.data || {};
    switch (frame.op) {
      case "overview":
        showOverview(data);
        break;
      case "map":
        showMap(data);
        break;
      case "graph":
        showGraph(data);
        break;
      case "history":
        if (context?.target) showHistory(context.target, data);
        break;
      case "forget":
        if (context?.item) forgotten(context, data);
        break;
      case "file":
        if (context?.details) showEditor(context, data);
        break;
      case "save_file":
        if (context?.saved) saved(context, data);
        break;
    }
  }

  function onError(frame, context) {
    const message =
      typeof frame.message === "string" && frame.message ? frame.message : "Something went wrong.";
    if (context?.status) {
      context.status.textContent = message;
      for (const button of context.buttons) button.disabled = false;
      if (frame.code === "conflict" && context.editing) {
        changedMeanwhile(context, message, frame.data);
        return;
      }
      if (frame.code === "bad_request") refresh(); // it is gone already: show what is there
      return;
    }
    if (context?.target) {
      context.target.replaceChildren(el("p", "error-text", message));
      return;
    }
    if (context?.edit) context.edit.disabled = false;
    if (frame.code !== "unauthorized") say(message, "error");
  }

  function onFrame(frame) {
    const context = frame.id !== undefined ? pending.get(frame.id) : undefined;
    if (context) pending.delete(frame.id);
    switch (frame.type) {
      case "ready":
        refresh();
        break;
      case "memory":
        onAnswer(frame, context);
        break;
      case "error":
        onError(frame, context);
        break;
      case "reply":
        refreshSoon(); // this client chatted in another tab: something may have been learnt
        break;
      case "push":
        say(`${frame.kind === "reminder" ? "Reminder" : "Notice"}: ${frame.text}`);
        refreshSoon();
        break;
    }
  }

  // Requests the dropped socket was to answer never will be.
  function closed(code) {
    for (const [id, context] of pending) {
      pending.delete(id);
      onError({ code: "internal", message: "The connection dropped; try again." }, context);
    }
    if (code === 4401) $("who").textContent = "Flynn refused this page's token.";
  }

  const connection = window.flynnConnection.open({ onFrame, onClosed: closed });

  filter.addEventListener("input", applyFilter);
  entitySelect.addEventListener("change", () => {
    centre = Number(entitySelect.value);
    ask("graph", { entity: centre });
  });

  connection.connect();
})();
