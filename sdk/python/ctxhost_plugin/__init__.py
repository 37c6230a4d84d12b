"""ctxhost_plugin: write ctxhost context plugins in Python.

A plugin subclasses Plugin (describe, new_session, optionally configure)
and Session (component, apply; optionally compact, state and restore,
prepared, summarize, close), then calls serve(plugin) from its main. The SDK speaks the
go-plugin handshake and the ctxhost.plugin.v1 gRPC service (docs/PROTOCOL.md
in the ctxhost repository), keeps one Session per session id, serializes
the calls into one session, and turns UnknownOp, InvalidArgs and NotFound
into the error codes the host understands.

It needs only Debian's python3-grpcio and python3-protobuf. It does not
speak go-plugin's AutoMTLS: bind the plugin with `auto_mtls = false` in its
HCL block; it then serves on a unix socket in a directory only its user can
open.
"""

from .sdk import (  # noqa: F401
    CAP_COMPACT,
    CAP_PREPARED,
    CAP_PREPARED_ON_CHANGE,
    CAP_STATE,
    CAP_SUMMARIZE,
    CAP_VOLATILE,
    Call,
    CompactResult,
    Component,
    ConfigField,
    InvalidArgs,
    Message,
    NotFound,
    Op,
    Part,
    Plugin,
    PluginInfo,
    Session,
    SummarizeResult,
    ToolCall,
    UnknownOp,
    count_tokens,
    log,
    serve,
)
