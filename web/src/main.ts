import "./style.css";
import { diffLines } from "diff";
import { api, events, Unauthorized, type Feed, type Block, type CheckpointInfo, type CheckpointView, type Detail, type SessionInfo, type Shown, type Turn } from "./api";

// h makes an element: h("div", {class: "x"}, child, "text").
type Child = Node | string | number | null | undefined | false;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | number | boolean | ((e: Event) => void)> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v as EventListener);
    else if (v === true) el.setAttribute(k, "");
    else if (v !== false) el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}
const SVG = "http://www.w3.org/2000/svg";
function s(tag: string, attrs: Record<string, string | number>): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

const app = document.getElementById("app")!;
const liveDot = document.getElementById("live")!;
let feed: Feed | null = null;
const setLive = (on: boolean) => {
  liveDot.classList.toggle("on", on);
  liveDot.classList.toggle("paused", feed?.paused() ?? false);
  liveDot.title = feed?.paused() ? "live updates paused: click to resume from the last turn shown" : "live updates: click to pause";
};
// The live dot pauses the view's live updates and resumes them.
liveDot.addEventListener("click", () => {
  if (!feed) return;
  if (feed.paused()) feed.resume(); else feed.pause();
  setLive(false);
});

const fmt = new Intl.NumberFormat("en");
const n = (x: number) => fmt.format(x);
const pct = (x: number) => (x * 100).toFixed(1) + " %";
const when = (t: string) => new Date(t).toLocaleString();

// Colours of components, the same name the same colour everywhere.
const palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
const colours = new Map<string, string>();
function colour(name: string): string {
  if (!colours.has(name)) colours.set(name, palette[colours.size % palette.length]);
  return colours.get(name)!;
}

function route() {
  feed?.close();
  feed = null;
  const hash = location.hash.replace(/^#/, "");
  const m = hash.match(/^\/s\/([^/?]+)(?:\/t\/(\d+))?/);
  const run = m ? sessionView(decodeURIComponent(m[1]), m[2] ? Number(m[2]) : 0) : listView();
  run.catch(fail);
}

function fail(err: unknown) {
  if (err instanceof Unauthorized) return loginView();
  app.replaceChildren(h("p", { class: "error" }, String(err instanceof Error ? err.message : err)));
}

function loginView() {
  const failed = new URLSearchParams(location.search).get("login") === "failed";
  app.replaceChildren(
    h("form", { method: "post", action: "/ui/login", class: "login", "data-testid": "login" },
      h("h2", {}, "Log in"),
      h("p", {}, "The inspector shows what this server's sessions sent. Give the server's token."),
      failed ? h("p", { class: "error" }, "Wrong token.") : null,
      h("input", { type: "password", name: "token", autocomplete: "current-password", placeholder: "token", required: true }),
      h("button", { type: "submit" }, "Log in")));
}

// ---- the session list ----

const listState = { q: "", profile: "", upstream: "", since: "", until: "", offset: 0 };
const pageSize = 100;

async function listView() {
  const form = h("form", { class: "filters", "data-testid": "filters" });
  const field = (name: keyof typeof listState, label: string, type = "search") =>
    h("label", {}, label, h("input", { name, type, value: String(listState[name]) }));
  form.append(field("q", "search"), field("profile", "profile"), field("upstream", "upstream"),
    field("since", "since", "datetime-local"), field("until", "until", "datetime-local"));
  const table = h("div", { "data-testid": "sessions" });
  const pager = h("div", { class: "pager" });
  app.replaceChildren(h("h2", {}, "Sessions"), form, table, pager);
  const load = async () => {
    const q = new URLSearchParams();
    if (listState.q) q.set("q", listState.q);
    if (listState.profile) q.set("profile", listState.profile);
    if (listState.upstream) q.set("upstream", listState.upstream);
    if (listState.since) q.set("since", new Date(listState.since).toISOString().replace(/\.\d+Z$/, "Z"));
    if (listState.until) q.set("until", new Date(listState.until).toISOString().replace(/\.\d+Z$/, "Z"));
    q.set("offset", String(listState.offset));
    q.set("limit", String(pageSize));
    const res = await api.sessions(q);
    table.replaceChildren(sessionTable(res.sessions));
    pager.replaceChildren(
      h("button", { disabled: listState.offset === 0, onclick: () => { listState.offset -= pageSize; load().catch(fail); } }, "‹ newer"),
      ` ${res.total === 0 ? 0 : listState.offset + 1}–${listState.offset + res.sessions.length} of ${res.total} `,
      h("button", { disabled: listState.offset + pageSize >= res.total, onclick: () => { listState.offset += pageSize; load().catch(fail); } }, "older ›"));
  };
  form.addEventListener("input", (e) => {
    const t = e.target as HTMLInputElement;
    (listState as Record<string, string | number>)[t.name] = t.value;
    listState.offset = 0;
    load().catch(fail);
  });
  form.addEventListener("submit", (e) => e.preventDefault());
  await load();
  let pending = 0;
  const later = () => {
    if (!pending) pending = window.setTimeout(() => { pending = 0; load().catch(fail); }, 300);
  };
  feed = events(null, later, setLive, later);
}

function sessionTable(list: SessionInfo[]) {
  if (list.length === 0) return h("p", { class: "muted" }, "No sessions match (the inspector shows the sessions that prepared a turn since this server started).");
  return h("table", { class: "grid" },
    h("thead", {}, h("tr", {}, ...["session", "profile", "upstream", "model", "turns", "compactions", "last window use", "last turn"].map((c) => h("th", {}, c)))),
    h("tbody", {}, ...list.map((x) => h("tr", { "data-session": x.id },
      h("td", {}, h("a", { href: "#/s/" + encodeURIComponent(x.id) }, x.id)),
      h("td", {}, x.profile), h("td", {}, x.upstream ?? ""), h("td", {}, x.model ?? ""),
      h("td", { class: "num" }, n(x.turns)), h("td", { class: "num" }, n(x.compactions)),
      h("td", { class: "num " + x.status }, `${n(x.used)} / ${n(x.window)} (${pct(x.utilization)})`),
      h("td", {}, when(x.last))))));
}

// ---- one session ----

const turnPage = 200;

async function sessionView(id: string, selected: number) {
  const info = await api.session(id);
  const head = h("div", { class: "summary", "data-testid": "summary" });
  const overview = h("div", { class: "overview" });
  const memory = h("div", { "data-testid": "memory" });
  const checkpoints = h("div", { "data-testid": "checkpoints" });
  const chartBox = h("div", { class: "chart", "data-testid": "chart" });
  const pager = h("div", { class: "pager" });
  const detail = h("section", { class: "detail", "data-testid": "detail" });
  app.replaceChildren(h("p", {}, h("a", { href: "#/" }, "‹ sessions")), head, memory, checkpoints, overview, pager, chartBox, detail);
  let checkpointsOpen = false;
  const loadCheckpoints = async () => {
    try {
      const res = await api.checkpoints(id);
      const open = checkpoints.querySelector("details")?.open ?? checkpointsOpen;
      const state = checkpoints.querySelector("[data-testid=checkpoint-state]");
      checkpoints.replaceChildren(res.checkpoints.length ? checkpointList(id, res.checkpoints, res.version, open, (o) => { checkpointsOpen = o; }) : "");
      if (state) checkpoints.querySelector("details")?.append(state); // the state shown stays
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      checkpoints.replaceChildren(); // the store keeps no checkpoints
    }
  };
  const loadMemory = async () => {
    try {
      const { blocks } = await api.memory(id);
      memory.replaceChildren(blocks.length ? memoryBlocks(blocks) : "");
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      memory.replaceChildren(); // no memory blocks served for this session
    }
  };
  let last = info.turns;
  let first = 1;
  let from = selected ? Math.max(1, selected - turnPage + 1) : Math.max(1, info.turns - turnPage + 1);
  let shown: Turn[] = [];
  let current = selected;
  const summary = (x: SessionInfo) => head.replaceChildren(
    h("h2", {}, x.id),
    h("p", {}, `profile ${x.profile}`, x.upstream ? ` · upstream ${x.upstream}` : "", x.model ? ` · model ${x.model}` : "",
      ` · `, h("span", { "data-testid": "turn-count" }, `${n(x.turns)} turns`), ` · ${n(x.compactions)} compactions · since ${when(x.first)}`));
  summary(info);
  const loadPage = async () => {
    const res = await api.turns(id, from, turnPage);
    first = res.first; last = res.last;
    shown = res.turns;
    chartBox.replaceChildren(chart(shown, current, (t) => select(t)));
    pager.replaceChildren(
      h("button", { disabled: from <= first, onclick: () => { from = Math.max(first, from - turnPage); loadPage().catch(fail); } }, "‹ earlier"),
      ` turns ${shown.length ? shown[0].n : 0}–${shown.length ? shown[shown.length - 1].n : 0} of ${first}–${last} `,
      h("button", { disabled: from + turnPage > last, onclick: () => { from = Math.min(last - turnPage + 1, from + turnPage); loadPage().catch(fail); } }, "later ›"));
  };
  const loadOverview = async () => {
    const sr = await api.series(id);
    overview.replaceChildren(overviewStrip(sr.first, sr.used, sr.available, sr.compacted, (t) => {
      from = Math.max(sr.first, t - Math.floor(turnPage / 2));
      loadPage().catch(fail);
    }));
  };
  const select = async (n: number) => {
    current = n;
    history.replaceState(null, "", `#/s/${encodeURIComponent(id)}/t/${n}`);
    chartBox.querySelectorAll(".col.sel").forEach((c) => c.classList.remove("sel"));
    chartBox.querySelector(`[data-turn="${n}"]`)?.classList.add("sel");
    const d = await api.turn(id, n);
    detail.replaceChildren(...turnDetail(id, d, last));
  };
  await Promise.all([loadPage(), loadOverview(), loadMemory(), loadCheckpoints()]);
  await select(current || last);
  let pending = 0;
  const refresh = () => {
    if (!pending) pending = window.setTimeout(() => { pending = 0; loadOverview().catch(fail); loadMemory().catch(fail); loadCheckpoints().catch(fail); }, 500);
  };
  // reload takes the session's turns afresh: after turns were missed.
  const reload = async () => {
    const x = await api.session(id);
    const following = from + turnPage > last;
    Object.assign(info, x);
    summary(info);
    last = x.turns;
    if (following) {
      from = Math.max(first, last - turnPage + 1);
      await loadPage();
    }
    refresh();
  };
  feed = events(id, (_s, t) => {
    if (t.n <= last) return; // shown already
    if (t.n > last + 1) { // turns between: take them from the API
      reload().catch(fail);
      return;
    }
    info.turns = t.n; info.last = t.time;
    if (t.compaction) info.compactions++;
    summary(info);
    const following = from + turnPage > last; // showing the latest page
    last = t.n;
    if (following) {
      shown.push(t);
      if (shown.length > turnPage) { shown.shift(); from++; }
      chartBox.replaceChildren(chart(shown, current, (x) => select(x)));
    }
    refresh();
  }, setLive, () => reload().catch(fail));
}

// memoryBlocks lists the memory blocks the session's turns see.
function memoryBlocks(blocks: Block[]) {
  return h("details", { class: "memory" },
    h("summary", {}, `Memory blocks (${blocks.length})`),
    h("table", { class: "grid small" },
      h("thead", {}, h("tr", {}, ...["scope", "label", "size", "version", "value"].map((c) => h("th", {}, c)))),
      h("tbody", {}, ...blocks.map((b) => h("tr", { "data-block": b.label },
        h("td", {}, b.scope), h("td", {}, b.label + (b.read_only ? " (read-only)" : ""), b.description ? h("div", { class: "muted" }, b.description) : null),
        h("td", { class: "num" }, `${n(b.size)} / ${n(b.limit)} ${b.unit}`), h("td", { class: "num" }, b.version),
        h("td", {}, h("pre", {}, b.value)))))));
}

// checkpointList lists the session's checkpoints (the stored versions
// that ended its turns); a row shows the session as it stood there, with
// the commands that fork a new session from it or rewind this one to it.
function checkpointList(session: string, cps: CheckpointInfo[], version: number, open: boolean, toggled: (open: boolean) => void) {
  const state = h("div", { class: "checkpoint-state", "data-testid": "checkpoint-state" });
  const rows = [...cps].reverse().map((c) => h("tr", { "data-version": c.version },
    h("td", { class: "num" }, c.version), h("td", {}, when(c.time)), h("td", {}, c.agent ?? ""),
    h("td", { class: "num" }, `${n(c.used)} / ${n(c.window)}`), h("td", { class: "num" }, n(c.messages)),
    h("td", {}, h("button", { class: "show-checkpoint", onclick: () => showCheckpoint(session, c.version, 0, state).catch(fail) }, "state"))));
  const d = h("details", { class: "checkpoints", open },
    h("summary", {}, `Checkpoints (${cps.length}; the session is at version ${version})`),
    h("table", { class: "grid small" },
      h("thead", {}, h("tr", {}, ...["version", "saved", "agent", "tokens used / window", "messages", ""].map((x) => h("th", {}, x)))),
      h("tbody", {}, ...rows)),
    state);
  d.addEventListener("toggle", () => toggled(d.open));
  return d;
}

const checkpointPage = 100;

// showCheckpoint shows the session as it stood at version: its texts and
// a page of its history's messages, as given and as each was shown.
async function showCheckpoint(session: string, version: number, from: number, box: HTMLElement) {
  const v: CheckpointView = await api.checkpoint(session, version, from, checkpointPage);
  const q = (s: string) => (/^[A-Za-z0-9._:@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const pager = h("div", { class: "pager" },
    h("button", { disabled: from === 0, onclick: () => showCheckpoint(session, version, Math.max(0, from - checkpointPage), box).catch(fail) }, "‹ earlier"),
    ` messages ${v.total ? from + 1 : 0}–${from + v.history.length} of ${n(v.total)} `,
    h("button", { disabled: from + checkpointPage >= v.total, onclick: () => showCheckpoint(session, version, from + checkpointPage, box).catch(fail) }, "later ›"));
  box.replaceChildren(...[
    h("h4", { "data-testid": "checkpoint-title" }, `At version ${v.version}`),
    h("p", {}, `saved ${when(v.time)}${v.agent ? " · agent " + v.agent : ""} · ${n(v.used)} of ${n(v.available || v.window)} tokens · ${n(v.total)} messages` +
      (v.payload_tag ? ` · payload ${v.payload_tag}` : "")),
    h("p", { class: "muted" }, "Fork a new session from here, or take this session back here (what came after is kept as a branch session):"),
    h("pre", { class: "commands", "data-testid": "checkpoint-commands" },
      `ctxhost checkpoints fork ${q(session)} ${v.version} NEW_SESSION\nctxhost checkpoints rewind ${q(session)} ${v.version}`),
    v.system_prompt ? h("details", {}, h("summary", {}, "system prompt"), h("pre", {}, v.system_prompt)) : null,
    v.instructions ? h("details", {}, h("summary", {}, "instructions"), h("pre", {}, v.instructions)) : null,
    pager,
    h("div", { class: "messages", "data-testid": "checkpoint-messages" }, ...v.history.map((m) =>
      h("div", { class: "msg" + (m.shown && m.shown !== "whole" ? " mark-" + m.shown : ""), "data-id": m.id },
        h("div", { class: "meta" }, h("b", {}, m.role), ` #${m.position + 1}`, m.kind ? ` · ${m.kind}` : "", ` · ${m.id}`, ` · ${n(m.tokens)} tokens`,
          m.shown && m.shown !== "whole" ? h("span", { class: "badge" }, "shown " + m.shown) : null),
        h("pre", {}, m.text)))),
  ].filter((x) => x !== null) as Node[]);
}

// overviewStrip draws every held turn's window use in one canvas strip;
// a click shows the turns around the place clicked.
function overviewStrip(first: number, used: number[], available: number[], compacted: number[], go: (turn: number) => void) {
  const w = 1000, hgt = 40;
  const c = h("canvas", { width: w, height: hgt, class: "strip", title: "every turn's window use; click to go there" });
  const g = c.getContext("2d");
  if (g && used.length) {
    const per = w / used.length;
    for (let i = 0; i < used.length; i++) {
      const u = available[i] ? used[i] / available[i] : 0;
      g.fillStyle = u >= 0.9 ? "#e15759" : u >= 0.7 ? "#edc948" : "#4e79a7";
      const bar = Math.min(1, u) * hgt;
      g.fillRect(i * per, hgt - bar, Math.max(1, per), bar);
    }
    g.fillStyle = "#000";
    for (const t of compacted) g.fillRect((t - first) * per, 0, Math.max(1, per), 4);
  }
  c.addEventListener("click", (e) => {
    const r = c.getBoundingClientRect();
    go(first + Math.floor(((e.clientX - r.left) / r.width) * used.length));
  });
  return h("div", {}, c, h("div", { class: "muted" }, `${n(used.length)} turns held · black ticks: compactions`));
}

// chart is a column per turn: its components' tokens stacked against the
// window, with the reserve and the warning and critical lines.
function chart(turns: Turn[], selected: number, pick: (n: number) => void) {
  const hgt = 220, colW = Math.max(3, Math.min(24, Math.floor(1000 / Math.max(1, turns.length))));
  const width = Math.max(200, turns.length * colW);
  const top = Math.max(1, ...turns.map((t) => Math.max(t.budget.window, t.budget.used)));
  const y = (tokens: number) => hgt - (tokens / top) * hgt;
  const svg = s("svg", { width, height: hgt + 4, viewBox: `0 0 ${width} ${hgt + 4}`, class: "bars", role: "img" }) as SVGSVGElement;
  turns.forEach((t, i) => {
    const g = s("g", { class: "col" + (t.n === selected ? " sel" : ""), "data-turn": t.n }) as SVGGElement;
    const x = i * colW;
    g.append(s("rect", { x, y: 0, width: colW, height: hgt, class: "hit" }));
    const b = t.budget;
    g.append(s("rect", { x, y: y(b.window), width: colW - 1, height: (b.reserved / top) * hgt, class: "reserve" }));
    let acc = 0;
    const parts = [...(b.components ?? []), { name: "framing", tokens: b.overhead }];
    for (const c of parts) {
      if (c.tokens <= 0) continue;
      const r = s("rect", { x, y: y(acc + c.tokens), width: colW - 1, height: (c.tokens / top) * hgt, fill: colour(c.name) });
      r.append(Object.assign(document.createElementNS(SVG, "title"), { textContent: `turn ${t.n} · ${c.name}: ${n(c.tokens)} tokens` }));
      g.append(r);
      acc += c.tokens;
    }
    const avail = b.available || b.window;
    g.append(s("line", { x1: x, x2: x + colW, y1: y(avail * b.warning), y2: y(avail * b.warning), class: "warn" }));
    g.append(s("line", { x1: x, x2: x + colW, y1: y(avail * b.critical), y2: y(avail * b.critical), class: "crit" }));
    if (t.compaction) g.append(s("circle", { cx: x + colW / 2, cy: 5, r: Math.min(4, colW / 2), class: "compacted" }));
    if (t.outcome !== "ok") g.append(s("rect", { x, y: hgt, width: colW - 1, height: 4, class: "failed" }));
    g.addEventListener("click", () => pick(t.n));
    svg.append(g);
  });
  const names = new Set<string>();
  turns.forEach((t) => (t.budget.components ?? []).forEach((c) => names.add(c.name)));
  names.add("framing");
  const legend = h("div", { class: "legend" }, ...[...names].map((nm) => h("span", {}, h("i", { style: `background:${colour(nm)}` }), nm)),
    h("span", {}, h("i", { class: "reserve" }), "reserved for the answer"), h("span", {}, h("i", { class: "warn" }), "warning"),
    h("span", {}, h("i", { class: "crit" }), "critical"), h("span", {}, h("i", { class: "dot" }), "compacted"));
  return h("div", {}, h("div", { class: "scroll" }, svg), legend);
}

function turnDetail(session: string, d: Detail, last: number): Node[] {
  const b = d.budget;
  const out: Node[] = [];
  out.push(h("h3", { "data-testid": "turn-title" }, `Turn ${d.n}`),
    h("p", {}, `${when(d.time)} · ${d.source}${d.endpoint ? " " + d.endpoint : ""}${d.model ? " · " + d.model : ""} · ${d.outcome}${d.status ? " " + d.status : ""} · ${d.duration_ms.toFixed(1)} ms · action ${d.action}`));
  out.push(h("table", { class: "grid small", "data-testid": "budget" },
    h("thead", {}, h("tr", {}, h("th", {}, "component"), h("th", {}, "tokens"), h("th", {}, "share of the window"))),
    h("tbody", {}, ...[...(b.components ?? []), { name: "framing", tokens: b.overhead }].map((c) =>
      h("tr", {}, h("td", {}, h("i", { class: "sw", style: `background:${colour(c.name)}` }), c.name), h("td", { class: "num" }, n(c.tokens)), h("td", { class: "num" }, pct(c.tokens / (b.window || 1))))),
      h("tr", { class: "total" }, h("td", {}, "used"), h("td", { class: "num" }, n(b.used)), h("td", { class: "num" }, `${pct(b.utilization)} of ${n(b.available)} available (window ${n(b.window)}, ${n(b.reserved)} reserved)`)))));
  if (d.warnings?.length) out.push(h("ul", { class: "warnings" }, ...d.warnings.map((w) => h("li", {}, w))));
  if (d.compaction) {
    const c = d.compaction;
    out.push(h("div", { class: "compaction", "data-testid": "compaction" },
      h("h4", {}, `Compaction: ${c.reason}`),
      c.decision ? h("p", {}, c.decision) : null,
      h("p", {}, `${n(c.before)} → ${n(c.after)} tokens, needed ${n(c.deficit)}, freed ${n(c.freed)} (target ${n(c.target)}${c.met ? ", met" : ", NOT met"})`),
      h("table", { class: "grid small" },
        h("thead", {}, h("tr", {}, ...["component", "action", "asked", "claimed", "freed", "ms", "note"].map((x) => h("th", {}, x)))),
        h("tbody", {}, ...(c.steps ?? []).map((st) => h("tr", {},
          h("td", {}, st.component), h("td", {}, st.action), h("td", { class: "num" }, n(st.asked)), h("td", { class: "num" }, n(st.claimed)),
          h("td", { class: "num" }, n(st.freed)), h("td", { class: "num" }, st.duration_ms.toFixed(1)), h("td", {}, st.discarded ? "discarded: " + st.discarded : st.log ?? "")))))));
  }
  const cache = d.cache;
  const usage = d.usage;
  out.push(h("p", { "data-testid": "cache" },
    cache ? `cache: ${n(cache.read)} read, ${n(cache.write)} written, ${n(cache.uncached)} uncached (read share ${pct(cache.read_share)}) · cost ${cache.cost.toFixed(2)} units (unmanaged history ${cache.unmanaged_cost.toFixed(2)})${cache.prefix_kept ? " · prefix kept" : " · prefix changed"}` : "cache: no price model applies",
    usage ? ` · upstream usage: ${n(usage.input_tokens)} in (${n(usage.cache_read_tokens)} cached), ${n(usage.output_tokens)} out` : ""));
  out.push(diffPicker(session, d.n, last));
  if (!d.has_payload) {
    out.push(h("p", { class: "muted" }, "This turn's payload is no longer held (the inspector keeps the payloads of each session's latest turns)."));
    return out;
  }
  out.push(h("h4", {}, "Payload as sent"), h("p", { class: "muted" }, markSummary(d)));
  const msgs = h("div", { class: "messages", "data-testid": "messages" });
  for (const t of d.texts ?? []) msgs.append(messageBox(session, t));
  for (const m of d.messages ?? []) msgs.append(messageBox(session, m));
  out.push(msgs);
  const raw = h("pre", { class: "raw", hidden: true, "data-testid": "raw" }, pretty(d.payload ?? ""));
  out.push(h("button", { onclick: () => { raw.hidden = !raw.hidden; } }, `raw payload (${n(d.payload_bytes)} bytes, ${d.media_type ?? ""})`), raw);
  return out;
}

function markSummary(d: Detail) {
  const m = d.marked ?? {};
  const parts = Object.entries(m).map(([k, v]) => `${v} ${k}`);
  return parts.length ? "marked: " + parts.join(", ") + ". Click a marked message to see its original." : "every message shown whole";
}

function messageBox(session: string, m: Shown) {
  const box = h("div", { class: "msg" + (m.mark ? " mark-" + m.mark : ""), "data-mark": m.mark ?? "", "data-id": m.id ?? "" },
    h("div", { class: "meta" }, h("b", {}, m.role), ` ${m.component}`, m.kind ? ` · ${m.kind}` : "", m.id ? ` · ${m.id}` : "",
      m.mark ? h("span", { class: "badge" }, m.mark + (m.omitted ? ` ${m.omitted}` : "")) : null),
    h("pre", {}, m.text + (m.more ? `\n… ${n(m.more)} more bytes` : "")));
  if (m.mark && m.id && m.mark !== "omitted") {
    const orig = h("div", { class: "original", hidden: true, "data-testid": "original" });
    box.append(h("button", { class: "show-original", onclick: async () => {
      if (orig.hidden && !orig.childElementCount) {
        try {
          const o = await api.original(session, m.id!);
          orig.replaceChildren(h("div", { class: "meta" }, `original · ${o.kind} · ${n(o.tokens)} tokens · now shown ${o.shown}`), h("pre", {}, o.text));
        } catch (e) { orig.replaceChildren(h("p", { class: "error" }, String(e))); }
      }
      orig.hidden = !orig.hidden;
    } }, "original"), orig);
  }
  return box;
}

function pretty(payload: string) {
  try { return JSON.stringify(JSON.parse(payload), null, 2); } catch { return payload; }
}

// diffPicker compares this turn's payload with another's.
function diffPicker(session: string, n0: number, last: number) {
  const other = h("input", { type: "number", min: 1, max: last, value: Math.max(1, n0 - 1), "data-testid": "diff-with" });
  const out = h("div", { class: "diff", "data-testid": "diff" });
  const run = async () => {
    const [a, b] = await Promise.all([api.turn(session, Number(other.value)), api.turn(session, n0)]);
    if (!a.has_payload || !b.has_payload) { out.replaceChildren(h("p", { class: "muted" }, "One of the two payloads is no longer held.")); return; }
    out.replaceChildren(diffView(pretty(a.payload ?? ""), pretty(b.payload ?? ""), a.n, b.n));
  };
  return h("div", { class: "diffbox" }, h("h4", {}, "Diff"), h("label", {}, `turn `, other, ` → turn ${n0} `),
    h("button", { onclick: () => run().catch(fail), "data-testid": "diff-run" }, "compare"), out);
}

// diffView shows the changed lines with three lines of context.
function diffView(a: string, b: string, na: number, nb: number) {
  const parts = diffLines(a, b);
  const pre = h("pre", { class: "difftext" });
  let added = 0, removed = 0;
  parts.forEach((p, i) => {
    const lines = p.value.replace(/\n$/, "").split("\n");
    if (p.added || p.removed) {
      (p.added ? (added += lines.length) : (removed += lines.length));
      pre.append(h("span", { class: p.added ? "add" : "del" }, lines.map((l) => (p.added ? "+ " : "- ") + l).join("\n") + "\n"));
      return;
    }
    const keep = lines.length > 8 ? [...lines.slice(0, i === 0 ? 0 : 3), `… ${lines.length - (i === 0 ? 0 : 3) - (i === parts.length - 1 ? 0 : 3)} unchanged lines …`, ...lines.slice(i === parts.length - 1 ? lines.length : lines.length - 3)] : lines;
    pre.append(h("span", { class: "same" }, keep.map((l) => "  " + l).join("\n") + "\n"));
  });
  return h("div", {}, h("p", { "data-testid": "diff-stat" }, `turn ${na} → turn ${nb}: ${added} lines added, ${removed} removed`), pre);
}

async function start() {
  try {
    await api.whoami();
  } catch (e) {
    return fail(e);
  }
  window.addEventListener("hashchange", route);
  route();
}
start();
