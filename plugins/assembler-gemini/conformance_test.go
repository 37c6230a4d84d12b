package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/assembly/assemblytest"
	"github.com/ctxhost/ctxhost/sdk/plugintest"
)

// binary is the ctxhost-assembler-gemini binary built by TestMain.
var binary string

func TestMain(m *testing.M) {
	path, cleanup, err := assemblytest.BuildBinary(".", "ctxhost-assembler-gemini")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func TestConformanceInProcess(t *testing.T) {
	plugintest.RunAssembler(t, New(), plugintest.AssemblerOptions{})
}

func TestConformanceProcess(t *testing.T) {
	plugintest.RunAssemblerBinary(t, binary, plugintest.AssemblerOptions{})
}
