package plaintext_test

import (
	"testing"

	"github.com/ctxhost/ctxhost/host/plaintext"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

func TestConformance(t *testing.T) {
	plugintest.RunAssemblerTarget(t, plaintext.New(), plugintest.AssemblerOptions{})
}
