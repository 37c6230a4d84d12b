// Package pgtest gives tests a PostgreSQL database to themselves: a fresh
// schema on the server named by CTXHOST_TEST_POSTGRES, dropped when the
// test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the server tests use when CTXHOST_TEST_POSTGRES is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// ServerURL returns the test server's URL (CTXHOST_TEST_POSTGRES, or
// DefaultURL). When the server does not answer, the test is skipped, or
// fails when the environment variable CI is set.
func ServerURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("CTXHOST_TEST_POSTGRES")
	if u == "" {
		u = DefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		msg := "PostgreSQL not reachable (set CTXHOST_TEST_POSTGRES to a test server's URL): " + err.Error()
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	conn.Close(ctx)
	return u
}

// URL returns the test server's URL with search_path set to a new schema
// of a random name; the schema and all it holds are dropped when tb ends.
// The schema itself is created by whoever connects first (the store does).
func URL(tb testing.TB) string {
	tb.Helper()
	server := ServerURL(tb)
	var b [6]byte
	rand.Read(b[:])
	schema := "ctxhost_test_" + hex.EncodeToString(b[:])
	u, err := url.Parse(server)
	if err != nil {
		tb.Fatalf("CTXHOST_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			tb.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return u.String()
}
