"""Checkpoints through a running `ctxhost serve`, standard library only.

    python3 checkpoints_example.py http://127.0.0.1:7400   # token from $CTXHOST_TOKEN

Three turns make three checkpoints. It reads the session as it stood at
the first, forks a session from it that goes on by itself (with a copy
of the session's own memory block), then rewinds the session to the
first checkpoint: what came after is kept as a branch session.
"""

import os
import sys
import uuid

from ctxhost_client import Client, CtxhostError


def history(c, session_id, sequence=0):
    return [e["message"].get("content", "") for e in c.checkpoint(session_id, sequence).get("entries", [])]


def main():
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7400"
    c = Client(url, token=os.environ.get("CTXHOST_TOKEN"))
    sid = "py-cp-" + uuid.uuid4().hex[:8]
    c.create_session(sid)
    c.put_memory_block("session:" + sid, "notes", "The parser lives in ./parse.")
    for n in (1, 2, 3):
        c.turn(sid, {"role": "user", "content": "question %d" % n}, {"role": "assistant", "content": "answer %d" % n})
    cps, seq = c.checkpoints(sid)
    print("checkpoints", len(cps), "messages", [cp["messages"] for cp in cps], "current is the last", seq == int(cps[-1]["sequence"]))
    first = int(cps[0]["sequence"])
    print("at the first:", history(c, sid, first))

    fork = sid + "-b"
    cp, info = c.fork(sid, first, fork)
    print("fork stands on", cp["sequence"] == str(first), "messages", info.get("messages"))
    c.turn(fork, {"role": "user", "content": "elsewhere"})
    print("fork:", history(c, fork))
    print("parent keeps", len(history(c, sid)), "messages")
    blocks = c.memory_blocks("session:" + fork)
    print("fork's blocks", [(b["label"], b["value"]) for b in blocks])
    try:
        c.fork(sid, first, fork)
        print("fork onto a taken id accepted")
    except CtxhostError as e:
        print("fork onto a taken id refused:", e.status, e.code)

    r = c.rewind(sid, first)
    branch = r["branchSessionId"]
    print("rewound to", r["checkpoint"]["sequence"] == str(first), "branch", branch == "%s:branch-%d" % (sid, seq))
    print("after the rewind:", history(c, sid))
    print("branch:", history(c, branch))
    ctx = c.prepare(sid)
    print("prepare after the rewind carries the block:", "The parser lives in ./parse." in ctx.get("payload", "") + ctx.get("system", ""))
    print("ok")


if __name__ == "__main__":
    main()
