package main

import (
	"encoding/json"
	"strings"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/sdk"
)

// turnRecord is the machine-readable record of one turn (run --format json).
type turnRecord struct {
	Turn         int               `json:"turn"`
	Line         int               `json:"line"`
	Agent        string            `json:"agent,omitempty"`
	BudgetBefore *sdk.Budget       `json:"budget_before,omitempty"`
	Budget       *sdk.Budget       `json:"budget,omitempty"`
	Fits         bool              `json:"fits"`
	Components   []componentRecord `json:"components,omitempty"`
	Compaction   *compactionRecord `json:"compaction,omitempty"`
	Action       string            `json:"action,omitempty"`
	// Cache is the turn's cost with prompt caching, beside the unmanaged
	// history's.
	Cache *cacheRecord `json:"cache,omitempty"`
	// View is the agent's view of a multi-agent turn.
	View *viewRecord `json:"view,omitempty"`
	// Fresh is the task context of a fresh profile's turn.
	Fresh     *freshRecord `json:"fresh,omitempty"`
	Warnings  []string     `json:"warnings,omitempty"`
	MediaType string       `json:"media_type,omitempty"`
	// System is the separate system text of a CLI format (e.g. for
	// --append-system-prompt); absent when the format has none.
	System *string `json:"system,omitempty"`
	// Payload is the JSON payload itself when the media type is JSON, else
	// the payload as a string.
	Payload json.RawMessage `json:"payload,omitempty"`
}

type componentRecord struct {
	Name        string   `json:"name"`
	Slot        sdk.Slot `json:"slot"`
	Priority    int      `json:"priority"`
	Compactable bool     `json:"compactable"`
	Tokens      int      `json:"tokens"`
}

type compactionRecord struct {
	Reason  string       `json:"reason"`
	Target  int          `json:"target"`
	Before  int          `json:"before"`
	After   int          `json:"after"`
	Deficit int          `json:"deficit"`
	Freed   int          `json:"freed"`
	Met     bool         `json:"met"`
	Steps   []stepRecord `json:"steps"`
}

type stepRecord struct {
	Component string `json:"component"`
	Action    string `json:"action"`
	Asked     int    `json:"asked"`
	Claimed   int    `json:"claimed"`
	Freed     int    `json:"freed"`
	Log       string `json:"log,omitempty"`
	Discarded string `json:"discarded,omitempty"`
}

// runRecord is the whole output of run --format json.
type runRecord struct {
	Transcript string       `json:"transcript"`
	Format     string       `json:"format"`
	Context    string       `json:"context"`
	Turns      []turnRecord `json:"turns"`
	// Cache sums the turns' cache figures, managed and unmanaged.
	Cache *cacheSummary `json:"cache,omitempty"`
}

// fits reports whether the prepared context is within its budget.
func fits(b sdk.Budget) bool { return b.Used <= b.Available && b.CalibratedUsed <= b.Available }

func newTurnRecord(t engine.Turn) turnRecord {
	if ft := t.Fresh; ft != nil {
		payload, mediaType := ft.Payload()
		return turnRecord{Turn: t.Number, Line: t.Line, Agent: t.Agent, Fits: ft.Validation.Valid,
			Warnings: ft.Validation.Warnings, MediaType: mediaType, Payload: payloadJSON(payload, mediaType),
			Fresh: newFreshRecord(ft)}
	}
	p := t.Prepared
	before, budget := p.Before, p.Budget
	rec := turnRecord{Turn: t.Number, Line: t.Line, Agent: t.Agent, BudgetBefore: &before, Budget: &budget,
		Fits: fits(p.Budget), Action: string(p.Action), Warnings: p.Warnings, MediaType: p.MediaType,
		Payload: payloadJSON(p.Payload, p.MediaType), Components: []componentRecord{}, View: newViewRecord(t)}
	rec.Cache = newCacheRecord(p.Cache)
	if p.HasSystem {
		sys := p.System
		rec.System = &sys
	}
	for _, u := range p.Usage {
		rec.Components = append(rec.Components, componentRecord{Name: u.Name, Slot: u.Slot, Priority: u.Priority,
			Compactable: u.Compactable, Tokens: u.Tokens})
	}
	if c := p.Compaction; c != nil {
		rec.Compaction = &compactionRecord{Reason: c.Reason, Target: c.Target, Before: c.Before, After: c.After,
			Deficit: c.Deficit, Freed: c.Freed, Met: c.Met, Steps: []stepRecord{}}
		for _, s := range c.Steps {
			rec.Compaction.Steps = append(rec.Compaction.Steps, stepRecord{Component: s.Component, Action: s.Action,
				Asked: s.Asked, Claimed: s.Claimed, Freed: s.Freed, Log: s.Log, Discarded: s.Discarded})
		}
	}
	return rec
}

// payloadJSON embeds a JSON payload as is and anything else as a string.
func payloadJSON(payload []byte, mediaType string) json.RawMessage {
	if payload == nil {
		return nil
	}
	if isJSONMedia(mediaType) && json.Valid(payload) {
		return payload
	}
	s, _ := json.Marshal(string(payload))
	return s
}

func isJSONMedia(mediaType string) bool {
	mt, _, _ := strings.Cut(mediaType, ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
