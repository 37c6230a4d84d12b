package plugintest_test

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/sdk/plugintest"
	"github.com/google/go-cmp/cmp"
)

// TestBuildBinaries builds two packages, one named by directory and one by
// import path, under the names asked for, and nothing else.
func TestBuildBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	dir, cleanup, err := plugintest.BuildBinaries(map[string]string{
		"ctxhost-plugin-test":  "../../pluginhost/testdata/testplugin",
		"ctxhost-plugin-hello": "github.com/ctxhost/ctxhost/examples/hello",
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable: %v", e.Name(), info.Mode())
		}
		got = append(got, e.Name())
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"ctxhost-plugin-hello", "ctxhost-plugin-test"}, got); diff != "" {
		t.Errorf("built files (-want +got):\n%s", diff)
	}
	cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s: %v", dir, err)
	}
}

func TestBuildBinariesFailure(t *testing.T) {
	missing := filepath.Join("testdata", "no-such-package")
	_, _, err := plugintest.BuildBinaries(map[string]string{"x": "./" + missing})
	if err == nil || !strings.Contains(err.Error(), "go build") {
		t.Fatalf("BuildBinaries of a missing package: err = %v, want a go build error", err)
	}
}

// TestBuildBinariesKept: a binary built twice from an unchanged package
// is linked once, kept between the builds, and each build's directory
// holds a link to it.
func TestBuildBinariesKept(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	if runtime.GOOS == "windows" {
		t.Skip("binaries are not kept between runs on Windows")
	}
	build := func() string {
		dir, cleanup, err := plugintest.BuildBinaries(map[string]string{"ctxhost-plugin-test": "../../pluginhost/testdata/testplugin"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cleanup)
		return filepath.Join(dir, "ctxhost-plugin-test")
	}
	first, second := build(), build()
	a, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(second)
	if err != nil {
		t.Fatal(err)
	}
	if first == second || !os.SameFile(a, b) {
		t.Errorf("%s and %s are not one kept binary: linked again", first, second)
	}
}
