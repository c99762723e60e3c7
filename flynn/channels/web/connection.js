// flynn web pages: the gateway connection the chat page and the memory page share (protocol 2,
// docs/gateway-protocol.md, over ./ws): the token and client id, hello, the status label, the
// token form, and reconnecting after a drop. No dependencies.
"use strict";

window.flynnConnection = (() => {
  const TOKEN_KEY = "flynn.token";
  const CLIENT_KEY = "flynn.client_id";
  const CLIENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
  const TOKEN_PROMPT = "Paste the gateway token (or open the link flynn printed):";
  const TOKEN_REFUSED =
    "The token in this page's address is wrong. Open the link flynn printed when it started, " +
    "or paste the token below.";

  // The token comes in the URL fragment, which browsers never send to the server. It is kept
  // for this tab only and dropped from the address bar, so a copied URL does not carry it.
  // "client_id=" there names this browser as a gateway client (one listed under a person in
  // users:), kept like a generated one; both pages read the same.
  function readToken() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    const client = fragment.get("client_id");
    if (client && CLIENT_ID.test(client)) localStorage.setItem(CLIENT_KEY, client);
    const token = fragment.get("token");
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  }

  function clientId() {
    let id = localStorage.getItem(CLIENT_KEY);
    if (!id || !CLIENT_ID.test(id)) {
      const bytes = crypto.getRandomValues(new Uint8Array(8));
      id = "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem(CLIENT_KEY, id);
    }
    return id;
  }

  // The page's connection, driving its #state label and #token-form. onFrame(frame) gets every
  // frame of the current socket ("ready" after the label says connected); onClosed(code) runs
  // when that socket closes, before the page asks for a token or retries. Nothing happens until
  // connect().
  function open({ onFrame, onClosed = () => {} }) {
    const $ = (id) => document.getElementById(id);
    const stateLabel = $("state");
    const tokenForm = $("token-form");
    const tokenLabel = $("token-label");
    let socket = null;
    let attempt = 0;
    let retryTimer = 0;

    function setState(state, label) {
      stateLabel.dataset.state = state;
      stateLabel.textContent = label;
    }

    function connect() {
      clearTimeout(retryTimer);
      const token = readToken();
      if (!token) {
        setState("offline", "token needed");
        tokenLabel.textContent = TOKEN_PROMPT;
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
      // Protocol 2: every final reply and push has an id and counts as delivered only once the
      // page acknowledges it (ack), so nothing is lost on a socket that died unnoticed.
      ws.onopen = () =>
        ws.send(JSON.stringify({ type: "hello", token, client_id: clientId(), protocol: 2 }));
      ws.onmessage = (event) => {
        if (socket !== ws) return;
        const frame = JSON.parse(event.data);
        if (frame.type === "ready") {
          attempt = 0;
          setState("online", "connected");
        }
        onFrame(frame);
      };
      ws.onclose = (event) => {
        if (socket === ws) closed(event.code);
      };
    }

    function closed(code) {
      socket = null;
      onClosed(code);
      if (code === 4401) {
        sessionStorage.removeItem(TOKEN_KEY);
        setState("offline", "token refused");
        tokenLabel.textContent = TOKEN_REFUSED;
        tokenForm.hidden = false;
        return;
      }
      if (code === 4400) localStorage.removeItem(CLIENT_KEY);
      const delay = Math.min(15000, 500 * 2 ** attempt) * (0.75 + Math.random() / 2);
      attempt += 1;
      setState("offline", `offline, retrying in ${Math.ceil(delay / 1000)} s`);
      retryTimer = setTimeout(connect, delay);
    }

    // A fresh start with another token: no backoff left over from the old one.
    function reconnect() {
      const previous = socket;
      socket = null;
      if (previous) previous.close();
      attempt = 0;
      connect();
    }

    tokenForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const field = $("token-input");
      sessionStorage.setItem(TOKEN_KEY, field.value.trim());
      field.value = "";
      reconnect();
    });
    // Opening another #token= link in the same tab changes only the fragment: no page load.
    window.addEventListener("hashchange", () => {
      if (new URLSearchParams(location.hash.slice(1)).has("token")) reconnect();
    });
    window.addEventListener("online", () => {
      if (!socket) connect();
    });

    function isOpen() {
      return socket !== null && socket.readyState === WebSocket.OPEN;
    }

    // Sends one frame; false (and nothing sent) while the socket is not open.
    function send(frame) {
      if (!isOpen()) return false;
      socket.send(JSON.stringify(frame));
      return true;
    }

    // Acknowledges a reply, error or push the page has shown (or already showed): the server
    // then counts it delivered and never sends it again.
    function ack(id) {
      if (typeof id === "string") send({ type: "ack", id });
    }

    return { connect, isOpen, send, ack };
  }

  return { open, TOKEN_REFUSED };
})();
