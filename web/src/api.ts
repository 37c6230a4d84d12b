// The inspector's JSON API (server/inspector/handler.go), under /ui/api/.

export interface Component { name: string; tokens: number }
export interface Budget {
  window: number; reserved: number; available: number; used: number; calibrated_used: number;
  utilization: number; status: string; overhead: number; warning: number; critical: number;
  components: Component[] | null;
}
export interface Step {
  component: string; action: string; asked: number; claimed: number; freed: number;
  duration_ms: number; log?: string; discarded?: string;
}
export interface Compaction {
  reason: string; decision?: string; target: number; before: number; after: number;
  deficit: number; freed: number; met: boolean; steps: Step[] | null;
}
export interface Cache {
  read: number; write: number; uncached: number; read_share: number; cost: number;
  unmanaged_cost: number; prefix_kept: boolean;
}
export interface Usage { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number }
export interface Turn {
  n: number; time: string; source: string; upstream?: string; endpoint?: string; model?: string;
  outcome: string; status?: number; duration_ms: number; action: string; budget: Budget;
  before_used: number; compaction?: Compaction; cache?: Cache; usage?: Usage; warnings?: string[];
  marked?: Record<string, number>; payload_bytes: number; has_payload: boolean;
}
export interface Shown {
  component: string; id?: string; role: string; kind?: string; mark?: string; omitted?: number;
  text: string; more?: number;
}
export interface Detail extends Turn { media_type?: string; payload?: string; messages?: Shown[]; texts?: Shown[] }
export interface SessionInfo {
  id: string; profile: string; upstream?: string; model?: string; first: string; last: string;
  turns: number; compactions: number; window: number; used: number; utilization: number; status: string;
}
export interface Original { id: string; role: string; kind: string; shown: string; position: number; tokens: number; text: string }
export interface Series { first: number; last: number; used: number[]; available: number[]; compacted: number[] }

export interface Block {
  scope: string; label: string; description?: string; value: string; size: number; limit: number;
  unit: string; read_only: boolean; version: number;
}

export interface CheckpointInfo {
  version: number; time: string; agent?: string; used: number; window: number; available: number;
  components: Component[]; messages: number; payload_id?: number; payload_tag?: string;
}
export interface CheckpointView extends CheckpointInfo {
  system_prompt?: string; instructions?: string; input?: string; total: number; from: number; history: Original[];
}

export class Unauthorized extends Error {}

async function get<T>(path: string): Promise<T> {
  const res = await fetch("/ui/api/" + path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (res.status === 401) throw new Unauthorized("log in");
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error ?? msg; } catch { /* not JSON */ }
    throw new Error(msg);
  }
  return res.json() as Promise<T>;
}

const enc = encodeURIComponent;

export const api = {
  whoami: () => get<{ ok: boolean }>("whoami"),
  sessions: (q: URLSearchParams) => get<{ sessions: SessionInfo[]; total: number; offset: number }>("sessions?" + q.toString()),
  session: (id: string) => get<SessionInfo>("sessions/" + enc(id)),
  turns: (id: string, from: number, limit: number) =>
    get<{ turns: Turn[]; first: number; last: number }>(`sessions/${enc(id)}/turns?from=${from}&limit=${limit}`),
  series: (id: string) => get<Series>(`sessions/${enc(id)}/series`),
  turn: (id: string, n: number) => get<Detail>(`sessions/${enc(id)}/turns/${n}`),
  memory: (id: string) => get<{ blocks: Block[] }>(`sessions/${enc(id)}/memory`),
  checkpoints: (id: string) => get<{ checkpoints: CheckpointInfo[]; version: number }>(`sessions/${enc(id)}/checkpoints`),
  checkpoint: (id: string, version: number, from: number, limit: number) =>
    get<CheckpointView>(`sessions/${enc(id)}/checkpoints/${version}?from=${from}&limit=${limit}`),
  original: (id: string, mid: string) => get<Original>(`sessions/${enc(id)}/messages/${enc(mid)}`),
};

// Feed is a stream of live turns: pause closes it, resume opens it again
// from the last event taken (no turn recorded meanwhile lost, none twice).
export interface Feed { close(): void; pause(): void; resume(): void; paused(): boolean }

// events follows new turns (of one session, or of all): server-sent
// events of type "turn", each numbered (its id). The stream resumes from
// the last number taken when it reconnects (the browser's reconnection
// sends it, a stream opened again names it); a "reset" says turns were
// missed: onReset should reload what the view shows.
export function events(session: string | null, onTurn: (session: string, t: Turn) => void, onState: (live: boolean) => void,
  onReset: () => void): Feed {
  let last = "";
  let es: EventSource | null = null;
  let retry = 0;
  const open = () => {
    const q = new URLSearchParams();
    if (session) q.set("session", session);
    if (last) q.set("after", last);
    const src = new EventSource("/ui/api/events?" + q.toString(), { withCredentials: true });
    es = src;
    src.addEventListener("open", () => onState(true));
    src.addEventListener("error", () => {
      onState(false);
      if (src.readyState === EventSource.CLOSED && es === src) { // the browser gave up: open it again, from last
        es = null;
        retry = window.setTimeout(open, 2000);
      }
    });
    src.addEventListener("turn", (e) => {
      const m = e as MessageEvent;
      last = m.lastEventId || last;
      const ev = JSON.parse(m.data) as { session: string; turn: Turn };
      onTurn(ev.session, ev.turn);
    });
    src.addEventListener("reset", (e) => {
      last = (e as MessageEvent).lastEventId || last;
      onReset();
    });
  };
  const stop = () => {
    window.clearTimeout(retry);
    es?.close();
    es = null;
    onState(false);
  };
  open();
  return { close: stop, pause: stop, resume: () => { if (!es) open(); }, paused: () => es === null };
}
