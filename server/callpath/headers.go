package callpath

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// hopHeaders are not forwarded in either direction; the length and
// encoding are the transport's own (the upstream's gzip is undone by it).
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Host": true,
	"Content-Length": true, "Accept-Encoding": true, "Content-Encoding": true,
}

// copyRequestHeaders forwards the caller's headers upstream: its API key
// (Authorization, x-api-key, x-goog-api-key), the provider's version and
// beta headers and the rest, without hop-by-hop headers and ctxhost's own.
func copyRequestHeaders(dst, src http.Header) {
	for k, vs := range src {
		if hopHeaders[k] || strings.HasPrefix(k, "Ctxhost-") {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// copyResponseHeaders passes the upstream's answer headers on (request
// ids, rate-limit figures, retry-after).
func copyResponseHeaders(dst, src http.Header) {
	for k, vs := range src {
		if hopHeaders[k] {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// callerKey is the provider API key the call carries (Authorization's
// bearer token, x-api-key, x-goog-api-key or Gemini's key query
// parameter; "" when none).
func callerKey(r *http.Request) string {
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	for _, h := range []string{"X-Api-Key", "X-Goog-Api-Key"} {
		if k := r.Header.Get(h); k != "" {
			return k
		}
	}
	return r.URL.Query().Get("key")
}

// redactURL removes the URL from a transport error: its query may hold a
// Gemini API key (key=...).
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return errors.New(ue.Op + ": " + ue.Err.Error())
	}
	return err
}
