// Command standin is a provider stand-in for tests: it serves OpenAI Chat
// Completions and Responses, Anthropic Messages and Gemini
// generateContent (streamed or not) on a loopback port, checks every
// request against the provider's published schema and against what a
// managed context must keep (the window, the task, tool call pairs), logs
// each check as one JSON line, and answers as a tool-using agent's model
// would: a tool call per turn until the conversation's last turn, then a
// text (or the answer a request's Standin-Reply header scripts). A
// "selftool-..." task calls ctxhost's memory tool first, then answers
// with a text once the tool's result is in the request.
//
//	standin -openapi openai-openapi.json -log checks.jsonl -window 8192 -turns 40
//
// It prints "listening on http://ADDR" on stderr once it serves.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

func main() {
	openapi := flag.String("openapi", "", "OpenAI's OpenAPI document (openai-openapi.json)")
	logPath := flag.String("log", "", "file receiving one JSON line per checked request")
	window := flag.Int("window", 8192, "context window every request must fit (cl100k_base tokens)")
	turns := flag.Int("turns", 40, "tool-using turns of each conversation before the final text answer")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	quick := flag.Bool("quick", false, "for benchmarks: answer every Chat Completions call with a tool call at once, without checks or counting")
	texts := flag.Bool("texts", false, "log each request's texts too (an evaluation reads what went upstream)")
	flag.Parse()
	s, err := newStandin(*openapi, *logPath, *window, *turns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(2)
	}
	s.quick, s.texts = *quick, *texts
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, s.handler()); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

// standin holds the checks' configuration and each conversation's turn.
type standin struct {
	schemas *openAISchemas
	window  int
	turns   int
	quick   bool
	texts   bool         // log each request's texts
	calls   atomic.Int64 // quick answers so far
	answers atomic.Int64 // answers so far (their ids)

	mu    sync.Mutex
	log   *os.File
	count map[string]int // requests seen by task id
	// summaries counts the summarizer calls (see summarize.go).
	summaries summaryCounts
	last      map[string][]string
	// scripts are the answers posted to /standin/replies, by reference,
	// each taken by the one request that names it (ReplyRefHeader).
	scripts    map[string]scriptedReply
	nextScript int
}

func newStandin(openapi, logPath string, window, turns int) (*standin, error) {
	s := &standin{window: window, turns: turns, count: map[string]int{}, last: map[string][]string{}, scripts: map[string]scriptedReply{}}
	if openapi != "" {
		sc, err := loadOpenAISchemas(openapi)
		if err != nil {
			return nil, err
		}
		s.schemas = sc
	}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		s.log = f
	}
	return s, nil
}

func (s *standin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, chatProvider{s}) })
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, responsesProvider{s}) })
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, anthropicProvider{}) })
	mux.HandleFunc("GET /standin/summaries", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		c := s.summaries
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c)
	})
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		count(w, r, r.Header.Get("x-api-key"), "input_tokens")
	})
	mux.HandleFunc("POST /v1beta/models/{call}", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.PathValue("call"), ":countTokens") {
			count(w, r, r.Header.Get("x-goog-api-key"), "totalTokens")
			return
		}
		s.serve(w, r, geminiProvider{})
	})
	mux.HandleFunc("POST /standin/replies", s.postReply)
	return mux
}

// postReply keeps a scripted answer (a scriptedReply as JSON, of any
// size) and answers {"ref": R}: the request that carries R in its
// ReplyRefHeader gets that answer.
func (s *standin) postReply(w http.ResponseWriter, r *http.Request) {
	var sr scriptedReply
	if err := json.NewDecoder(r.Body).Decode(&sr); err != nil {
		http.Error(w, "scripted reply: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.nextScript++
	ref := fmt.Sprintf("r-%d", s.nextScript)
	s.scripts[ref] = sr
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"ref": ref})
}

// takeScript returns (and forgets) the scripted answer of ref.
func (s *standin) takeScript(ref string) (scriptedReply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sr, ok := s.scripts[ref]
	delete(s.scripts, ref)
	return sr, ok
}

// count answers a token count call (field: the count's name) with the
// body's bytes / 4, after checking the caller's key.
func count(w http.ResponseWriter, r *http.Request, key, field string) {
	if key != APIKey {
		http.Error(w, `{"error":"wrong key"}`, http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{field: len(body) / 4})
}

// Check is the log line of one request.
type Check struct {
	Endpoint string `json:"endpoint"`
	Task     string `json:"task"`
	Turn     int    `json:"turn"`
	Stream   bool   `json:"stream"`
	// Tokens is the request's count by the stand-in's own tokenizer.
	Tokens   int  `json:"tokens"`
	Window   int  `json:"window"`
	Messages int  `json:"messages"`
	Results  int  `json:"tool_results"`
	TaskKept bool `json:"task_kept"`
	// Masked counts the messages whose text is a masked output's
	// placeholder ("[bash output masked: 12 lines, ...]").
	Masked   int      `json:"masked"`
	Problems []string `json:"problems,omitempty"`
	// Key is whether the caller's API key reached the stand-in.
	Key bool `json:"key"`
	// AnswerBytes and AnswerSHA256 are the answer's body as the
	// stand-in sent it (the big tasks only; see answerBig).
	AnswerBytes  int    `json:"answer_bytes,omitempty"`
	AnswerSHA256 string `json:"answer_sha256,omitempty"`
	// Texts and Extra, under -texts, are the request's texts as counted:
	// each message's (tool calls and results included), and the rest that
	// is billed (system text, tool definitions).
	Texts []string `json:"texts,omitempty"`
	Extra []string `json:"extra,omitempty"`
}

var (
	taskRe   = regexp.MustCompile(`TASK-ID: ([A-Za-z0-9_-]+)`)
	maskedRe = regexp.MustCompile(`^\[\S+ output masked: `)
)

func (s *standin) record(c *Check) {
	if s.log == nil {
		return
	}
	b, _ := json.Marshal(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.log.Write(append(b, '\n'))
}

// turn counts a request of conversation task and returns its number, and
// the shared prefix (in messages) with the conversation's last request.
func (s *standin) turn(task string, texts []string) (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count[task]++
	prev := s.last[task]
	n := 0
	for n < len(prev) && n < len(texts) && prev[n] == texts[n] {
		n++
	}
	s.last[task] = texts
	return s.count[task], n
}
