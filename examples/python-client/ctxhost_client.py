"""A minimal client of `ctxhost serve`, using only Python's standard library.

It speaks the service's JSON protocol: every call is an HTTP POST of a JSON
object to /ctxhost.service.v1.ContextService/<Method>. Field names may be
written in snake_case (as in the .proto) or lowerCamelCase; answers use
lowerCamelCase, and numbers of 64 bits (sequences, token counts) arrive as
JSON strings.

    c = Client("http://127.0.0.1:7400", token=os.environ.get("CTXHOST_TOKEN"))
    c.create_session("run-42")
    c.append("run-42", {"role": "user", "content": "fix the failing test"})
    turn = c.prepare("run-42")          # turn["payload"] goes to the model
    c.report_usage("run-42", 1234, 56)
"""

import http.client
import json
import select
import ssl
import threading
import urllib.parse

SERVICE = "ctxhost.service.v1.ContextService"

# Calls that change nothing: sent again on a fresh connection when a kept
# connection turns out to be closed. A write is sent again only when it
# carries an idempotency key, since the service may have applied it.
READS = frozenset({"GetSession", "ListSessions", "Inspect", "ExportState", "ListEvents", "Health", "Ready",
                   "ListMemoryBlocks", "GetMemoryBlock", "ListMemoryBlockVersions", "ListCheckpoints",
                   "GetCheckpoint"})


def _keyed(body):
    """Whether a call carries an idempotency key (in its write options, or
    at the top as CreateSession has it), in either spelling."""
    for holder in (body, body.get("write") or {}):
        if holder.get("idempotency_key") or holder.get("idempotencyKey"):
            return True
    return False


class CtxhostError(Exception):
    """An error answer: HTTP status, Connect code (invalid_argument,
    not_found, aborted, unauthenticated, ...), message and, for a stale
    expected sequence, the session's current sequence."""

    def __init__(self, status, code, message, sequence=None):
        super().__init__("%s (HTTP %d): %s" % (code, status, message))
        self.status = status
        self.code = code
        self.message = message
        self.sequence = sequence


class Client:
    """Calls one ctxhost service.

    Each thread keeps one HTTP/1.1 connection open and sends its calls on
    it, so a call costs one round trip rather than a new connection. A
    connection the service has closed (it closes idle ones after two
    minutes) is noticed before the next call and opened again. Calls go
    straight to base_url: proxy settings in the environment are not used.
    """

    def __init__(self, base_url, token=None, timeout=30.0, ssl_context=None):
        url = urllib.parse.urlsplit(base_url.rstrip("/"))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError("base_url %r: want http://host:port or https://host:port" % base_url)
        self.base_url = base_url.rstrip("/")
        self._scheme, self._host, self._port = url.scheme, url.hostname, url.port
        self._prefix = url.path + "/" + SERVICE + "/"
        self._ssl = ssl_context or (ssl.create_default_context() if url.scheme == "https" else None)
        self.token = token
        self.timeout = timeout
        self._local = threading.local()
        # (session, agent) -> (payload_tag, payload, system, payload as
        # UTF-8 bytes or None): the last payload of each, so an unchanged
        # one need not be sent again, nor the part of a new one it holds.
        self._payloads = {}

    def close(self):
        """Closes this thread's connection (the next call opens one)."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _connection(self):
        """This thread's connection: the kept one unless the service has
        closed it (an idle kept connection that reads as ready holds
        nothing but its end), else a new one."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None:
            try:
                ready, _, _ = select.select([conn.sock], [], [], 0)
            except (OSError, ValueError):
                ready = True
            if not ready:
                return conn, True
            conn.close()
        if self._scheme == "https":
            conn = http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout, context=self._ssl)
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        self._local.conn = conn
        return conn, False

    def call(self, method, body):
        """Calls method with body (a dict) and returns the answer (a dict)."""
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        repeatable = method in READS or _keyed(body)
        while True:
            conn, kept = self._connection()
            try:
                conn.request("POST", self._prefix + method, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                # A kept connection closed while the call was on its way:
                # the service may or may not have applied a write.
                if kept and repeatable:
                    continue
                raise
            except BaseException:
                self.close()
                raise
            if resp.will_close:
                self.close()
            break
        if resp.status == 200:
            return json.loads(raw or b"{}")
        try:
            err = json.loads(raw)
        except ValueError:
            err = {"code": "unknown", "message": raw.decode("utf-8", "replace")}
        seq = resp.getheader("Ctxhost-Sequence")
        raise CtxhostError(resp.status, err.get("code", "unknown"), err.get("message", ""),
                           int(seq) if seq else None)

    @staticmethod
    def _write(expected_sequence, idempotency_key):
        w = {}
        if expected_sequence:
            w["expected_sequence"] = str(expected_sequence)
        if idempotency_key:
            w["idempotency_key"] = idempotency_key
        return w

    def create_session(self, session_id, profile="", agent="", groups=()):
        """Creates a session; agent and groups name the memory blocks it
        sees beyond its own (empty: the profile's)."""
        return self.call("CreateSession", {"session_id": session_id, "profile": profile,
                                           "agent": agent, "groups": list(groups)})

    def get_session(self, session_id):
        return self.call("GetSession", {"session_id": session_id})

    def append(self, session_id, *messages, expected_sequence=0, idempotency_key=""):
        """Appends messages (dicts: role, content, name, kind, ...); returns
        (sequence, ids)."""
        r = self.call("AppendMessages", {"session_id": session_id, "messages": list(messages),
                                         "write": self._write(expected_sequence, idempotency_key)})
        return int(r.get("sequence", 0)), r.get("ids", [])

    def set_input(self, session_id, text):
        r = self.call("SetText", {"session_id": session_id, "text": "TEXT_INPUT", "value": text})
        return int(r.get("sequence", 0))

    def apply(self, session_id, plugin, op, args):
        """Runs op on the session's plugin binding; returns its JSON result."""
        r = self.call("ApplyOp", {"session_id": session_id, "plugin": plugin, "op": op, "args": args})
        return r.get("result")

    def prepare(self, session_id, agent=""):
        """Builds the context of the next turn: payload, budget, components,
        compaction, action and warnings. The answer always holds the whole
        payload: when it is the one this client already holds for the
        session and agent, the service leaves it out (payloadUnchanged) and
        the held one is put back; when it starts with the held one's first
        bytes, the service sends only what follows them (payloadPrefix
        says how many) and the payload is completed from the held one."""
        return self._prepare({"session_id": session_id, "agent": agent})

    def turn(self, session_id, *messages, agent="", expected_sequence=0, idempotency_key=""):
        """An agent's turn in one call: messages (dicts, as append takes
        them) appended in order, then the context of the next turn
        prepared, both saved in one store write, so the turn costs one
        round trip and one sync where append then prepare cost two of
        each. The answer is prepare's (its payload completed from the held
        one likewise), with the stored ids of the messages (messageIds)
        and the session's new sequence; when a message is invalid or the
        turn fails, nothing of it is applied. With an idempotency key a
        retry is answered from the first call and applied once."""
        return self._prepare({"session_id": session_id, "agent": agent, "messages": list(messages),
                              "write": self._write(expected_sequence, idempotency_key)})

    def _prepare(self, body):
        """Sends a Prepare body, naming the payload held for its session and
        agent, and completes the answer's payload from the held one."""
        key = (body["session_id"], body.get("agent", ""))
        held = self._payloads.get(key)
        if held:
            body["known_payload_tag"] = held[0]
            body["accept_payload_suffix"] = True
        r = self.call("Prepare", body)
        tag = r.get("payloadTag", "")
        if r.get("payloadUnchanged"):
            if not held or held[0] != tag:
                raise CtxhostError(200, "internal", "the service left out a payload this client does not hold")
            r["payload"], r["system"] = held[1], held[2]
            return r
        raw = None
        prefix = int(r.get("payloadPrefix", 0))
        if prefix:
            if not held:
                raise CtxhostError(200, "internal", "the service sent the rest of a payload this client does not hold")
            raw = held[3] if held[3] is not None else held[1].encode("utf-8")
            if prefix > len(raw):
                del self._payloads[key]
                raise CtxhostError(200, "internal", "the service sent the rest of a payload after more bytes than this client holds")
            raw = raw[:prefix] + r.get("payload", "").encode("utf-8")
            r["payload"] = raw.decode("utf-8")
        if tag:
            self._payloads[key] = (tag, r.get("payload", ""), r.get("system", ""), raw)
        return r

    def delete_session(self, session_id):
        """Deletes the session; returns whether there was one."""
        for key in [k for k in self._payloads if k[0] == session_id]:
            del self._payloads[key]
        return bool(self.call("DeleteSession", {"session_id": session_id}).get("deleted"))

    def report_usage(self, session_id, prompt_tokens, completion_tokens):
        r = self.call("ReportUsage", {"session_id": session_id, "prompt_tokens": str(prompt_tokens),
                                      "completion_tokens": str(completion_tokens)})
        return int(r.get("sequence", 0))

    # Memory blocks: named, size-limited texts shared by the sessions of a
    # scope ("session:ID", "agent:NAME" or "group:NAME") and pinned in the
    # system text of every prepare of those sessions. Blocks are dicts:
    # scope, label, description, value, limit, unit ("chars" or "tokens"),
    # readOnly, version (a string: 64 bits), size.

    def memory_blocks(self, *scopes, session_id="", visible=False):
        """The current blocks of scopes, or of the scopes a session sees
        (visible: one per label, as its prepares show them)."""
        r = self.call("ListMemoryBlocks", {"scopes": list(scopes), "session_id": session_id, "visible": visible})
        return r.get("blocks", [])

    def memory_block(self, scope, label):
        return self.call("GetMemoryBlock", {"scope": scope, "label": label})

    def put_memory_block(self, scope, label, value, limit=0, unit="", description="", read_only=False,
                         expected_version=0, create_only=False):
        """Writes a whole block: over expected_version when given (409
        otherwise), only when new with create_only, else over whatever
        version it is at. A value over the limit is refused (HTTP 400
        naming the limit)."""
        block = {"scope": scope, "label": label, "value": value, "limit": limit, "unit": unit,
                 "description": description, "read_only": read_only}
        return self.call("PutMemoryBlock", {"block": block, "expected_version": str(expected_version),
                                            "create_only": create_only})

    def append_memory_block(self, scope, label, text, operator=True, expected_version=0):
        """Appends text to the block's value on a new line. operator False
        edits as the model's tools do: a read-only block refuses it."""
        return self.call("EditMemoryBlock", {"scope": scope, "label": label, "op": "append", "text": text,
                                             "operator": operator, "expected_version": str(expected_version)})

    def replace_in_memory_block(self, scope, label, old, new, operator=True, expected_version=0):
        """Replaces the one occurrence of old in the block's value by new."""
        return self.call("EditMemoryBlock", {"scope": scope, "label": label, "op": "replace", "old_text": old,
                                             "new_text": new, "operator": operator,
                                             "expected_version": str(expected_version)})

    def delete_memory_block(self, scope, label, expected_version=0):
        """Deletes the block (its versions are kept); returns the deleted
        version's number."""
        r = self.call("DeleteMemoryBlock", {"scope": scope, "label": label,
                                            "expected_version": str(expected_version)})
        return int(r.get("version", 0))

    def memory_block_versions(self, scope, label):
        """Every version of the block, oldest first (deleted ones marked)."""
        return self.call("ListMemoryBlockVersions", {"scope": scope, "label": label}).get("blocks", [])

    def set_membership(self, session_id, agent="", groups=()):
        """Names the agent and groups whose blocks the session sees."""
        return self.call("SetMembership", {"session_id": session_id, "agent": agent, "groups": list(groups)})

    # Checkpoints (a SQLite or PostgreSQL store): every acknowledged turn
    # is one, named by the sequence its save left the session at.
    # Checkpoints are dicts: sequence (a string), timeUnixMs, agent,
    # budget, components, payloadId, payloadTag, messages.

    def checkpoints(self, session_id):
        """The session's kept checkpoints, oldest first, and its current
        sequence: (checkpoints, sequence)."""
        r = self.call("ListCheckpoints", {"session_id": session_id})
        return r.get("checkpoints", []), int(r.get("sequence", 0))

    def checkpoint(self, session_id, sequence=0, from_=0, to=0, limit=0):
        """The session as it stood at sequence (0: now): checkpoint,
        systemPrompt, instructions, input, the history's entries (from_,
        to and limit select them as GetHistory does) and total. The live
        session is not touched."""
        return self.call("GetCheckpoint", {"session_id": session_id, "sequence": str(sequence),
                                           "from": from_, "to": to, "limit": limit})

    def fork(self, session_id, sequence, new_session_id):
        """Makes new_session_id as the session stood at sequence (0: now),
        with a copy of its own memory blocks; each goes on without the
        other. Returns (the checkpoint it stands on, the new session's
        info); a taken id is HTTP 409 already_exists."""
        r = self.call("ForkSession", {"session_id": session_id, "sequence": str(sequence),
                                      "new_session_id": new_session_id})
        return r.get("checkpoint", {}), r.get("session", {})

    def rewind(self, session_id, sequence, branch_session_id=""):
        """Takes the session back to its checkpoint at sequence; what came
        after is kept first as the session branch_session_id (empty:
        "ID:branch-N"). Returns the answer: the session's new sequence,
        the checkpoint rewound to, branchSessionId and branchSequence."""
        for key in [k for k in self._payloads if k[0] == session_id]:
            del self._payloads[key]
        return self.call("RewindSession", {"session_id": session_id, "sequence": str(sequence),
                                           "branch_session_id": branch_session_id})
