package inspector

import "embed"

// assets is the built front-end (web/, built by `make ui` into dist/ and
// committed, so that `go build` embeds it without npm).
//
//go:embed dist
var assets embed.FS
