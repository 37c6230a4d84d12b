package sdk

import (
	"errors"
	"fmt"
)

// Sentinel errors that cross the process boundary as distinct wire codes
// and come back to the host as the same sentinels (test with errors.Is).
var (
	// ErrUnknownOp: Apply was called with an op the plugin does not accept.
	ErrUnknownOp = errors.New("unknown op")
	// ErrInvalidArgs: the op's arguments (or a config) are malformed or invalid.
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrNotFound: the op refers to something that does not exist.
	ErrNotFound = errors.New("not found")
)

// UnknownOp returns an error wrapping ErrUnknownOp that names op.
func UnknownOp(op string) error { return fmt.Errorf("%w %q", ErrUnknownOp, op) }

// InvalidArgs returns an error wrapping ErrInvalidArgs with a formatted reason.
func InvalidArgs(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgs, fmt.Sprintf(format, a...))
}

// NotFound returns an error wrapping ErrNotFound with a formatted reason.
func NotFound(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, a...))
}
