//go:build chaos

package servicechaos

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver, to damage a store

	"github.com/ctxhost/ctxhost/store/filestore"
)

// appendSecrets creates session sid and appends n messages "secret-<sid>-<i>",
// one call each.
func appendSecrets(t *testing.T, addr, sid string, n int) {
	t.Helper()
	if a := call(addr, "CreateSession", mustJSON(map[string]any{"sessionId": sid})); a.status != 200 {
		t.Fatalf("create %s: %d %s", sid, a.status, a.raw)
	}
	for i := range n {
		body := mustJSON(map[string]any{"sessionId": sid, "messages": []map[string]any{{"role": "user", "content": fmt.Sprintf("secret-%s-%d", sid, i)}}})
		if a := call(addr, "AppendMessages", body); a.status != 200 {
			t.Fatalf("append: %d %s", a.status, a.raw)
		}
	}
}

// readBack asks for session sid every way there is and counts the answers
// that carry damaged bytes (marker) or are not DATA_LOSS.
func readBack(t *testing.T, addr, sid, marker string) (served, notDataLoss int) {
	t.Helper()
	for _, method := range []string{"GetSession", "ExportState", "Prepare", "Inspect", "ListEvents", "AppendMessages"} {
		body := map[string]any{"sessionId": sid}
		if method == "AppendMessages" {
			body["messages"] = []map[string]any{{"role": "user", "content": "after the damage"}}
		}
		a := call(addr, method, mustJSON(body))
		if bytes.Contains(a.raw, []byte(marker)) {
			served++
		}
		if a.code != "data_loss" {
			notDataLoss++
			t.Errorf("%s of damaged %s: HTTP %d %s %.200s", method, sid, a.status, a.code, a.raw)
		}
	}
	return served, notDataLoss
}

// TestDamagedStores damages stored sessions behind the server's back (a
// changed byte in an event, deleted events, a deleted log file) and reads
// them back every way: each answer must be DATA_LOSS, none may carry the
// damaged bytes, and the undamaged sessions stay served.
func TestDamagedStores(t *testing.T) {
	served, wrong := 0, 0
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ctxhost.db")
		cfg := writeConfig(t, "sqlite:"+path, "")
		s := start(t, cfg)
		for _, sid := range []string{"byte", "rows", "fine"} {
			appendSecrets(t, s.addr, sid, 5)
		}
		s.kill()
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{
			`UPDATE events SET data = CAST(replace(CAST(data AS TEXT), 'secret-byte-3', 'secrXt-byte-3') AS BLOB) WHERE session = CAST('byte' AS BLOB)`,
			`DELETE FROM events WHERE session = CAST('rows' AS BLOB) AND version > 2`,
		} {
			res, err := db.Exec(stmt)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				t.Fatalf("%s: nothing damaged", stmt)
			}
		}
		db.Close()
		s = start(t, cfg)
		for _, sid := range []string{"byte", "rows"} {
			sv, w := readBack(t, s.addr, sid, "secrXt")
			served, wrong = served+sv, wrong+w
		}
		if hist, a := history(t, s.addr, "fine"); !bytes.Contains(hist, []byte("secret-fine-4")) {
			t.Errorf("the undamaged session: HTTP %d %s", a.status, a.raw)
		}
	})
	t.Run("files", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "store") + "/"
		cfg := writeConfig(t, dir, "")
		s := start(t, cfg)
		for _, sid := range []string{"log", "byte", "fine"} {
			appendSecrets(t, s.addr, sid, 5)
		}
		s.kill()
		fs, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, logPath, _ := fs.Files("log")
		if err := os.Remove(logPath); err != nil {
			t.Fatal(err)
		}
		_, logPath, _ = fs.Files("byte")
		b, err := os.ReadFile(logPath)
		if err != nil || !bytes.Contains(b, []byte("secret-byte-3")) {
			t.Fatalf("log of byte: %v", err)
		}
		if err := os.WriteFile(logPath, bytes.Replace(b, []byte("secret-byte-3"), []byte("secrXt-byte-3"), 1), 0o600); err != nil {
			t.Fatal(err)
		}
		s = start(t, cfg)
		for _, sid := range []string{"log", "byte"} {
			sv, w := readBack(t, s.addr, sid, "secrXt")
			served, wrong = served+sv, wrong+w
		}
		if hist, a := history(t, s.addr, "fine"); !bytes.Contains(hist, []byte("secret-fine-4")) {
			t.Errorf("the undamaged session: HTTP %d %s", a.status, a.raw)
		}
	})
	t.Logf("REPORT %s: 4 damaged sessions read back 6 ways each: %d answers carried damaged bytes, %d were not data_loss", t.Name(), served, wrong)
}

// TestGiantAndPartialRequests sends what no client should: a 20 MiB
// message, a call of 1,001 messages, 5 MiB of messages, bodies cut short
// on the wire, and checks that each is refused without a trace and the
// server's memory stays bounded.
func TestGiantAndPartialRequests(t *testing.T) {
	s := start(t, writeConfig(t, "sqlite:"+t.TempDir()+"/ctxhost.db", ""))
	if a := call(s.addr, "CreateSession", mustJSON(map[string]any{"sessionId": "g"})); a.status != 200 {
		t.Fatal(a.status, string(a.raw))
	}
	many := make([]map[string]any, 1001)
	for i := range many {
		many[i] = map[string]any{"role": "user", "content": "x"}
	}
	big := make([]map[string]any, 5)
	for i := range big {
		big[i] = map[string]any{"role": "user", "content": strings.Repeat("y", 1<<20)}
	}
	refused := 0
	for name, body := range map[string][]byte{
		"a 20 MiB message":  mustJSON(map[string]any{"sessionId": "g", "messages": []map[string]any{{"role": "user", "content": strings.Repeat("z", 20<<20)}}}),
		"1,001 messages":    mustJSON(map[string]any{"sessionId": "g", "messages": many}),
		"5 MiB of messages": mustJSON(map[string]any{"sessionId": "g", "messages": big}),
		"JSON cut short":    mustJSON(map[string]any{"sessionId": "g", "messages": []map[string]any{{"role": "user", "content": "cut"}}})[:30],
	} {
		a := call(s.addr, "AppendMessages", body)
		if a.status == 200 || a.status >= 500 {
			t.Errorf("%s: HTTP %d %s %.200s", name, a.status, a.code, a.raw)
		} else {
			refused++
		}
	}
	// A body the client stops sending half way.
	for range 20 {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		body := mustJSON(map[string]any{"sessionId": "g", "messages": []map[string]any{{"role": "user", "content": strings.Repeat("p", 100000)}}})
		fmt.Fprintf(conn, "POST /ctxhost.service.v1.ContextService/AppendMessages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		conn.Write(body[:len(body)/2])
		conn.Close()
	}
	time.Sleep(200 * time.Millisecond)
	info := call(s.addr, "GetSession", mustJSON(map[string]any{"sessionId": "g"}))
	stored, _ := info.body["messages"].(float64)
	if info.status != 200 || stored != 0 {
		t.Errorf("after refused and partial requests: HTTP %d, %v messages stored", info.status, stored)
	}
	rss := s.peakRSS()
	t.Logf("REPORT %s: 4 giant or malformed requests, %d refused; 20 bodies cut half way; %v messages stored; server peak RSS %d MiB",
		t.Name(), refused, stored, rss>>20)
	if rss > 256<<20 {
		t.Errorf("server peak RSS %d MiB, over 256 MiB", rss>>20)
	}
}
