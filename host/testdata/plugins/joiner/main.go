// Command joiner serves kit.Joiner, a text assembler. CTXHOST_TEST_DELTA_BASES
// sets how many streams it keeps for the delta capability ("0": none, the
// capability off; unset: the default).
package main

import (
	"os"
	"strconv"

	"github.com/ctxhost/ctxhost/host/testdata/plugins/kit"
	"github.com/ctxhost/ctxhost/sdk/serve"
)

func main() {
	var opts []serve.Option
	if v := os.Getenv("CTXHOST_TEST_DELTA_BASES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic("CTXHOST_TEST_DELTA_BASES: " + err.Error())
		}
		opts = append(opts, serve.WithDeltaBases(n))
	}
	serve.Assembler(kit.Joiner{}, opts...)
}
