"""Memory blocks through a running `ctxhost serve`, standard library only.

    python3 memory_example.py http://127.0.0.1:7400   # token from $CTXHOST_TOKEN

It gives a team a shared block, an agent a read-only persona, then shows
that a session of that agent in that team carries both in the system text
of its next prepare, that a write over a block's limit is refused naming
the limit, that the model's edit of a read-only block is refused, and the
versions a block keeps.
"""

import os
import sys
import uuid

from ctxhost_client import Client, CtxhostError


def main():
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7400"
    c = Client(url, token=os.environ.get("CTXHOST_TOKEN"))
    team, agent = "group:team-" + uuid.uuid4().hex[:6], "coder-" + uuid.uuid4().hex[:6]
    b = c.put_memory_block(team, "standards", "Run the race tests before every commit.", limit=200)
    print("put", b["scope"], b["label"], "version", b["version"], "size", b.get("size"), "of", b["limit"], b["unit"])
    c.put_memory_block("agent:" + agent, "persona", "A terse senior engineer.", read_only=True)

    sid = "py-memory-" + uuid.uuid4().hex[:8]
    info = c.create_session(sid, agent=agent, groups=[team.split(":", 1)[1]])
    print("scopes", " ".join(info.get("memoryScopes", [])))
    c.append(sid, {"role": "user", "content": "Fix the parser."})
    c.append_memory_block(team, "standards", "Never force-push main.")
    ctx = c.prepare(sid)
    body = ctx.get("payload", "") + ctx.get("system", "")
    print("prepare carries the team's block:", "Never force-push main." in body,
          "the persona:", "A terse senior engineer." in body)

    try:
        c.append_memory_block(team, "standards", "x" * 300)
        print("over the limit accepted")
    except CtxhostError as e:
        print("over the limit refused:", e.status, e.code, "limit named:", "limit of 200 chars" in e.message)
    try:
        c.append_memory_block("agent:" + agent, "persona", "I love long answers.", operator=False)
        print("read-only edit accepted")
    except CtxhostError as e:
        print("read-only edit refused:", e.status, e.code)

    versions = c.memory_block_versions(team, "standards")
    print("versions", [v["version"] for v in versions])
    print("visible", [blk["label"] for blk in c.memory_blocks(session_id=sid, visible=True)])
    print("ok")


if __name__ == "__main__":
    main()
