package main

import (
	"testing"

	"github.com/ctxhost/ctxhost/assemblers/codex"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the ctxhost-assembler-codex binary built by TestMain.
var binary string

func TestMain(m *testing.M) { plugintest.MainWithBinary(m, ".", "ctxhost-assembler-codex", &binary) }

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunAssembler(t, codex.New(), plugintest.AssemblerOptions{})
}

func TestConformanceProcess(t *testing.T) {
	plugintest.RunAssemblerBinary(t, binary, plugintest.AssemblerOptions{})
}
