package proxybench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// nginxPath is where Debian's nginx (nginx-light) installs its binary.
const nginxPath = "/usr/sbin/nginx"

// built holds the binaries the benchmarks run, built once on first use.
var built struct {
	once    sync.Once
	dir     string
	cleanup func()
	err     error
}

// binary is the path of one of the benchmark's binaries (ctxhost or
// ctxhost-standin), building both on the first call.
func binary(tb testing.TB, name string) string {
	tb.Helper()
	built.once.Do(func() {
		built.dir, built.cleanup, built.err = plugintest.BuildBinaries(map[string]string{
			"ctxhost":         "../../../cmd/ctxhost",
			"ctxhost-standin": "../../../internal/standin",
		})
	})
	if built.err != nil {
		tb.Fatal(built.err)
	}
	return filepath.Join(built.dir, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.cleanup != nil {
		built.cleanup()
	}
	os.Exit(code)
}

// process is a program the benchmark started, with its address.
type process struct {
	cmd  *exec.Cmd
	addr string // host:port
}

// startProcess runs bin with args and waits for the line "listening on
// http://ADDR" on its stderr; the process is ended with SIGTERM at cleanup.
func startProcess(tb testing.TB, bin string, args ...string) *process {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	addr := make(chan string, 1)
	var seen strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on http://"); ok {
				addr <- strings.TrimSpace(a)
				break
			}
			seen.WriteString(sc.Text() + "\n")
		}
		close(addr)
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(done)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case a, ok := <-addr:
		if !ok {
			<-done
			tb.Fatalf("%s did not start:\n%s", bin, seen.String())
		}
		return &process{cmd: cmd, addr: a}
	case <-time.After(2 * time.Minute):
		tb.Fatalf("%s did not start in 2 minutes", bin)
	}
	return nil
}

// goProxy is a minimal Go reverse proxy in front of upstream: every
// write flushed at once (FlushInterval -1), upstream connections kept
// alive. It runs in the benchmark's own process.
func goProxy(tb testing.TB, upstream string) string {
	tb.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		tb.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.Transport = &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	srv := httptest.NewServer(rp)
	tb.Cleanup(srv.Close)
	return srv.URL
}

// freePort is a loopback port free when asked.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// nginxConfig is an nginx configuration proxying one loopback port to
// each upstream (host:port): proxy_pass with HTTP/1.1 keep-alive to the
// upstream, neither request nor answer buffered, no access log.
func nginxConfig(dir string, root bool, ports []int, upstreams []string) string {
	var b strings.Builder
	if root { // workers run as nobody otherwise, and cannot use dir
		b.WriteString("user root;\n")
	}
	fmt.Fprintf(&b, "daemon off;\nworker_processes auto;\npid %[1]s/nginx.pid;\nerror_log %[1]s/error.log warn;\n", dir)
	b.WriteString("events { worker_connections 4096; }\nhttp {\n  access_log off;\n")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s/%s;\n", t, dir, t)
	}
	b.WriteString("  client_max_body_size 0;\n  client_body_buffer_size 16m;\n  keepalive_requests 100000;\n")
	for i, up := range upstreams {
		fmt.Fprintf(&b, "  upstream up%d { server %s; keepalive 64; }\n", i, up)
		fmt.Fprintf(&b, "  server {\n    listen 127.0.0.1:%d;\n    location / {\n      proxy_pass http://up%d;\n"+
			"      proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_buffering off;\n"+
			"      proxy_request_buffering off;\n      proxy_read_timeout 300s;\n    }\n  }\n", ports[i], i)
	}
	b.WriteString("}\n")
	return b.String()
}

// startNginx runs nginx in front of each upstream (a URL) and returns
// their URLs, or ok false (and why) where nginx is not installed.
func startNginx(tb testing.TB, upstreams ...string) (urls []string, why string) {
	tb.Helper()
	if _, err := os.Stat(nginxPath); err != nil {
		return nil, fmt.Sprintf("nginx column skipped: %s is not installed (make nginx installs Debian's nginx-light as root)", nginxPath)
	}
	dir := tb.TempDir()
	ports := make([]int, len(upstreams))
	hosts := make([]string, len(upstreams))
	for i, up := range upstreams {
		ports[i] = freePort(tb)
		hosts[i] = strings.TrimPrefix(up, "http://")
		urls = append(urls, fmt.Sprintf("http://127.0.0.1:%d", ports[i]))
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(dir, os.Geteuid() == 0, ports, hosts)), 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(nginxPath, "-e", filepath.Join(dir, "error.log"), "-p", dir, "-c", conf)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start nginx: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT) // graceful: the master ends its workers
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	for _, p := range ports {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-exited:
				log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
				tb.Fatalf("nginx exited: %v\n%s%s", err, out, log)
			default:
			}
			if time.Now().After(deadline) {
				tb.Fatalf("nginx did not listen on %d", p)
			}
		}
	}
	return urls, ""
}

// startCallPath runs `ctxhost serve` with examples/callpath.hcl, its
// OpenAI upstream pointed at upstream (a URL), its store the default
// (SQLite beside the configuration), and returns the process.
func startCallPath(tb testing.TB, upstream string) *process {
	tb.Helper()
	return startCallPathWith(tb, binary(tb, "ctxhost"), upstream)
}

// startCallPathWith is startCallPath with the ctxhost binary bin.
func startCallPathWith(tb testing.TB, bin, upstream string) *process {
	tb.Helper()
	example, err := os.ReadFile("../../../examples/callpath.hcl")
	if err != nil {
		tb.Fatal(err)
	}
	const openai = `base_url = "https://api.openai.com"`
	if !strings.Contains(string(example), openai) {
		tb.Fatalf("examples/callpath.hcl has no %s to point at the stand-in", openai)
	}
	hcl := strings.Replace(string(example), openai, fmt.Sprintf("base_url = %q", upstream), 1)
	cfg := filepath.Join(tb.TempDir(), "callpath.hcl")
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		tb.Fatal(err)
	}
	return startProcess(tb, bin, "serve", "-listen", "127.0.0.1:0", "-config", cfg)
}

// bigAnswer is a streamed Chat Completions answer whose text is about
// size bytes in deltas of delta bytes, with its usage and [DONE].
func bigAnswer(size, delta int) []byte {
	var b strings.Builder
	chunk := func(choices, usage string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1764000000,"model":"gpt-standin","choices":%s,"usage":%s}`+"\n\n", choices, usage)
	}
	chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]`, "null")
	line := `line of the answer: the \"quick\" brown fox jumps over the lazy dog \\ naïve café → done\n`
	piece := ""
	for len(piece)+len(line) <= delta {
		piece += line
	}
	for n := 0; n < size; n += len(piece) {
		chunk(`[{"index":0,"delta":{"content":"`+piece+`"},"finish_reason":null,"logprobs":null}]`, "null")
	}
	chunk(`[{"index":0,"delta":{},"finish_reason":"stop","logprobs":null}]`, "null")
	chunk(`[]`, fmt.Sprintf(`{"prompt_tokens":100,"completion_tokens":%d,"total_tokens":%d}`, size/4, size/4+100))
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// bigUpstream answers every Chat Completions call with answer, event by
// event, each flushed as a provider's stream is. It runs in the
// benchmark's process.
func bigUpstream(tb testing.TB, answer []byte) string {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		for rest := answer; len(rest) > 0; {
			k := bytes.Index(rest, []byte("\n\n")) + 2
			_, _ = w.Write(rest[:k])
			f.Flush()
			rest = rest[k:]
		}
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}
