package host

import "context"

// SessionLister is implemented by a Store that can list what it holds.
type SessionLister interface {
	// List returns the ids of the stored sessions (those Load finds),
	// sorted bytewise.
	List(ctx context.Context) ([]string, error)
}
