package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/assemblers/codex"
	"github.com/ctxhost/ctxhost/host/history"
	"github.com/ctxhost/ctxhost/sdk"
	"github.com/ctxhost/ctxhost/tokenizer"
)

// serviceChat is a synthetic customer-service conversation with tool
// calls, in the shape of an airline or retail support agent's: the user
// states their id, the agent looks them up (a JSON tool output with
// reservation and order ids, amounts and dates), the user names a
// reservation, the agent reads it, and small talk and further look-ups
// follow until the early messages must go.
func serviceChat(seed uint64, turns int) []sdk.Message {
	r := rand.New(rand.NewPCG(seed, 7))
	code := func() string {
		const alnum = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
		b := make([]byte, 6)
		for i := range b {
			b[i] = alnum[r.IntN(len(alnum))]
		}
		if !strings.ContainsAny(string(b), "0123456789") {
			b[r.IntN(6)] = '7'
		}
		return string(b)
	}
	first := []string{"mia", "omar", "lei", "ana", "raj", "sofia"}[r.IntN(6)]
	last := []string{"li", "khan", "garcia", "smith", "ito"}[r.IntN(5)]
	user := fmt.Sprintf("%s_%s_%04d", first, last, 1000+r.IntN(9000))
	email := fmt.Sprintf("%s.%s%d@example.com", first, last, r.IntN(100))
	var msgs []sdk.Message
	call := 0
	tool := func(name string, args, out any) {
		call++
		id := fmt.Sprintf("call_%d", call)
		a, _ := json.Marshal(args)
		o, _ := json.Marshal(out)
		msgs = append(msgs,
			sdk.Message{Role: sdk.RoleAssistant, ToolCalls: []sdk.ToolCall{{ID: id, Name: name, Arguments: string(a)}}},
			sdk.Message{Role: sdk.RoleTool, ToolCallID: id, ToolName: name, Content: string(o)})
	}
	say := func(role, text string) { msgs = append(msgs, sdk.Message{Role: role, Content: text}) }
	say(sdk.RoleUser, fmt.Sprintf("Hi, I need help with my booking. My user id is %s and my email is %s.", user, email))
	var reservations []string
	for range 3 {
		reservations = append(reservations, code())
	}
	tool("get_user_details", map[string]string{"user_id": user}, map[string]any{
		"user_id": user, "email": email, "name": map[string]string{"first_name": first, "last_name": last},
		"membership": "gold", "reservations": reservations,
		"payment_methods": map[string]any{"credit_card_" + fmt.Sprint(1000000+r.IntN(9000000)): map[string]string{"source": "credit_card", "last_four": fmt.Sprint(1000 + r.IntN(9000))}},
	})
	say(sdk.RoleAssistant, "Thanks, I found your profile. Which reservation is it about?")
	for t := 0; t < turns; t++ {
		res := reservations[t%len(reservations)]
		switch t % 3 {
		case 0:
			say(sdk.RoleUser, fmt.Sprintf("It is reservation %s, can you tell me what I paid?", res))
			price := 100 + r.IntN(900)
			tool("get_reservation_details", map[string]string{"reservation_id": res}, map[string]any{
				"reservation_id": res, "user_id": user, "origin": "JFK", "destination": "SEA", "cabin": "economy",
				"flights":         []map[string]any{{"flight_number": fmt.Sprintf("HAT%03d", r.IntN(300)), "date": fmt.Sprintf("2024-05-%02d", 1+r.IntN(28)), "price": price}},
				"payment_history": []map[string]any{{"payment_id": "credit_card_" + fmt.Sprint(1000000+r.IntN(9000000)), "amount": price}},
				"created_at":      fmt.Sprintf("2024-04-%02dT10:%02d:00", 1+r.IntN(28), r.IntN(60)),
			})
			say(sdk.RoleAssistant, fmt.Sprintf("You paid $%d.00 for reservation %s. Is there anything you would like to change?", price, res))
		case 1:
			say(sdk.RoleUser, "I am not sure yet. Could you explain the change and cancellation rules for my cabin? "+strings.Repeat("I want to understand every detail before I decide anything. ", 4))
			say(sdk.RoleAssistant, "Of course. "+strings.Repeat("Changes are allowed up to 24 hours before departure for a fee that depends on the fare; cancellations are refunded to the original payment method when insurance covers the reason. ", 5))
		case 2:
			order := fmt.Sprintf("#W%07d", r.IntN(10000000))
			say(sdk.RoleUser, fmt.Sprintf("Also, my order %s from the shop has not arrived.", order))
			tool("get_order_details", map[string]string{"order_id": order}, map[string]any{
				"order_id": order, "status": "processing", "total": fmt.Sprintf("%d.%02d", 20+r.IntN(300), r.IntN(100)),
				"items":   []map[string]any{{"item_id": fmt.Sprint(1000000000 + r.IntN(900000000)), "name": "Water Bottle"}},
				"address": map[string]string{"city": "Seattle", "zip": fmt.Sprint(98000 + r.IntN(999))},
			})
			say(sdk.RoleAssistant, fmt.Sprintf("Order %s is still processing; it should ship within two days.", order))
		}
	}
	return msgs
}

// identifierRes find, independently of package facts, what the check
// holds to be identifiers: ids mixing letters and digits, order numbers,
// e-mail addresses, amounts, dates, paths and URLs.
var identifierRes = []*regexp.Regexp{
	regexp.MustCompile(`\b[a-z]+_[a-z]+_\d{4}\b`),                        // user ids
	regexp.MustCompile(`\b(?:[A-Z]*\d[A-Z\d]*[A-Z]|[A-Z]+\d)[A-Z\d]*\b`), // codes: reservation, flight
	regexp.MustCompile(`#W\d{7}`),                                        // orders
	regexp.MustCompile(`\bcredit_card_\d{7}\b`),                          // payment ids
	regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.]+`),                        // e-mail addresses
	regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`),                          // dates
	regexp.MustCompile(`https?://[^\s"'<>)\]]+`),                         // URLs
	regexp.MustCompile(`(?:\b|/)(?:[\w.-]+/)+[\w-]+\.[a-z]{1,5}\b`),      // paths with a file name
}

// identifiersOf returns the distinct identifiers msgs state.
func identifiersOf(msgs []sdk.Message) []string {
	var ids identifiers
	for _, m := range msgs {
		ids.add(m)
	}
	return ids.list
}

// identifiers are the distinct identifiers of the messages added so far,
// in the order identifiersOf finds them.
type identifiers struct {
	seen map[string]bool
	list []string
}

// add adds the identifiers m states that were not stated before.
func (ids *identifiers) add(m sdk.Message) {
	if ids.seen == nil {
		ids.seen = map[string]bool{}
	}
	text := m.Text()
	for _, tc := range m.ToolCalls {
		text += "\n" + tc.Arguments
	}
	for _, re := range identifierRes {
		for _, id := range re.FindAllString(text, -1) {
			if !ids.seen[id] && len(id) >= 5 {
				ids.seen[id] = true
				ids.list = append(ids.list, id)
			}
		}
	}
}

// keptReport is, over the turns of some conversations, the share of
// requests whose payload holds every identifier stated before, the share
// of identifiers held, and the facts component's tokens.
type keptReport struct {
	requests, whole, compacted int
	ids, held                  int
	factsTokens, factsTurns    int
	firstMiss                  string
}

func (r keptReport) String() string {
	avg := 0
	if r.factsTurns > 0 {
		avg = r.factsTokens / r.factsTurns
	}
	return fmt.Sprintf("%d requests (%d compacted): %.1f%% hold every earlier identifier, %.1f%% of identifiers held; facts component %d tokens on average over %d turns",
		r.requests, r.compacted, 100*float64(r.whole)/float64(max(1, r.requests)), 100*float64(r.held)/float64(max(1, r.ids)), avg, r.factsTurns)
}

// replayKept replays msgs into a session of cfg, preparing after every
// message that ends a turn (a user message or a tool result), and adds
// to r what each payload holds.
func replayKept(t *testing.T, cfg Config, system string, msgs []sdk.Message, r *keptReport) {
	t.Helper()
	s, err := New(Options{}).NewSession("kept", cfg)
	must(t, err)
	if system != "" {
		must(t, s.Conversation().SetSystemPrompt(system))
	}
	var stated identifiers // identifiersOf(msgs[:i+1]), one message at a time
	for i, m := range msgs {
		if _, err := s.Conversation().AddMessage(m); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		stated.add(m)
		if m.Role == sdk.RoleAssistant || (i+1 < len(msgs) && msgs[i+1].Role == sdk.RoleTool) {
			continue
		}
		p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
		if err != nil {
			t.Fatalf("prepare after message %d: %v", i, err)
		}
		payload := string(p.Payload)
		ids := stated.list
		all := true
		for _, id := range ids {
			enc, _ := json.Marshal(id)
			if strings.Contains(payload, id) || strings.Contains(payload, strings.Trim(string(enc), `"`)) {
				r.held++
			} else {
				if r.firstMiss == "" || (testing.Verbose() && len(r.firstMiss) < 600) {
					r.firstMiss += fmt.Sprintf("%q after message %d; ", id, i)
				}
				all = false
			}
		}
		r.ids += len(ids)
		r.requests++
		if all {
			r.whole++
		}
		if p.Budget.CalibratedUsed > p.Budget.Available {
			t.Fatalf("over the window: %d > %d", p.Budget.CalibratedUsed, p.Budget.Available)
		}
		compacted := false
		for _, u := range p.Usage {
			if u.Name == ComponentFacts {
				r.factsTokens += u.Tokens
				r.factsTurns++
			}
		}
		s.conv.hist.EachCompacted(func(e history.ViewEntry, _ func() sdk.Message) { compacted = compacted || e.Omitted })
		if compacted {
			r.compacted++
		}
	}
}

func keptConfig(window int, withFacts bool) Config {
	cfg := Config{Encoding: tokenizer.O200kBase, Window: window, Reserved: 500,
		Assembler: sdk.NewLocalAssembler(codex.New()), Format: codex.FormatAPI,
		History: HistoryConfig{Options: history.Options{Infer: history.InferChat}}}
	cfg.Facts.Enabled = withFacts
	return cfg
}

// TestFactsOutliveOmittedMessages: in customer-service conversations with
// tool calls at a window that omits their opening, the payload still
// holds the user id, e-mail address and reservation ids the omitted
// messages stated (in the facts component, by message id); without
// facts it does not. The figures are logged.
func TestFactsOutliveOmittedMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	var before, after keptReport
	for seed := range uint64(8) {
		msgs := serviceChat(seed, 40)
		replayKept(t, keptConfig(8000, false), "", msgs, &before)
		replayKept(t, keptConfig(8000, true), "", msgs, &after)
	}
	t.Logf("without facts: %s (first miss %s)", before, before.firstMiss)
	t.Logf("with facts:    %s (first miss %s)", after, after.firstMiss)
	if before.compacted == 0 || after.compacted == 0 {
		t.Fatalf("the window omitted nothing: %d and %d requests", before.compacted, after.compacted)
	}
	if after.whole <= before.whole || after.held <= before.held {
		t.Errorf("facts keep no more: %d/%d whole requests, %d/%d ids", after.whole, before.whole, after.held, before.held)
	}
	if share := float64(after.whole) / float64(after.requests); share < 0.8 {
		t.Errorf("with facts only %.1f%% of requests hold every earlier identifier", 100*share)
	}
	if share := float64(after.held) / float64(after.ids); share < 0.95 {
		t.Errorf("with facts only %.1f%% of identifiers held", 100*share)
	}
	// One conversation, checked by hand: the opening's ids after it is omitted.
	msgs := serviceChat(1, 30)
	s, err := New(Options{}).NewSession("one", keptConfig(8000, true))
	must(t, err)
	_, err = s.Conversation().AddMessages(msgs[:len(msgs)-1])
	must(t, err)
	p, err := s.Prepare(context.Background(), sdk.AgentIdentity{})
	must(t, err)
	omitted := map[string]bool{}
	s.conv.hist.EachCompacted(func(e history.ViewEntry, _ func() sdk.Message) { omitted[e.ID] = e.Omitted })
	details := msgs[2] // get_user_details' output: the reservations
	if stored, _ := s.Conversation().History(), 0; !omitted[stored[2].ID] {
		t.Fatalf("the user's details (%s) are still shown", stored[2].ID)
	}
	var fc *sdk.Component
	for i := range p.Components {
		if p.Components[i].Name == ComponentFacts {
			fc = &p.Components[i]
		}
	}
	if fc == nil {
		t.Fatalf("no facts component: %v", p.Usage)
	}
	ids := identifiersOf([]sdk.Message{details})
	if len(ids) < 4 {
		t.Fatalf("ids of the details: %q", ids)
	}
	for _, id := range ids {
		if !strings.Contains(string(p.Payload), id) {
			t.Errorf("%q of the omitted user details is not in the payload; facts:\n%s", id, fc.Text)
		}
	}
	if !strings.Contains(fc.Text, "\n- m") {
		t.Errorf("facts do not name their messages:\n%s", fc.Text)
	}
}

// TestFactsOnTrajectories replays the reference SWE-agent runs (their
// function-calling form, kinds inferred as an agent's) at an 8k window,
// with and without facts, and logs the share of requests whose payload
// holds every identifier stated before (paths, URLs, codes) and the
// facts component's cost. With facts, no fewer identifiers are held.
func TestFactsOnTrajectories(t *testing.T) {
	var before, after keptReport
	for _, run := range realRuns(t) {
		if !strings.HasSuffix(run.name, "/tools") {
			continue
		}
		for _, withFacts := range []bool{false, true} {
			cfg := keptConfig(8000, withFacts)
			cfg.History.Options.Infer = history.InferAgent
			r := &before
			if withFacts {
				r = &after
			}
			replayKept(t, cfg, run.system, run.messages, r)
		}
	}
	t.Logf("without facts: %s", before)
	t.Logf("with facts:    %s", after)
	if after.held < before.held {
		t.Errorf("facts hold fewer identifiers: %d < %d", after.held, before.held)
	}
}
