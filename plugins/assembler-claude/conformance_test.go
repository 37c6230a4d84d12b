package main

import (
	"testing"

	"github.com/ctxhost/ctxhost/assemblers/claude"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the ctxhost-assembler-claude binary built by TestMain.
var binary string

func TestMain(m *testing.M) { plugintest.MainWithBinary(m, ".", "ctxhost-assembler-claude", &binary) }

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunAssembler(t, claude.New(), plugintest.AssemblerOptions{})
}

func TestConformanceProcess(t *testing.T) {
	plugintest.RunAssemblerBinary(t, binary, plugintest.AssemblerOptions{})
}
