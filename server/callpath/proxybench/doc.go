// Package proxybench measures ctxhost's call path beside plain proxies in
// one run: the stand-in upstream called directly, a minimal Go reverse
// proxy (net/http/httputil), nginx's proxy_pass where /usr/sbin/nginx is
// installed, and `ctxhost serve` with examples/callpath.hcl's defaults, on
// steady Chat Completions conversations and on a large streamed answer.
// It holds benchmarks only (`make bench-callpath`); see docs/BENCHMARKS.md.
package proxybench
