package callpath

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestUploadDetachedWhileBlocked: the upstream transport writes a body
// larger than the socket buffers to an upstream that answers before it
// reads the body, then reads it slowly. The call detaches the body and
// the memory of its parts is written over at once (as the next call's
// payload would be): the upstream still receives the body as it was, in
// full, and the detach did not wait for the upload.
func TestUploadDetachedWhileBlocked(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	var bb bodyBuilder
	bb.writeByte('{')
	bb.member(true, "messages", payload)
	bb.writeByte('}')
	b := bb.body()
	want := sha256.Sum256(b.bytes())

	got := make(chan [32]byte, 1)
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // answers before reading
		<-release
		h := sha256.New()
		_, _ = io.Copy(h, r.Body)
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		got <- sum
	}))
	defer upstream.Close()
	defer close(got)

	client := &http.Client{Transport: newTransport()}
	sent := &bodyReaders{b: b}
	r, _ := sent.open()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, upstream.URL, r)
	req.ContentLength = int64(b.len())
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sent.detach()
	if d := time.Since(start); d > time.Second {
		t.Errorf("the detach waited %v for the upload", d)
	}
	for i := range payload {
		payload[i] = 'x'
	}
	close(release)
	if sum := <-got; sum != want {
		t.Fatal("the upstream received a body changed after the detach")
	}
	_ = res.Body.Close()
}
