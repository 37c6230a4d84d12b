"""The whole agent loop against a running `ctxhost serve`, standard library only.

    python3 agent_loop.py http://127.0.0.1:7400      # token from $CTXHOST_TOKEN

It creates a session, gives it a plan and a task, then runs three turns:
prepare the context, "call the model" (a canned answer here), append the
answer and a tool result, report the usage the provider would have
reported. Then one turn in a single call (turn: append and prepare saved
together), retried with its key and applied once. It also shows a retried
append applied once (idempotency key) and a stale expected sequence
refused with HTTP 409.
"""

import os
import sys
import uuid

from ctxhost_client import Client, CtxhostError


def main():
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7400"
    c = Client(url, token=os.environ.get("CTXHOST_TOKEN"))
    sid = "py-loop-" + uuid.uuid4().hex[:8]
    info = c.create_session(sid)
    print("session", info["sessionId"], "profile", info.get("profile", ""))

    c.apply(sid, "plan", "set_plan", {"goal": "fix the parser", "tasks": [
        {"id": "t1", "title": "reproduce"}, {"id": "t2", "title": "patch", "depends_on": ["t1"]}]})
    seq, ids = c.append(sid, {"role": "user", "content": "The parser fails on empty input. Fix it."})
    print("appended", ids, "sequence", seq)

    for turn in range(1, 4):
        ctx = c.prepare(sid)
        budget = ctx["budget"]
        print("turn %d: %s tokens of %s, action %s, %d-byte %s payload" % (
            turn, budget.get("used", "0"), budget.get("available", "0"), ctx.get("action", ""),
            len(ctx.get("payload", "")), ctx.get("mediaType", "")))
        if turn > 1:
            # The client held the last payload: the service sent only what
            # follows the part of it this one repeats. A client holding
            # nothing gets the same payload whole.
            whole = Client(url, token=os.environ.get("CTXHOST_TOKEN")).prepare(sid)
            print("turn %d: payload sent after %s held bytes, the same as whole %s" % (
                turn, ctx.get("payloadPrefix", "0"), whole["payload"] == ctx["payload"]))
        # A real agent sends ctx["payload"] to its model here. Say the
        # call failed and is retried: the same turn again, whose payload the
        # service leaves out of its answer (the client holds it).
        if turn == 1:
            again = c.prepare(sid)
            print("retried turn: payload unchanged %s, same payload %s" % (
                again.get("payloadUnchanged", False), again["payload"] == ctx["payload"]))
        c.append(sid, {"role": "assistant", "content": "Running the tests (turn %d)." % turn})
        c.append(sid, {"role": "user", "kind": "observation", "content": "FAIL parser_test.go:12 (turn %d)" % turn})
        c.report_usage(sid, int(budget.get("used", "0")) + 40, 25)

    # The same turn in one call: the model's answer and the tool's result
    # appended and the next context prepared, saved in one store write.
    # Retried with its key (the answer was lost, say), it is applied once.
    key = uuid.uuid4().hex
    step = [{"role": "assistant", "content": "Patching the parser."},
            {"role": "user", "kind": "observation", "content": "ok parser_test.go"}]
    one = c.turn(sid, *step, idempotency_key=key)
    retried = c.turn(sid, *step, idempotency_key=key)
    print("one-call turn: ids %d, sequence %s then %s, replayed %s, same payload %s" % (
        len(one.get("messageIds", [])), one.get("sequence"), retried.get("sequence"),
        retried.get("replayed", False),
        one["payload"] == Client(url, token=os.environ.get("CTXHOST_TOKEN")).prepare(sid)["payload"]))

    key = uuid.uuid4().hex
    first, _ = c.append(sid, {"role": "user", "content": "once"}, idempotency_key=key)
    again, _ = c.append(sid, {"role": "user", "content": "once"}, idempotency_key=key)
    history = c.get_session(sid)["messages"]
    print("idempotent append: sequence %d then %d, %s messages" % (first, again, history))

    try:
        c.append(sid, {"role": "user", "content": "late"}, expected_sequence=1)
        print("stale write accepted")
    except CtxhostError as e:
        print("stale write refused:", e.status, e.code, "current sequence", e.sequence)
    print("ok")


if __name__ == "__main__":
    main()
