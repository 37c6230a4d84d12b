package tooloutput

import (
	"encoding/json"
	"strconv"

	"github.com/ctxhost/ctxhost/sdk"
)

// Op names.
const (
	opAddOutput = "add_output"
	opGetOutput = "get_output"
	opList      = "list"
)

type addOutputArgs struct {
	Tool     string  `json:"tool"`
	Output   *string `json:"output"`
	ExitCode *int    `json:"exit_code"`
	CallID   string  `json:"call_id"`
}

// addOutput records a tool result and returns {id}.
func (s *toolOutputSession) addOutput(raw json.RawMessage) (json.RawMessage, error) {
	var a addOutputArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := oneLine("tool", a.Tool, true); err != nil {
		return nil, err
	}
	if a.Output == nil {
		return nil, sdk.InvalidArgs("output is required (it may be empty)")
	}
	if err := oneLine("call_id", a.CallID, false); err != nil {
		return nil, err
	}
	s.nextID++
	o := &output{ID: "o" + strconv.Itoa(s.nextID), Tool: a.Tool, Output: *a.Output, ExitCode: a.ExitCode, CallID: a.CallID}
	s.outputs = append(s.outputs, o)
	return sdk.EncodeResult(map[string]string{"id": o.ID})
}

type idArgs struct {
	ID string `json:"id"`
}

type outputView struct {
	ID       string  `json:"id"`
	Tool     string  `json:"tool"`
	Output   *string `json:"output,omitempty"`
	ExitCode *int    `json:"exit_code,omitempty"`
	CallID   string  `json:"call_id,omitempty"`
	Lines    int     `json:"lines"`
	Bytes    int     `json:"bytes"`
	Shown    string  `json:"shown"` // full, placeholder or dropped
}

func (s *toolOutputSession) view(i int, withText bool) outputView {
	o := s.outputs[i]
	v := outputView{ID: o.ID, Tool: o.Tool, ExitCode: o.ExitCode, CallID: o.CallID, Lines: lineCount(o.Output), Bytes: len(o.Output), Shown: s.shown(i)}
	if withText {
		v.Output = &o.Output
	}
	return v
}

// getOutput returns the original output by id, however it is shown.
func (s *toolOutputSession) getOutput(raw json.RawMessage) (json.RawMessage, error) {
	var a idArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.ID == "" {
		return nil, sdk.InvalidArgs("id is required")
	}
	i := s.find(a.ID)
	if i < 0 {
		return nil, sdk.NotFound("tool output %q", a.ID)
	}
	return sdk.EncodeResult(s.view(i, true))
}

// list returns every output, oldest first, without the text.
func (s *toolOutputSession) list(raw json.RawMessage) (json.RawMessage, error) {
	if err := sdk.DecodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	views := make([]outputView, len(s.outputs))
	for i := range s.outputs {
		views[i] = s.view(i, false)
	}
	return sdk.EncodeResult(map[string][]outputView{"outputs": views})
}
