package host

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTargetNotMet is wrapped by Prepare's error when the compaction target
// cannot be met and Config.FailOnUnmetTarget is set.
var ErrTargetNotMet = errors.New("compaction target not met")

// ErrOverWindow is wrapped by the *OverWindowError Prepare returns when the
// context still exceeds the window minus the reserve after compaction.
var ErrOverWindow = errors.New("context exceeds the model window")

// OverWindowError says by how much a prepared context exceeds the
// available budget and which components could not be made smaller. Such a
// context is never assembled (a provider rejects it) unless
// Config.AllowOverWindow is set.
type OverWindowError struct {
	Used      int      // calibrated tokens of the final context
	Available int      // window minus the reserve
	Stuck     []string // the components that are not compactable, or gave nothing more, with their tokens
}

func (e *OverWindowError) Error() string {
	return fmt.Sprintf("%v: %d tokens after compaction, %d available (over by %d); could not be made smaller: %s",
		ErrOverWindow, e.Used, e.Available, e.Used-e.Available, strings.Join(e.Stuck, ", "))
}

// Unwrap makes errors.Is(err, ErrOverWindow) true.
func (e *OverWindowError) Unwrap() error { return ErrOverWindow }

// ErrSessionEnded is returned by calls on a session that has ended.
var ErrSessionEnded = errors.New("session has ended")
