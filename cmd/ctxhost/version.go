package main

import (
	"fmt"
	"runtime/debug"

	"github.com/ctxhost/ctxhost/sdk"
)

// version is set at link time (-ldflags "-X main.version=..."); otherwise
// the module version from the build info is used.
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			v = bi.Main.Version
		}
	}
	return v
}

func cmdVersion(args []string, std stdio) error {
	fs := newFlagSet("version", std.err, "")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(std.out, "ctxhost %s (plugin protocol %d)\n", versionString(), sdk.ProtocolVersion)
	return nil
}
