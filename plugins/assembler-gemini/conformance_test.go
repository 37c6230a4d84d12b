package main

import (
	"testing"

	"github.com/ctxhost/ctxhost/assemblers/gemini"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the ctxhost-assembler-gemini binary built by TestMain.
var binary string

func TestMain(m *testing.M) { plugintest.MainWithBinary(m, ".", "ctxhost-assembler-gemini", &binary) }

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunAssembler(t, gemini.New(), plugintest.AssemblerOptions{})
}

func TestConformanceProcess(t *testing.T) {
	plugintest.RunAssemblerBinary(t, binary, plugintest.AssemblerOptions{})
}
