//go:build !unix

package sqlite

import (
	"errors"
	"os"
)

// flock is not available here: Lock fails, and a caller treats the store
// as shared.
func flock(*os.File, bool) error { return errors.New("file locks are not supported on this system") }
