package server

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ctxhost/ctxhost/api/servicev1"
	"github.com/ctxhost/ctxhost/engine"
)

// toMessage converts an API message to the sdk's.
func toMessage(m *servicev1.Message) engine.Message {
	out := engine.Message{ID: m.GetId(), Role: m.GetRole(), Name: m.GetName(), SpeakerType: m.GetSpeakerType(),
		Content: m.GetContent(), ToolCallID: m.GetToolCallId(), ToolName: m.GetToolName(),
		Metadata: m.GetMetadata(), Kind: m.GetKind(), Pinned: m.GetPinned(), Parts: toParts(m.GetParts())}
	for _, tc := range m.GetToolCalls() {
		out.ToolCalls = append(out.ToolCalls, engine.ToolCall{ID: tc.GetId(), Name: tc.GetName(), Arguments: tc.GetArguments(), Signature: tc.GetSignature()})
	}
	return out
}

func toParts(ps []*servicev1.Part) []engine.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]engine.Part, len(ps))
	for i, p := range ps {
		out[i] = engine.Part{Type: p.GetType(), Text: p.GetText(), MediaType: p.GetMediaType(), Data: p.GetData(), URL: p.GetUrl(),
			Width: int(p.GetWidth()), Height: int(p.GetHeight()), Detail: p.GetDetail(), Pages: int(p.GetPages()), Title: p.GetTitle(),
			Signature: p.GetSignature(), Opaque: p.GetOpaque(), Provider: p.GetProvider()}
	}
	return out
}

func fromParts(ps []engine.Part) []*servicev1.Part {
	if len(ps) == 0 {
		return nil
	}
	out := make([]*servicev1.Part, len(ps))
	for i, p := range ps {
		out[i] = &servicev1.Part{Type: p.Type, Text: p.Text, MediaType: p.MediaType, Data: p.Data, Url: p.URL,
			Width: int32(p.Width), Height: int32(p.Height), Detail: p.Detail, Pages: int32(p.Pages), Title: p.Title,
			Signature: p.Signature, Opaque: p.Opaque, Provider: p.Provider}
	}
	return out
}

// fromMessage converts an sdk message to the API's.
func fromMessage(m engine.Message) *servicev1.Message {
	out := &servicev1.Message{Id: m.ID, Role: m.Role, Name: m.Name, SpeakerType: m.SpeakerType, Content: m.Content,
		ToolCallId: m.ToolCallID, ToolName: m.ToolName, Metadata: m.Metadata, Kind: m.Kind, Pinned: m.Pinned, Parts: fromParts(m.Parts)}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, &servicev1.ToolCall{Id: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Signature: tc.Signature})
	}
	return out
}

func toBudget(b engine.Budget) *servicev1.Budget {
	return &servicev1.Budget{Window: int64(b.Window), Reserved: int64(b.Reserved), Available: int64(b.Available),
		Used: int64(b.Used), CalibratedUsed: int64(b.CalibratedUsed), Calibration: b.Calibration,
		Utilization: b.Utilization, Status: b.Status, Overhead: int64(b.Overhead)}
}

func toCompaction(r *engine.CompactionReport) *servicev1.Compaction {
	if r == nil {
		return nil
	}
	c := &servicev1.Compaction{Reason: r.Reason, Decision: r.Decision, Target: int64(r.Target), Before: int64(r.Before),
		After: int64(r.After), Freed: int64(r.Freed), Met: r.Met}
	for _, st := range r.Steps {
		var log []string
		if st.Log != "" {
			log = append(log, st.Log)
		}
		if st.Discarded != "" {
			log = append(log, "discarded: "+st.Discarded)
		}
		c.Steps = append(c.Steps, &servicev1.CompactionStep{Component: st.Component, Action: st.Action,
			Asked: int64(st.Asked), Freed: int64(st.Freed), Log: log})
	}
	return c
}

// toPrepareResponse maps a prepared turn to the API's answer, without
// the payload and system text (Prepare sets them, whole or in part).
func toPrepareResponse(t engine.Turn) *servicev1.PrepareResponse {
	out := &servicev1.PrepareResponse{Assembler: t.Assembler}
	_, mediaType, _, hasSystem := t.PayloadParts()
	out.MediaType, out.HasSystem = mediaType, hasSystem
	if t.Fresh != nil {
		tc := t.Fresh.Task
		out.Warnings = append(out.Warnings, tc.Warnings...)
		out.Warnings = append(out.Warnings, t.Fresh.Validation.Warnings...)
		out.Fresh = &servicev1.FreshTask{TaskId: tc.Task.ID, ContextId: tc.ContextID, Valid: t.Fresh.Validation.Valid,
			TokenCount: int64(t.Fresh.Validation.TokenCount), MaxTokens: int64(t.Fresh.Validation.MaxTokens),
			Suggestions: t.Fresh.Validation.Suggestions}
		out.Action = t.Action()
		return out
	}
	p := t.Prepared
	out.Budget, out.Before = toBudget(p.Budget), toBudget(p.Before)
	out.Components = make([]*servicev1.ComponentTokens, 0, len(p.Usage))
	for _, u := range p.Usage {
		out.Components = append(out.Components, &servicev1.ComponentTokens{Name: u.Name, Slot: string(u.Slot), Priority: int32(u.Priority),
			Compactable: u.Compactable, Tokens: int64(u.Tokens)})
	}
	out.Compaction = toCompaction(p.Compaction)
	out.Action = t.Action()
	out.Warnings = p.Warnings
	if p.Cache != nil {
		m := p.Cache.Managed
		out.Cache = &servicev1.CacheCost{SharedPrefixTokens: int64(m.SharedPrefix), CacheReadTokens: int64(m.Read),
			CacheWriteTokens: int64(m.Write), UncachedTokens: int64(m.Uncached), CostUnits: m.Cost}
	}
	return out
}

// toValue converts JSON to a protobuf Value (nil JSON: nil).
func toValue(raw json.RawMessage) (*structpb.Value, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	pv, err := structpb.NewValue(v)
	if err != nil {
		return nil, fmt.Errorf("convert JSON: %w", err)
	}
	return pv, nil
}

// fromValue converts a protobuf Value to JSON (nil: nil).
func fromValue(v *structpb.Value) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return v.MarshalJSON()
}
