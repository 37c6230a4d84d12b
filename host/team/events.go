package team

import "github.com/ctxhost/ctxhost/sdk"

// EventType names a team event.
type EventType string

// Team events: what changed in the conversation, and warnings.
const (
	EventMessageAdded      EventType = "message:added"
	EventTeamTaskChanged   EventType = "team_task:changed"
	EventTeamTaskTruncated EventType = "team_task:truncated"
)

// Event is one notification to Options.OnEvent. Fields not relevant to
// the type are zero.
type Event struct {
	Type     EventType
	Message  *sdk.Message // message added
	TeamTask string       // team task changed / truncated: the stored task ("" = none)
	Agent    string       // fallback, trimmed
	Dropped  int          // trimmed: context messages dropped
	Detail   string       // a human-readable description of warnings
}
