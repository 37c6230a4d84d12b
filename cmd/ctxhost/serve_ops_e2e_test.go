package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ctxhost test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS: with tls_cert and tls_key the service answers HTTPS only,
// and a client that trusts the certificate runs a call.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	cfg := writeServeConfig(t, dir, filepath.Join(dir, "sessions.db"), fmt.Sprintf("tls_cert = %q\n  tls_key = %q", certFile, keyFile))
	s := startServe(t, nil, "-config", cfg)
	if !strings.Contains(s.stderr.String(), "listening on https://") {
		t.Fatalf("no https listen line:\n%s", s.stderr.String())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := hc.Post("https://"+s.addr+"/ctxhost.service.v1.ContextService/CreateSession", "application/json", strings.NewReader(`{"session_id":"tls"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("CreateSession over TLS: HTTP %d", res.StatusCode)
	}
	if res, err := http.Post("http://"+s.addr+"/ctxhost.service.v1.ContextService/GetSession", "application/json", strings.NewReader(`{"session_id":"tls"}`)); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Error("plain HTTP answered on a TLS listener")
		}
	}
}

// TestServeGracefulShutdown: SIGTERM while calls are in flight lets them
// finish with their answers, then the process exits 0 and its plugins are
// gone; every acknowledged write is in the store for the next process.
func TestServeGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "sessions.db")
	cfg := writeServeConfig(t, dir, store, "")
	s := startServe(t, nil, "-config", cfg)
	mustCall(t, s.addr, "CreateSession", `{"session_id":"g"}`)
	const n = 40
	results := make(chan int, n)
	for i := range n {
		go func() {
			body := fmt.Sprintf(`{"session_id":"g","messages":[{"role":"user","content":"m%d"}]}`, i)
			res, err := http.Post("http://"+s.addr+"/ctxhost.service.v1.ContextService/AppendMessages", "application/json", strings.NewReader(body))
			if err != nil { // refused, or a kept-alive connection closed under it: not acknowledged
				results <- 0
				return
			}
			res.Body.Close()
			results <- res.StatusCode
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ok := 0
	for range n {
		switch code := <-results; code {
		case 200:
			ok++
		case 0, 503: // not accepted: the listener was closed first
		default:
			t.Errorf("a call during shutdown got HTTP %d", code)
		}
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit within 30 s of SIGTERM")
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0:\n%s", code, s.stderr.String())
	}
	next := startServe(t, nil, "-config", cfg)
	info := mustCall(t, next.addr, "GetSession", `{"session_id":"g"}`)
	if got := fmt.Sprint(info["messages"]); got != fmt.Sprint(ok) {
		t.Errorf("%s messages stored after shutdown, %d acknowledged", got, ok)
	}
}
