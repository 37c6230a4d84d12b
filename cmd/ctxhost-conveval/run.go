package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ctxhost/ctxhost/internal/replay"
	"github.com/ctxhost/ctxhost/internal/shareddata"
)

// stringList is a flag given any number of times.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var corpora stringList
	fs.Var(&corpora, "corpus", "a corpus directory (its name is its shape); any number of times")
	trajDir := fs.String("trajectories", "", "a directory of SWE-agent .traj files (swe-agent and swe-agent-unlabelled)")
	windows := fs.String("windows", "4096,8192,16384", "context windows, comma-separated")
	bin := fs.String("ctxhost", "", "the ctxhost binary (default: $CTXHOST_BIN_DIR/ctxhost, else ./bin/ctxhost)")
	standin := fs.String("standin", "", "the stand-in binary (default: built from internal/standin)")
	config := fs.String("config", "examples/callpath.hcl", "the serve configuration, as examples/callpath.hcl")
	openapi := fs.String("openapi", "", "OpenAI's OpenAPI document (default: the shared data's)")
	endpoints := fs.String("endpoints", "chat,responses,anthropic,gemini", "the endpoints, comma-separated")
	maxCalls := fs.Int("max-calls", 0, "calls replayed per conversation and endpoint (0: all)")
	limit := fs.Int("limit", 0, "conversations read per corpus (0: all)")
	concurrency := fs.Int("concurrency", runtime.GOMAXPROCS(0), "conversations replayed at once at each window, each through a serve of its own (the results are the same at any)")
	explain := fs.Bool("explain", false, "print on stderr the facts each of ctxhost's requests left out")
	split := fs.String("split", "", "replay only the conversations of this split (tune or heldout; default both)")
	factsRule := fs.String("facts", string(ruleViews), "what counts as a fact stated earlier: views (a numbered file view is one fact, its path and line range, its line numbers none) or gutters (every number of four digits or more, a view's line numbers too: the rule before)")
	dump := fs.Bool("dump", false, "with -explain, print the texts of those requests and of the naive trimmer's beside them")
	summaries := addSummaryFlags(fs)
	_ = fs.Parse(args)

	s := setup{maxCalls: *maxCalls, concurrency: *concurrency, explain: *explain, dump: *dump, progress: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	for _, w := range strings.Split(*windows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n <= replay.AnswerTokens {
			return fmt.Errorf("-windows: %q is not a window over the reserve", w)
		}
		s.windows = append(s.windows, n)
	}
	var err error
	if s.facts, err = parseFactRule(*factsRule); err != nil {
		return err
	}
	if s.summaries, err = summaries.summaries(); err != nil {
		return err
	}
	if s.dialects, err = dialectsNamed(*endpoints); err != nil {
		return err
	}
	text, err := os.ReadFile(*config)
	if err != nil {
		return err
	}
	s.config = string(text)
	if s.ctxhost = *bin; s.ctxhost == "" {
		dir := os.Getenv("CTXHOST_BIN_DIR")
		if dir == "" {
			dir = "bin"
		}
		s.ctxhost = filepath.Join(dir, "ctxhost")
	}
	if s.ctxhost, err = filepath.Abs(s.ctxhost); err != nil {
		return err
	}
	if s.openapi = *openapi; s.openapi == "" {
		data, err := shareddata.Dir()
		if err != nil {
			return err
		}
		s.openapi = filepath.Join(data, "schemas", "openai-openapi.json")
	}
	if s.openapi, err = filepath.Abs(s.openapi); err != nil {
		return err
	}
	if s.standin = *standin; s.standin == "" {
		root, err := shareddata.ModuleRoot()
		if err != nil {
			return err
		}
		tmp, err := tempDir("ctxhost-conveval-bin-")
		if err != nil {
			return err
		}
		defer removeTemp(tmp)
		if s.standin, err = buildStandin(root, tmp); err != nil {
			return err
		}
	}
	if s.standin, err = filepath.Abs(s.standin); err != nil { // the stand-in runs in a directory of its own
		return err
	}
	var convs []conversation
	for _, dir := range corpora {
		cs, err := loadCorpus(dir)
		if err != nil {
			return err
		}
		if *limit > 0 && len(cs) > *limit {
			cs = cs[:*limit]
		}
		convs = append(convs, cs...)
	}
	if *trajDir != "" {
		paths, _ := filepath.Glob(filepath.Join(*trajDir, "*.traj"))
		if len(paths) == 0 {
			return fmt.Errorf("-trajectories %s: no .traj file", *trajDir)
		}
		cs, err := loadTrajectories(paths)
		if err != nil {
			return err
		}
		convs = append(convs, cs...)
	}
	if *split != "" {
		if *split != "tune" && *split != "heldout" {
			return fmt.Errorf("-split %q: want tune or heldout", *split)
		}
		convs = slices.DeleteFunc(convs, func(c conversation) bool { return c.split != *split })
	}
	if len(convs) == 0 {
		return fmt.Errorf("no conversation: give -corpus or -trajectories")
	}
	res, err := evaluate(s, convs)
	if err != nil {
		return err
	}
	printCorpora(os.Stdout, convs)
	printTable(os.Stdout, res)
	printParts(os.Stdout, res)
	printGoals(os.Stdout, res)
	return nil
}

// dialectsNamed are the dialects of a comma-separated list of names.
func dialectsNamed(names string) ([]replay.Dialect, error) {
	var out []replay.Dialect
	for _, n := range strings.Split(names, ",") {
		found := false
		for _, d := range replay.Dialects {
			if d.Name == strings.TrimSpace(n) {
				out = append(out, d)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("no endpoint %q (chat, responses, anthropic, gemini)", n)
		}
	}
	return out, nil
}

// printCorpora prints the conversations of each shape in each split.
func printCorpora(w io.Writer, convs []conversation) {
	n := map[[2]string]int{}
	var shapes []string
	for _, c := range convs {
		if n[[2]string{c.shape, "tune"}]+n[[2]string{c.shape, "heldout"}] == 0 {
			shapes = append(shapes, c.shape)
		}
		n[[2]string{c.shape, c.split}]++
	}
	fmt.Fprintln(w, "conversations by shape: tune / heldout")
	for _, s := range shapes {
		fmt.Fprintf(w, "  %-22s %4d / %4d\n", s, n[[2]string{s, "tune"}], n[[2]string{s, "heldout"}])
	}
}

// pct is a share in percent, "-" of nothing.
func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*float64(a)/float64(b))
}

// printTable prints a row per shape, window, endpoint and method (and the
// endpoints together), the tune and heldout splits side by side.
func printTable(w io.Writer, res *results) {
	rows := map[key]bool{}
	all := map[key]*tally{}
	for k, t := range res.by {
		r := k
		r.split = ""
		rows[r] = true
		a := k
		a.endpoint = "all"
		if all[a] == nil {
			all[a] = &tally{}
		}
		add(all[a], t)
		r.endpoint = "all"
		rows[r] = true
	}
	var keys []key
	for k := range rows {
		keys = append(keys, k)
	}
	order := map[string]int{"chat": 0, "responses": 1, "anthropic": 2, "gemini": 3, "all": 4, "ctxhost": 0, "naive": 1, "drop-start": 2}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.shape != b.shape {
			return a.shape < b.shape
		}
		if a.window != b.window {
			return a.window < b.window
		}
		if a.endpoint != b.endpoint {
			return order[a.endpoint] < order[b.endpoint]
		}
		return order[a.method] < order[b.method]
	})
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	head := "conv\tcalls\tfit%\tcur%\tfacts%\trecall%\ttask%\tmasked%\ttokens\tcost\t"
	fmt.Fprintln(tw, "shape\twindow\tendpoint\tmethod\t|\t"+strings.ReplaceAll(head, "\t", "\t")+"|\t"+head)
	fmt.Fprintln(tw, "\t\t\t\t|\ttune\t\t\t\t\t\t\t\t\t\t|\theldout\t\t\t\t\t\t\t\t\t\t")
	for _, k := range keys {
		line := fmt.Sprintf("%s\t%d\t%s\t%s\t", k.shape, k.window, k.endpoint, k.method)
		for _, split := range []string{"tune", "heldout"} {
			r := k
			r.split = split
			t := res.by[r]
			if k.endpoint == "all" {
				t = all[r]
			}
			if t == nil {
				t = &tally{}
			}
			line += "|\t" + cells(t)
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
	var problems []string
	for k, t := range res.by {
		for _, p := range t.problems {
			problems = append(problems, fmt.Sprintf("%s %s %d %s: %s", k.shape, k.split, k.window, k.endpoint, p))
		}
	}
	sort.Strings(problems)
	for i, p := range problems {
		if i == 20 {
			fmt.Fprintf(w, "... %d more\n", len(problems)-i)
			break
		}
		fmt.Fprintln(w, "problem:", p)
	}
}

// cells are a tally's columns.
func cells(t *tally) string {
	return fmt.Sprintf("%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.0f\t", t.convs, t.calls, pct(t.fit, t.calls), pct(t.currentKept, t.currentCalls),
		pct(t.allFacts, t.factCalls), pct(t.factsKept, t.factsTotal), pct(t.taskKept, t.calls), pct(t.masked, t.outputsCut), t.tokens, t.cost)
}
