package sdk

import (
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// EnvLogLevel names the environment variable that sets a plugin's log level
// (trace, debug, info, warn, error); the default is info.
const EnvLogLevel = "CTXHOST_PLUGIN_LOG_LEVEL"

var (
	loggerOnce sync.Once
	logger     hclog.Logger
)

// Logger returns the plugin's logger: hclog writing JSON lines to the
// process's original stderr, which the host parses and re-emits under the
// plugin's name at each line's level. Safe to call before or after
// serve.Plugin or serve.Assembler.
func Logger() hclog.Logger {
	loggerOnce.Do(func() {
		logger = hclog.New(&hclog.LoggerOptions{
			Level:      hclog.LevelFromString(envOr(EnvLogLevel, "info")),
			Output:     os.Stderr, // captured now: go-plugin later swaps os.Stderr for a pipe
			JSONFormat: true,
		})
	})
	return logger
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
