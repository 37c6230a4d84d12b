//go:build !unix

package callpath

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
