"""The ctxhost Python plugin SDK; see the package docstring and
docs/PROTOCOL.md for the wire contract it implements."""

import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import traceback
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import grpc

from . import plugin_pb2 as pb

# What the host and every plugin agree on (internal/wire in the Go code).
CORE_PROTOCOL_VERSION = 1  # go-plugin's own handshake version
PROTOCOL_VERSION = 1  # ctxhost.plugin.v1
MAGIC_COOKIE_KEY = "CTXHOST_PLUGIN_MAGIC_COOKIE"
MAGIC_COOKIE_VALUE = "5b0a1c4e-ctxhost-plugin-v1"
ENV_MAX_MESSAGE_BYTES = "CTXHOST_GRPC_MAX_MESSAGE_BYTES"
DEFAULT_MAX_MESSAGE_BYTES = 256 << 20
ERROR_DOMAIN = "ctxhost.plugin.v1"

# Capabilities; the SDK adds compact, state and prepared itself when the
# Session class has the matching methods. Declare volatile and
# prepared_on_change yourself.
CAP_COMPACT = "compact"
CAP_STATE = "state"
CAP_PREPARED = "prepared"
CAP_VOLATILE = "volatile"
# The Session condenses spans of a conversation's history: the SDK adds it
# when the Session class has a summarize method.
CAP_SUMMARIZE = "summarize"
# The Prepared hook changes nothing unless the session changed since it last
# ran (an apply, a compaction, a restore): the host calls it only then.
CAP_PREPARED_ON_CHANGE = "prepared_on_change"


class _PluginError(Exception):
    """An error the host understands: a gRPC code plus an ErrorInfo reason."""

    code = grpc.StatusCode.UNKNOWN
    reason = ""


class UnknownOp(_PluginError):
    """apply was called with an op the plugin does not accept."""

    code = grpc.StatusCode.UNIMPLEMENTED
    reason = "UNKNOWN_OP"

    def __init__(self, op: str):
        super().__init__('unknown op "%s"' % op)


class InvalidArgs(_PluginError):
    """The op's arguments (or the config) are malformed or invalid."""

    code = grpc.StatusCode.INVALID_ARGUMENT
    reason = "INVALID_ARGS"

    def __init__(self, why: str):
        super().__init__("invalid arguments: " + why)


class NotFound(_PluginError):
    """The op refers to something that does not exist."""

    code = grpc.StatusCode.NOT_FOUND
    reason = "NOT_FOUND"

    def __init__(self, why: str):
        super().__init__("not found: " + why)


@dataclass
class Op:
    """One op the plugin accepts through apply, with a one-line description."""

    name: str
    description: str


@dataclass
class ConfigField:
    """One attribute of the plugin's HCL config body. type is one of string,
    number, bool, list(string), map(string)."""

    name: str
    type: str
    required: bool = False
    description: str = ""
    default: Any = None


@dataclass
class PluginInfo:
    """What describe returns. priority (0..100, higher is compacted first)
    and compactable are defaults the HCL may override; slot is where the
    component goes (system, context, history, input; default context)."""

    name: str
    version: str = ""
    description: str = ""
    priority: int = 0
    compactable: bool = False
    slot: str = ""
    capabilities: List[str] = field(default_factory=list)
    ops: List[Op] = field(default_factory=list)
    config_schema: List[ConfigField] = field(default_factory=list)


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str = ""  # JSON text
    signature: str = ""  # the provider's opaque signature of the call


@dataclass
class Part:
    """One piece of a message's content: type is text, image, document,
    thinking, redacted_thinking or reasoning (see the Go sdk.Part)."""

    type: str
    text: str = ""
    media_type: str = ""
    data: bytes = b""
    url: str = ""
    width: int = 0
    height: int = 0
    detail: str = ""
    pages: int = 0
    title: str = ""
    signature: str = ""
    opaque: str = ""
    provider: str = ""


@dataclass
class Message:
    """One conversation turn. With parts set, the parts are its content
    and content stays empty."""

    role: str
    content: str = ""
    id: str = ""
    name: str = ""
    speaker_type: str = ""
    tool_call_id: str = ""
    tool_name: str = ""
    tool_calls: List[ToolCall] = field(default_factory=list)
    metadata: Dict[str, str] = field(default_factory=dict)
    kind: str = ""
    pinned: bool = False
    parts: List[Part] = field(default_factory=list)


@dataclass
class Component:
    """A session's piece of context: text, or a list of messages. There is
    no name, priority or compactable flag here: the host names the
    component after the plugin's binding (its HCL label) and takes the rest
    from describe and the HCL. slot empty means the declared one."""

    text: str = ""
    messages: Optional[List[Message]] = None
    slot: str = ""
    metadata: Dict[str, str] = field(default_factory=dict)


@dataclass
class CompactResult:
    """What a compaction did. The host recounts the component itself;
    claimed_freed is recorded but never trusted."""

    log: str = ""
    claimed_freed: int = 0


@dataclass
class SummarizeResult:
    """A summary: its text, the model that made it and the tokens the
    model reported for the call (0: unknown, the host counts them). The
    host checks the text (not empty, within max_tokens, text) and
    discards an answer that is not."""

    text: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


class Call:
    """The context of one call: the session, the binding name (the label of
    the HCL plugin block, e.g. "design_docs") and the deadline."""

    def __init__(self, session: str, binding: str, context: Optional[grpc.ServicerContext] = None):
        self.session = session
        self.binding = binding
        self._context = context

    def time_remaining(self) -> Optional[float]:
        """Seconds left before the host cuts the call off (None: no deadline)."""
        return self._context.time_remaining() if self._context is not None else None


class Session:
    """One session's plugin instance. Implement component and apply; add
    compact(call, tokens_needed, encoding) -> CompactResult for a
    compactable component, state() -> bytes and restore(data: bytes) to
    survive restarts, prepared(call, budget: dict) to hear about every
    prepared context, close() to release resources, and
    summarize(call, messages: List[Message], previous: str, max_tokens: int,
    encoding: str) -> SummarizeResult to condense a span of the history
    (the messages, oldest first, with the summary of what came before
    them). The SDK serializes the calls into one session; different
    sessions run concurrently."""

    def component(self, call: Call, encoding: str) -> Optional[Component]:
        raise NotImplementedError

    def apply(self, call: Call, op: str, args: Any) -> Any:
        """Run op with args (the decoded JSON, None when absent) and return
        a JSON-encodable result (None: no result). Raise UnknownOp or
        InvalidArgs, leaving the state unchanged."""
        raise NotImplementedError


class Plugin:
    """What a plugin author implements: describe, new_session and, for a
    plugin with an HCL config body, configure(config: dict), called once
    before any session exists."""

    def describe(self) -> PluginInfo:
        raise NotImplementedError

    def new_session(self, session_id: str) -> Session:
        raise NotImplementedError


def count_tokens(text: str, encoding: str = "approximate") -> int:
    """The host's approximate count, ceil(characters / 4): exact for the
    encoding "approximate" and an estimate for the others (the host always
    measures what a compaction really freed)."""
    return (len(text) + 3) // 4


_log_lock = threading.Lock()


def log(level: str, message: str, **fields: Any) -> None:
    """Log one line to the host's log (level: trace, debug, info, warn,
    error), as go-plugin reads a plugin's stderr: one JSON object a line."""
    now = datetime.datetime.now(datetime.timezone.utc)
    entry = {"@level": level, "@message": message,
             "@timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"}
    entry.update(fields)
    with _log_lock:
        sys.stderr.write(json.dumps(entry, default=str) + "\n")
        sys.stderr.flush()


# --- sessions ---------------------------------------------------------------


class _Entry:
    def __init__(self, session: Session):
        self.session = session
        self.lock = threading.Lock()
        self.ended = False


class _Local:
    """Keeps one Session per session id, made lazily, its calls serialized."""

    def __init__(self, plugin: Plugin):
        self.plugin = plugin
        self.info = _complete_info(plugin)
        self._lock = threading.Lock()
        self._sessions: Dict[str, _Entry] = {}

    def with_session(self, session_id: str, fn):
        if not session_id:
            raise InvalidArgs("empty session id")
        while True:
            with self._lock:
                entry = self._sessions.get(session_id)
                if entry is None:
                    entry = _Entry(self.plugin.new_session(session_id))
                    self._sessions[session_id] = entry
            with entry.lock:
                if entry.ended:  # ended between lookup and lock: use a fresh one
                    continue
                return fn(entry.session)

    def end(self, session_id: str) -> None:
        with self._lock:
            entry = self._sessions.pop(session_id, None)
        if entry is None:
            return
        with entry.lock:
            entry.ended = True
            close = getattr(entry.session, "close", None)
            if close is not None:
                close()


def _complete_info(plugin: Plugin) -> PluginInfo:
    info = plugin.describe()
    caps = set(info.capabilities)
    probe = plugin.new_session("")
    cls = type(probe)
    if hasattr(cls, "compact"):
        caps.add(CAP_COMPACT)
    if hasattr(cls, "state") and hasattr(cls, "restore"):
        caps.add(CAP_STATE)
    if hasattr(cls, "prepared"):
        caps.add(CAP_PREPARED)
    if hasattr(cls, "summarize"):
        caps.add(CAP_SUMMARIZE)
    close = getattr(probe, "close", None)
    if close is not None:
        close()
    info.capabilities = sorted(caps)
    info.slot = info.slot or "context"
    return info


# --- wire conversion --------------------------------------------------------


def _pb_info(info: PluginInfo) -> pb.PluginInfo:
    return pb.PluginInfo(
        name=info.name, version=info.version, description=info.description,
        priority=info.priority, compactable=info.compactable, slot=info.slot,
        protocol_version=PROTOCOL_VERSION, capabilities=info.capabilities,
        ops=[pb.OpInfo(name=o.name, description=o.description) for o in info.ops],
        config_schema=[pb.ConfigField(
            name=f.name, type=f.type, required=f.required, description=f.description,
            default_json="" if f.default is None else json.dumps(f.default)) for f in info.config_schema])


def _pb_message(m: Message) -> pb.Message:
    return pb.Message(
        id=m.id, role=m.role, name=m.name, speaker_type=m.speaker_type, content=m.content,
        tool_call_id=m.tool_call_id, tool_name=m.tool_name, metadata=m.metadata,
        tool_calls=[pb.ToolCall(id=t.id, name=t.name, arguments=t.arguments, signature=t.signature) for t in m.tool_calls],
        kind=m.kind, pinned=m.pinned,
        parts=[pb.Part(type=p.type, text=p.text, media_type=p.media_type, data=p.data, url=p.url,
                       width=p.width, height=p.height, detail=p.detail, pages=p.pages, title=p.title,
                       signature=p.signature, opaque=p.opaque, provider=p.provider) for p in m.parts])


def _message(m: pb.Message) -> Message:
    return Message(
        role=m.role, content=m.content, id=m.id, name=m.name, speaker_type=m.speaker_type,
        tool_call_id=m.tool_call_id, tool_name=m.tool_name, metadata=dict(m.metadata),
        tool_calls=[ToolCall(id=t.id, name=t.name, arguments=t.arguments, signature=t.signature) for t in m.tool_calls],
        kind=m.kind, pinned=m.pinned,
        parts=[Part(type=p.type, text=p.text, media_type=p.media_type, data=p.data, url=p.url,
                    width=p.width, height=p.height, detail=p.detail, pages=p.pages, title=p.title,
                    signature=p.signature, opaque=p.opaque, provider=p.provider) for p in m.parts])


def _pb_component(c: Optional[Component], binding: str) -> pb.ComponentResponse:
    if c is None:
        return pb.ComponentResponse()
    out = pb.Component(name=binding, slot=c.slot, metadata=c.metadata)
    if c.messages is not None:
        out.messages.CopyFrom(pb.MessageList(messages=[_pb_message(m) for m in c.messages]))
    else:
        out.text = c.text
    return pb.ComponentResponse(component=out)


def _budget(b: pb.Budget) -> Dict[str, Any]:
    return {"window": b.window, "reserved": b.reserved, "available": b.available, "used": b.used,
            "utilization": b.utilization, "status": b.status, "calibrated_used": b.calibrated_used,
            "calibration": b.calibration,
            "components": [{"name": c.name, "tokens": c.tokens} for c in b.components]}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes_field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _status_details(code: grpc.StatusCode, message: str, reason: str) -> bytes:
    """A google.rpc.Status carrying one google.rpc.ErrorInfo{reason, domain},
    encoded by hand (two messages do not justify another dependency)."""
    info = _bytes_field(1, reason.encode()) + _bytes_field(2, ERROR_DOMAIN.encode())
    any_ = _bytes_field(1, b"type.googleapis.com/google.rpc.ErrorInfo") + _bytes_field(2, info)
    return _varint(1 << 3) + _varint(code.value[0]) + _bytes_field(2, message.encode()) + _bytes_field(3, any_)


# --- the gRPC services ------------------------------------------------------


def _state_after(session) -> Optional[pb.SessionState]:
    """The session's state right after a call, taken under the session's
    lock, for the host to keep (None for a session without state)."""
    if not hasattr(session, "state"):
        return None
    return pb.SessionState(state=session.state())


def _unary(fn, request, response):
    return grpc.unary_unary_rpc_method_handler(
        fn, request_deserializer=request.FromString, response_serializer=response.SerializeToString)


class _ContextService:
    """ctxhost.plugin.v1.ContextPlugin over a _Local."""

    def __init__(self, local: _Local):
        self.local = local

    def _run(self, context, method: str, fn):
        try:
            return fn()
        except _PluginError as e:
            err = e
        except Exception as e:  # the plugin's bug: report it, keep serving
            log("error", "call failed", method=method, error=repr(e), traceback=traceback.format_exc())
            err = e
        if isinstance(err, _PluginError):
            context.set_trailing_metadata((("grpc-status-details-bin", _status_details(err.code, str(err), err.reason)),))
            context.abort(err.code, str(err))
        context.abort(grpc.StatusCode.UNKNOWN, "%s: %s" % (type(err).__name__, err))

    def describe(self, request, context):
        return _pb_info(self.local.info)

    def configure(self, request, context):
        def run():
            raw = request.config_json.strip()
            config = {}
            if raw and raw not in (b"null", b"{}"):
                try:
                    config = json.loads(raw)
                except ValueError as e:
                    raise InvalidArgs("config is not a JSON object: %s" % e)
                if not isinstance(config, dict):
                    raise InvalidArgs("config is not a JSON object")
            configure = getattr(self.local.plugin, "configure", None)
            if configure is None:
                if config:
                    raise InvalidArgs('plugin "%s" takes no config' % self.local.info.name)
            else:
                configure(config)
            return pb.Empty()
        return self._run(context, "Configure", run)

    def component(self, request, context):
        call = Call(request.session_id, request.binding, context)
        return self._run(context, "Component", lambda: _pb_component(
            self.local.with_session(request.session_id, lambda s: s.component(call, request.encoding)),
            request.binding))

    def compact(self, request, context):
        call = Call(request.session_id, request.binding, context)

        def run(s):
            if not hasattr(s, "compact"):
                raise RuntimeError('plugin "%s" cannot compact: its Session has no compact method' % self.local.info.name)
            res = s.compact(call, request.tokens_needed, request.encoding)
            return pb.CompactResponse(log=res.log, claimed_freed=res.claimed_freed, state=_state_after(s))
        return self._run(context, "Compact", lambda: self.local.with_session(request.session_id, run))

    def summarize(self, request, context):
        call = Call(request.session_id, request.binding, context)

        def run(s):
            if not hasattr(s, "summarize"):
                raise RuntimeError('plugin "%s" cannot summarize: its Session has no summarize method' % self.local.info.name)
            res = s.summarize(call, [_message(m) for m in request.messages], request.previous,
                              request.max_tokens, request.encoding)
            return pb.SummarizeResponse(text=res.text, model=res.model,
                                        input_tokens=res.input_tokens, output_tokens=res.output_tokens)
        return self._run(context, "Summarize", lambda: self.local.with_session(request.session_id, run))

    def apply(self, request, context):
        call = Call(request.session_id, request.binding, context)

        def run():
            args = None
            if request.args_json.strip():
                try:
                    args = json.loads(request.args_json)
                except ValueError as e:
                    raise InvalidArgs('args of op "%s" are not valid JSON: %s' % (request.op, e))
            result, state = self.local.with_session(
                request.session_id, lambda s: (s.apply(call, request.op, args), _state_after(s)))
            return pb.ApplyResponse(result_json=b"" if result is None else json.dumps(result).encode(), state=state)
        return self._run(context, "Apply", run)

    def prepared(self, request, context):
        call = Call(request.session_id, request.binding, context)

        def run(s):
            if hasattr(s, "prepared"):
                s.prepared(call, _budget(request.budget))
                return pb.PreparedResponse(state=_state_after(s))
            return pb.PreparedResponse()
        return self._run(context, "Prepared", lambda: self.local.with_session(request.session_id, run))

    def state(self, request, context):
        def run(s):
            if not hasattr(s, "state"):
                raise RuntimeError('plugin "%s" has no state: its Session has no state method' % self.local.info.name)
            return pb.StateResponse(state=s.state())
        return self._run(context, "State", lambda: self.local.with_session(request.session_id, run))

    def restore(self, request, context):
        def run(s):
            if not hasattr(s, "restore"):
                raise RuntimeError('plugin "%s" cannot restore: its Session has no restore method' % self.local.info.name)
            s.restore(request.state)
            return pb.Empty()
        return self._run(context, "Restore", lambda: self.local.with_session(request.session_id, run))

    def end_session(self, request, context):
        def run():
            self.local.end(request.session_id)
            return pb.Empty()
        return self._run(context, "EndSession", run)

    def handler(self):
        return grpc.method_handlers_generic_handler("ctxhost.plugin.v1.ContextPlugin", {
            "Describe": _unary(self.describe, pb.Empty, pb.PluginInfo),
            "Configure": _unary(self.configure, pb.ConfigureRequest, pb.Empty),
            "Component": _unary(self.component, pb.ComponentRequest, pb.ComponentResponse),
            "Compact": _unary(self.compact, pb.CompactRequest, pb.CompactResponse),
            "Apply": _unary(self.apply, pb.ApplyRequest, pb.ApplyResponse),
            "Prepared": _unary(self.prepared, pb.PreparedRequest, pb.PreparedResponse),
            "State": _unary(self.state, pb.SessionRequest, pb.StateResponse),
            "Restore": _unary(self.restore, pb.RestoreRequest, pb.Empty),
            "EndSession": _unary(self.end_session, pb.SessionRequest, pb.Empty),
            "Summarize": _unary(self.summarize, pb.SummarizeRequest, pb.SummarizeResponse),
        })


def _raw(fn):
    """A handler over raw bytes, for the two go-plugin services whose
    messages are trivial: grpc.health.v1.Health/Check and
    plugin.GRPCController/Shutdown."""
    return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=None, response_serializer=None)


# HealthCheckResponse{status: SERVING}: field 1, varint 1.
_SERVING = b"\x08\x01"


def _fail(message: str) -> None:
    sys.stderr.write("ctxhost plugin: " + message + "\n")
    sys.stderr.flush()
    sys.exit(1)


def serve(plugin: Plugin, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
    """Run a context plugin process: check the host's handshake
    environment, serve gRPC on a private unix socket, print the handshake
    line and serve until the host shuts the plugin down. Never returns."""
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        _fail("this program is a ctxhost plugin; it is started by ctxhost (bind it in a plugin block), not by hand")
    versions = [v for v in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", "").split(",") if v]
    if versions and str(PROTOCOL_VERSION) not in versions:
        _fail("the host speaks protocol versions %s; this SDK speaks %d" % (",".join(versions), PROTOCOL_VERSION))
    if os.environ.get("PLUGIN_CLIENT_CERT"):
        _fail("the host asks for AutoMTLS, which the Python SDK does not speak: set auto_mtls = false in this plugin's HCL block")
    raw = os.environ.get(ENV_MAX_MESSAGE_BYTES, "")
    if raw:
        try:
            max_message_bytes = int(raw)
        except ValueError:
            max_message_bytes = 0
        if max_message_bytes <= 0:
            _fail("%s=%r: want a positive number of bytes" % (ENV_MAX_MESSAGE_BYTES, raw))

    local = _Local(plugin)
    done = threading.Event()

    def shutdown(request, context):
        done.set()
        return b""

    def check(request, context):
        return _SERVING

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=[
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes)])
    server.add_generic_rpc_handlers((
        _ContextService(local).handler(),
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": _raw(check)}),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {"Shutdown": _raw(shutdown)}),
    ))
    # mkdtemp makes the directory readable by this user only, which keeps
    # other users away from the socket (what AutoMTLS does over TCP).
    sockdir = tempfile.mkdtemp(prefix="ctxhost-plugin-", dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None)
    path = os.path.join(sockdir, "plugin.sock")
    server.add_insecure_port("unix:" + path)
    server.start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host decides when to stop, as in go-plugin
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    sys.stdout.write("%d|%d|unix|%s|grpc\n" % (CORE_PROTOCOL_VERSION, PROTOCOL_VERSION, path))
    sys.stdout.flush()
    done.wait()
    server.stop(grace=0.5).wait()
    shutil.rmtree(sockdir, ignore_errors=True)
    os._exit(0)
