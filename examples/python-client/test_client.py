"""Tests of ctxhost_client's connection handling against a stand-in
service (the standard library's HTTP server), where connections can be
closed at will. The whole loop against a real `ctxhost serve` is
agent_loop.py, run by loop_test.go.

    python3 -m unittest -v test_client
"""

import http.server
import json
import threading
import unittest

from ctxhost_client import Client, CtxhostError


class StandIn(http.server.ThreadingHTTPServer):
    """Answers every call with {"sequence": "<n>"}, n counting the calls.
    plan maps a call's number (1-based) to what happens to it instead:
    "drop" reads it and closes the connection without an answer, "close
    after" answers it, then closes the connection without saying so (as a
    service closing an idle connection does), "conflict" answers 409."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.calls = []  # (connection's client port, method, body)
        self.paths = []
        self.plan = {}
        self.closed = threading.Semaphore(0)  # released per connection closed

    def shutdown_request(self, request):
        super().shutdown_request(request)
        self.closed.release()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method = self.path.rsplit("/", 1)[-1]
        with self.server.lock:
            self.server.calls.append((self.client_address[1], method, body))
            self.server.paths.append(self.path)
            n = len(self.server.calls)
            what = self.server.plan.get(n, "")
        if what == "drop":
            self.close_connection = True
            return
        status, answer = 200, {"sequence": str(n)}
        if what == "conflict":
            status, answer = 409, {"code": "aborted", "message": "expected sequence 1, at 7"}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if what == "conflict":
            self.send_header("Ctxhost-Sequence", "7")
        self.end_headers()
        self.wfile.write(data)
        if what == "close after":
            self.close_connection = True


class ConnectionTest(unittest.TestCase):
    def setUp(self):
        self.server = StandIn()
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.client = Client("http://127.0.0.1:%d" % self.server.server_address[1], timeout=10)

    def tearDown(self):
        self.client.close()
        self.server.shutdown()
        self.server.server_close()

    def connections(self):
        return len({port for port, _, _ in self.server.calls})

    def test_calls_share_one_connection(self):
        for i in range(20):
            self.assertEqual(self.client.call("Health", {})["sequence"], str(i + 1))
        self.assertEqual(self.connections(), 1)

    def test_connection_closed_while_idle_is_opened_again(self):
        self.server.plan = {1: "close after"}
        self.client.append("s", {"role": "user", "content": "a"})
        self.assertTrue(self.server.closed.acquire(timeout=10))
        seq, _ = self.client.append("s", {"role": "user", "content": "b"})
        self.assertEqual(seq, 2)
        self.assertEqual([m for _, m, _ in self.server.calls], ["AppendMessages", "AppendMessages"])
        self.assertEqual(self.connections(), 2)

    def test_write_lost_on_a_kept_connection_is_not_sent_again(self):
        self.server.plan = {2: "drop"}
        self.client.call("Health", {})
        with self.assertRaises(ConnectionError):
            self.client.append("s", {"role": "user", "content": "maybe applied"})
        self.assertEqual(len(self.server.calls), 2)
        # The next call opens a new connection.
        self.assertEqual(self.client.call("Health", {})["sequence"], "3")
        self.assertEqual(self.connections(), 2)

    def test_keyed_write_lost_on_a_kept_connection_is_sent_again(self):
        self.server.plan = {2: "drop"}
        self.client.call("Health", {})
        seq, _ = self.client.append("s", {"role": "user", "content": "once"}, idempotency_key="k1")
        self.assertEqual(seq, 3)
        sent = [b for _, m, b in self.server.calls if m == "AppendMessages"]
        self.assertEqual(len(sent), 2)
        self.assertEqual(sent[0], sent[1])
        self.assertEqual(sent[0]["write"], {"idempotency_key": "k1"})

    def test_keys_in_either_spelling_and_place(self):
        self.server.plan = {2: "drop", 4: "drop"}
        self.client.call("Health", {})
        self.client.call("AppendMessages", {"sessionId": "s", "messages": [], "write": {"idempotencyKey": "k2"}})
        self.client.call("CreateSession", {"session_id": "s2", "idempotency_key": "k3"})
        self.assertEqual([m for _, m, _ in self.server.calls],
                         ["Health", "AppendMessages", "AppendMessages", "CreateSession", "CreateSession"])

    def test_read_lost_on_a_kept_connection_is_sent_again(self):
        self.server.plan = {2: "drop"}
        self.client.call("Health", {})
        self.assertEqual(self.client.get_session("s")["sequence"], "3")

    def test_call_lost_on_a_new_connection_is_not_sent_again(self):
        self.server.plan = {1: "drop"}
        with self.assertRaises(ConnectionError):
            self.client.call("Health", {})
        self.assertEqual(len(self.server.calls), 1)

    def test_error_answer_keeps_the_connection(self):
        self.server.plan = {1: "conflict"}
        with self.assertRaises(CtxhostError) as caught:
            self.client.append("s", {"role": "user", "content": "late"}, expected_sequence=1)
        e = caught.exception
        self.assertEqual((e.status, e.code, e.sequence), (409, "aborted", 7))
        self.client.call("Health", {})
        self.assertEqual(self.connections(), 1)

    def test_each_thread_has_its_own_connection(self):
        errors = []

        def work():
            try:
                for _ in range(25):
                    self.client.call("Health", {})
                self.client.close()
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(self.server.calls), 100)
        self.assertEqual(self.connections(), 4)

    def test_base_url_path_and_scheme(self):
        c = Client("http://127.0.0.1:%d/ctx/" % self.server.server_address[1])
        c.call("Health", {})
        c.close()
        self.assertEqual(self.server.paths, ["/ctx/ctxhost.service.v1.ContextService/Health"])
        with self.assertRaises(ValueError):
            Client("ftp://127.0.0.1:1")


if __name__ == "__main__":
    unittest.main()
