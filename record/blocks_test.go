package record_test

import (
	"testing"

	"github.com/ctxhost/ctxhost/record"
	"github.com/ctxhost/ctxhost/store/storetest"
)

// TestMemoryBlocks runs the memory block contract on the in-process
// BlockStore (one instance: it is not shared).
func TestMemoryBlocks(t *testing.T) {
	m := record.NewMemoryBlocks()
	storetest.RunBlocks(t, false, func(*testing.T) record.BlockStore { return m })
}
