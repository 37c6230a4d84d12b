package plan

import (
	"encoding/json"

	"github.com/ctxhost/ctxhost/sdk"
)

// Op names.
const (
	opSetPlan    = "set_plan"
	opUpdateTask = "update_task"
	opGetPlan    = "get_plan"
	opClear      = "clear"
)

type setPlanArgs struct {
	Goal  string `json:"goal"`
	Tasks []struct {
		ID        string   `json:"id"`
		Title     string   `json:"title"`
		DependsOn []string `json:"depends_on"`
	} `json:"tasks"`
}

func (s *planSession) setPlan(raw json.RawMessage) (json.RawMessage, error) {
	var a setPlanArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	p := &plan{Goal: a.Goal, Tasks: make([]task, len(a.Tasks))}
	for i, t := range a.Tasks {
		p.Tasks[i] = task{ID: t.ID, Title: t.Title, DependsOn: t.DependsOn, Status: statusPending}
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	s.plan = p
	return sdk.EncodeResult(viewOf(p))
}

type updateTaskArgs struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Note   string `json:"note"`
}

// updateTask sets a task's status and note (an omitted note clears the
// previous one: a note belongs to the update that set it).
func (s *planSession) updateTask(raw json.RawMessage) (json.RawMessage, error) {
	var a updateTaskArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.ID == "" {
		return nil, sdk.InvalidArgs("id is required")
	}
	if !validStatus(a.Status) {
		return nil, sdk.InvalidArgs("invalid status %q (want pending, in_progress, done, failed or skipped)", a.Status)
	}
	if s.plan == nil {
		return nil, sdk.NotFound("no plan is set")
	}
	i := s.plan.index(a.ID)
	if i < 0 {
		return nil, sdk.NotFound("task %q", a.ID)
	}
	p := s.plan.clone()
	p.Tasks[i].Status = a.Status
	p.Tasks[i].Note = a.Note
	if err := p.validate(); err != nil {
		return nil, err
	}
	s.plan = p
	return sdk.EncodeResult(viewOf(p))
}

func (s *planSession) getPlan(raw json.RawMessage) (json.RawMessage, error) {
	if err := sdk.DecodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	return sdk.EncodeResult(viewOf(s.plan))
}

func (s *planSession) clear(raw json.RawMessage) (json.RawMessage, error) {
	if err := sdk.DecodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	had := s.plan != nil
	s.plan = nil
	return sdk.EncodeResult(map[string]bool{"cleared": had})
}

// planView is what set_plan, update_task and get_plan return.
type planView struct {
	Plan    *plan  `json:"plan"`
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Current string `json:"current,omitempty"`
}

func viewOf(p *plan) planView {
	if p == nil {
		return planView{}
	}
	v := planView{Plan: p, Done: p.doneCount(), Total: len(p.Tasks)}
	if i := p.current(); i >= 0 {
		v.Current = p.Tasks[i].ID
	}
	return v
}
