package engine

import (
	"io"

	"github.com/hashicorp/go-hclog"

	"github.com/ctxhost/ctxhost/config"
)

// NewLogger returns the host's logger as the `host` block asks for it:
// its level and its format (text or json), written to w.
func NewLogger(h config.Host, w io.Writer) hclog.Logger {
	level := hclog.LevelFromString(h.LogLevel)
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       "ctxhost",
		Level:      level,
		JSONFormat: h.LogFormat == "json",
		Output:     w,
	})
}
