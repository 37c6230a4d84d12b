package filestore_test

import (
	"path/filepath"
	"testing"

	"github.com/ctxhost/ctxhost/host"
	"github.com/ctxhost/ctxhost/store/filestore"
	"github.com/ctxhost/ctxhost/store/storetest"
)

// TestConformance runs the shared store suite on one directory.
func TestConformance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	storetest.RunWith(t, storetest.Options{
		// A directory belongs to one host at a time: a Store checks
		// versions against what it read or wrote itself.
		SingleProcess: true,
		Skip: map[string]string{
			"AppendUnstored": "the file store accepts an Append to a session it holds no snapshot of (the host always snapshots first)",
		},
	}, func(t *testing.T) host.Store {
		s, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
