// flynn memory page: the map of facts and the knowledge graph, drawn as inline SVG from what
// memory.js received. Text goes in as text (textContent, attributes), never as markup.
"use strict";

window.flynnDraw = (() => {
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attributes = {}) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    return node;
  }

  // Facts with no rarer word in common all sit at the centre of a TF-IDF map, and near-twins
  // sit on one spot: each point that would cover one already placed is moved out along a
  // spiral to the nearest free place, so every fact can be seen and pointed at.
  function spread(spots, radius, width, height, pad) {
    const gap = 2 * radius + 1;
    const grid = new Map();
    const cell = (x, y) => `${Math.floor(x / gap)},${Math.floor(y / gap)}`;
    const free = (x, y) => {
      const cx = Math.floor(x / gap);
      const cy = Math.floor(y / gap);
      for (let i = cx - 1; i <= cx + 1; i += 1) {
        for (let j = cy - 1; j <= cy + 1; j += 1) {
          for (const other of grid.get(`${i},${j}`) || []) {
            if ((other.x - x) ** 2 + (other.y - y) ** 2 < gap * gap) return false;
          }
        }
      }
      return true;
    };
    return spots.map((spot) => {
      let { x, y } = spot;
      for (let k = 1; k < 4000 && !free(x, y); k += 1) {
        const angle = k * 2.399963; // the golden angle: the spiral's turns never line up
        const reach = gap * 0.55 * Math.sqrt(k);
        x = Math.min(width - pad, Math.max(pad, spot.x + reach * Math.cos(angle)));
        y = Math.min(height - pad, Math.max(pad, spot.y + reach * Math.sin(angle)));
      }
      const key = cell(x, y);
      grid.set(key, [...(grid.get(key) || []), { x, y }]);
      return { x, y };
    });
  }

  // The map: each fact a point, coloured by its kind (names in ``kinds``); hover or tap shows
  // its text. Returns the caption.
  function map(box, legend, data, kinds) {
    box.replaceChildren();
    const points = Array.isArray(data.points) ? data.points : [];
    legend.replaceChildren();
    if (!points.length) {
      box.append(el("p", "empty", "Nothing to place yet."));
      return "";
    }
    // Drawn at the card's own width, so a point is a point on a phone too.
    const width = Math.max(300, Math.min(640, box.clientWidth || 600));
    const height = Math.round(Math.max(240, width * 0.6));
    const pad = 14;
    const drawing = svg("svg", {
      viewBox: `0 0 ${width} ${height}`,
      class: "chart",
      role: "img",
      "aria-label": `Map of ${points.length} facts`,
    });
    drawing.append(
      svg("line", { x1: pad, y1: height / 2, x2: width - pad, y2: height / 2, class: "axis" }),
      svg("line", { x1: width / 2, y1: pad, x2: width / 2, y2: height - pad, class: "axis" }),
    );
    const tip = el("div", "tip");
    tip.hidden = true;
    const present = new Set();
    let shown = null;
    const show = (dot, point) => {
      if (shown) shown.classList.remove("on");
      shown = dot;
      dot.classList.add("on");
      const kind = el("strong", "", kinds[point.kind] || point.kind);
      tip.replaceChildren(kind, el("span", "", point.text));
      tip.hidden = false;
      const area = box.getBoundingClientRect();
      const spot = dot.getBoundingClientRect();
      const x = spot.left + spot.width / 2 - area.left;
      const y = spot.top - area.top;
      tip.style.left = `${Math.max(4, Math.min(x - 120, area.width - 244))}px`;
      tip.style.top = `${y > 90 ? y - 8 : y + spot.height + 8}px`;
      tip.classList.toggle("below", y <= 90);
    };
    const hide = () => {
      if (shown) shown.classList.remove("on");
      shown = null;
      tip.hidden = true;
    };
    const radius = 6;
    const spots = spread(
      points.map((point) => ({
        x: width / 2 + (Number(point.x) * (width - 2 * pad)) / 2,
        y: height / 2 - (Number(point.y) * (height - 2 * pad)) / 2,
      })),
      radius,
      width,
      height,
      pad,
    );
    points.forEach((point, index) => {
      present.add(point.kind);
      const dot = svg("circle", {
        cx: spots[index].x.toFixed(1),
        cy: spots[index].y.toFixed(1),
        r: radius,
        class: `dot kind-${kinds[point.kind] ? point.kind : "other"}`,
        tabindex: 0,
        "aria-label": String(point.text),
      });
      dot.dataset.id = point.id;
      dot.addEventListener("pointerenter", () => show(dot, point));
      dot.addEventListener("focus", () => show(dot, point));
      dot.addEventListener("click", (event) => {
        event.stopPropagation();
        show(dot, point);
      });
      dot.addEventListener("pointerleave", (event) => {
        if (event.pointerType === "mouse") hide();
      });
      dot.addEventListener("blur", hide);
      drawing.append(dot);
    });
    drawing.addEventListener("click", hide);
    box.append(drawing, tip);
    for (const kind of Object.keys(kinds)) {
      if (!present.has(kind)) continue;
      const item = el("li");
      item.append(el("span", `swatch kind-${kind}`), el("span", "", kinds[kind]));
      legend.append(item);
    }
    const total = Number(data.total) || points.length;
    const which =
      total > points.length
        ? `The newest ${points.length} of ${total} facts`
        : `${points.length} fact${points.length === 1 ? "" : "s"}`;
    const share = `${Math.round(Number(data.explained) * 100)}%`;
    return data.method === "embeddings"
        ? `${which} placed by the two principal components of their embeddings (${data.model}): ` +
          `near means similar in meaning. The two axes show ${share} of how the facts differ.` +
          " Points that would cover each other are set side by side."
        : `${which} placed by the two principal components of their TF-IDF word vectors: near ` +
          `means sharing rarer words. The two axes show ${share} of how the facts differ.` +
          " Points that would cover each other are set side by side.";
  }

  // The graph around one entity: it in the middle, its relations around it, a few of theirs
  // further out; ``pick(id)`` is called for a node clicked (to put it in the middle). Drawn at
  // the card's own width (names stay readable on a phone) and cropped to what was drawn.
  // Returns the caption.
  function graph(box, data, pick) {
    box.replaceChildren();
    const nodes = Array.isArray(data.nodes) ? data.nodes : [];
    const edges = Array.isArray(data.edges) ? data.edges : [];
    if (!data.centre) {
      box.append(el("p", "empty", "No people, places or projects learnt yet."));
      return "";
    }
    const centre = Number(data.centre.id);
    const room = Math.max(300, Math.min(640, box.clientWidth || 600));
    const far = nodes.filter((node) => node.ring === 2);
    const outer = Math.max(135, Math.min(210, room * 0.42));
    const inner = far.length ? outer * 0.52 : outer * 0.8;
    const place = new Map([[centre, { x: 0, y: 0, angle: Math.PI / 2 }]]);
    const near = nodes.filter((node) => node.ring === 1);
    near.forEach((node, index) => {
      const angle = (2 * Math.PI * index) / Math.max(near.length, 1) - Math.PI / 2;
      place.set(node.id, { x: inner * Math.cos(angle), y: inner * Math.sin(angle), angle });
    });
    // A far node sits beyond the near node it hangs from, fanned out around its direction.
    const hanging = new Map();
    for (const node of far) {
      const edge = edges.find(
        (e) =>
          (e.source === node.id && place.has(e.target)) ||
          (e.target === node.id && place.has(e.source)),
      );
      const parent = edge ? (edge.source === node.id ? edge.target : edge.source) : centre;
      hanging.set(parent, [...(hanging.get(parent) || []), node]);
    }
    for (const [parent, children] of hanging) {
      const base = place.get(parent)?.angle ?? 0;
      children.forEach((node, index) => {
        const angle = base + (index - (children.length - 1) / 2) * 0.42;
        place.set(node.id, { x: outer * Math.cos(angle), y: outer * Math.sin(angle), angle });
      });
    }
    const drawing = svg("svg", {
      class: "chart graph",
      role: "img",
      "aria-label": `Knowledge graph around ${data.centre.name}`,
    });
    const bounds = { left: -40, right: 40, top: -30, bottom: 40 };
    const grow = (x, y) => {
      bounds.left = Math.min(bounds.left, x);
      bounds.right = Math.max(bounds.right, x);
      bounds.top = Math.min(bounds.top, y);
      bounds.bottom = Math.max(bounds.bottom, y);
    };
    const ringOf = new Map(nodes.map((node) => [node.id, node.ring]));
    for (const edge of edges) {
      let from = place.get(edge.source);
      let to = place.get(edge.target);
      if (!from || !to) continue;
      drawing.append(svg("line", { x1: from.x, y1: from.y, x2: to.x, y2: to.y, class: "edge" }));
      // The relation's name sits past the middle of its edge, away from the crowded centre.
      if ((ringOf.get(edge.source) ?? 0) > (ringOf.get(edge.target) ?? 0)) [from, to] = [to, from];
      const along = 0.58;
      const label = svg("text", {
        x: from.x + along * (to.x - from.x),
        y: from.y + along * (to.y - from.y) - 3,
        class: "edge-label",
      });
      label.textContent = edge.type;
      drawing.append(label);
    }
    for (const node of nodes) {
      const spot = place.get(node.id);
      if (!spot) continue;
      const group = svg("g", { class: `node ring-${node.ring}` });
      const dot = node.ring === 0 ? 11 : 7;
      group.append(svg("circle", { cx: spot.x, cy: spot.y, r: dot }));
      // The name goes on the far side of the node from the middle, clear of its edges; beside
      // it (across its direction) when its own neighbours fan out there.
      let side = node.ring === 0 ? Math.PI / 2 : spot.angle;
      if (node.ring !== 0 && hanging.has(node.id)) side += Math.PI / 2;
      const cos = Math.cos(side);
      const sin = Math.sin(side);
      const anchor = cos > 0.35 ? "start" : cos < -0.35 ? "end" : "middle";
      const x = spot.x + cos * (dot + 5);
      const y = spot.y + sin * (dot + 5) + (sin > 0.35 ? 10 : sin < -0.35 ? -2 : 4);
      const name = svg("text", { x, y, class: "node-label", "text-anchor": anchor });
      name.textContent = node.name;
      group.append(name);
      const width = 7.5 * String(node.name).length;
      grow(anchor === "end" ? x - width : anchor === "start" ? x : x - width / 2, y - 14);
      grow(anchor === "start" ? x + width : anchor === "end" ? x : x + width / 2, y + 6);
      if (node.ring !== 0) {
        group.setAttribute("tabindex", "0");
        group.setAttribute("role", "button");
        group.setAttribute("aria-label", `${node.name} (${node.type}): put in the middle`);
        const recentre = () => pick(Number(node.id));
        group.addEventListener("click", recentre);
        group.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            recentre();
          }
        });
      }
      drawing.append(group);
    }
    const pad = 12;
    const width = bounds.right - bounds.left + 2 * pad;
    const height = bounds.bottom - bounds.top + 2 * pad;
    drawing.setAttribute("viewBox", `${bounds.left - pad} ${bounds.top - pad} ${width} ${height}`);
    // Never drawn larger than life: a small graph stays small instead of growing huge labels.
    drawing.style.maxWidth = `${Math.ceil(width)}px`;
    box.append(drawing);
    return edges.length
      ? `${data.centre.name} (${data.centre.type}) and what it is related to. ` +
        "Choose a name to put it in the middle."
      : `${data.centre.name} (${data.centre.type}) is related to nothing yet.`;
  }

  return { map, graph };
})();
