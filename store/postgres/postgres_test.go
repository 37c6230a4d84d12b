package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ctxhost/ctxhost/internal/pgtest"
	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/postgres"
	"github.com/ctxhost/ctxhost/store/storetest"
)

func opener(url string) storetest.Opener {
	return func(t *testing.T) record.Store {
		s, err := postgres.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

// TestConformance runs the shared store suite in a schema of its own.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	storetest.RunWith(t, storetest.Options{Damager: damage}, opener(pgtest.URL(t)))
}

// child runs the part of a child process of storetest.Crash or
// storetest.RaceProcesses; it reports whether this process is one.
func child(t *testing.T) bool {
	if !storetest.InChild() {
		return false
	}
	s, err := postgres.New(context.Background(), os.Getenv("CTXHOST_POSTGRES_CHILD_URL"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Child(s)
	return true
}

// TestCrash kills a writing process and checks what it acknowledged.
func TestCrash(t *testing.T) {
	if child(t) {
		return
	}
	url := pgtest.URL(t)
	storetest.Crash(t, []string{"CTXHOST_POSTGRES_CHILD_URL=" + url}, opener(url))
}

// TestRaceProcesses races writers of two processes on one session.
func TestRaceProcesses(t *testing.T) {
	if child(t) {
		return
	}
	url := pgtest.URL(t)
	storetest.RaceProcesses(t, []string{"CTXHOST_POSTGRES_CHILD_URL=" + url}, opener(url))
}

// TestConcurrentOpen: hosts starting at once on an empty schema all get
// a working store.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.URL(t)
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			s, err := postgres.New(t.Context(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestSchema: the tables go in the search_path's first schema.
func TestSchema(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.Schema(), "ctxhost_test_") || !strings.Contains(url, "search_path="+s.Schema()) {
		t.Errorf("Schema() = %q for %s", s.Schema(), url)
	}
	if err := postgres.SetSchemaVersion(t.Context(), s, 99); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.New(t.Context(), url); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("New on a newer schema: %v", err)
	}
}

func TestFirstSchema(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"ctxhost":            "ctxhost",
		" CtxHost , public":  "ctxhost",
		`"My Schema",public`: "My Schema",
		`"a""b"`:             `a"b`,
		"$user, public":      "",
	} {
		if got := postgres.FirstSchema(in); got != want {
			t.Errorf("firstSchema(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBlocks runs the memory block contract on two pools of one database.
func TestBlocks(t *testing.T) {
	url := pgtest.URL(t)
	storetest.RunBlocks(t, true, func(t *testing.T) record.BlockStore {
		s, err := postgres.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestFeed runs the event feed contract on two pools of one database.
func TestFeed(t *testing.T) {
	url := pgtest.URL(t)
	storetest.RunFeed(t, true, func(t *testing.T) record.FeedStore {
		s, err := postgres.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestCheckpoints runs the checkpoint contract on two pools of one database.
func TestCheckpoints(t *testing.T) {
	url := pgtest.URL(t)
	storetest.RunCheckpoints(t, true, func(t *testing.T) record.CheckpointStore {
		s, err := postgres.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestForkCrash kills a process in the middle of its forks and checks
// every acknowledged fork, and the one in flight, reads whole.
func TestForkCrash(t *testing.T) {
	if child(t) {
		return
	}
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) leaves it out")
	}
	url := pgtest.URL(t)
	open := opener(url)
	storetest.ForkCrash(t, []string{"CTXHOST_POSTGRES_CHILD_URL=" + url}, func(t *testing.T) record.CheckpointStore {
		return open(t).(record.CheckpointStore)
	})
}

// BenchmarkFork forks sessions of 100, 1,000 and 10,000 messages: the
// cost must not grow with the session.
func BenchmarkFork(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, how := range []string{"", "/noted"} {
			b.Run(fmt.Sprint("messages=", n, how), func(b *testing.B) {
				s, err := postgres.New(b.Context(), pgtest.URL(b))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				storetest.BenchFork(b, s, n)
			})
		}
	}
}
