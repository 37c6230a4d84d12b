//go:build !linux

package callpath

import (
	"context"
	"net"
)

// dialUpload dials with d (request bodies are written through the
// transport's buffer; see upload_linux.go for Linux).
func dialUpload(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.DialContext
}
