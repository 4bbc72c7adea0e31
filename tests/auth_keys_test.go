package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// refusesToStart runs the server with args and returns its output once it
// has exited non-zero; a server that starts (answers /healthz) instead
// fails the test.
func refusesToStart(t *testing.T, args ...string) string {
	t.Helper()
	port := freePort(t)
	args = append([]string{"--listen", "127.0.0.1:" + port, "--admin-listen", "127.0.0.1:" + freePort(t),
		"--data-dir", t.TempDir()}, args...)
	out := &syncBuffer{}
	cmd := exec.Command(serverBin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(startTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			if err == nil {
				t.Errorf("hbgraph %q exited 0:\n%s", args, out.String())
			}
			return out.String()
		default:
		}
		if resp, err := httpClient.Get("http://127.0.0.1:" + port + "/healthz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("hbgraph %q started:\n%s", args, out.String())
			return out.String()
		}
	}
	_ = cmd.Process.Kill()
	<-exited
	t.Errorf("hbgraph %q neither started nor exited:\n%s", args, out.String())
	return out.String()
}

// TestKeySetsThatCannotBeMeant: a key set that holds a private key (PEM,
// PKCS#1 or PKCS#8, or a JWK with its private parts) or no keys at all
// (a file, or a JWKS URL answering an empty set) stops the start, saying
// why; whoever could read a private key could sign tokens, and an empty
// set would refuse every token without a word at start. The keys loaded
// are logged by kind.
func TestKeySetsThatCannotBeMeant(t *testing.T) {
	parallelTest(t)
	p := newIDP(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rsaPriv := mustRSA(t)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(rsaPriv)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalECPrivateKey(ecPriv)
	if err != nil {
		t.Fatal(err)
	}
	privateSet := jwk.NewSet()
	_ = privateSet.AddKey(p.rsaKey) // with d, p, q
	privateJSON, err := json.Marshal(privateSet)
	if err != nil {
		t.Fatal(err)
	}
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"keys": []}`)
	}))
	t.Cleanup(empty.Close)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"PKCS#1 PEM", []string{"--auth-jwks-file", write("pkcs1.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaPriv)}))}, "private RSA key"},
		{"PKCS#8 PEM", []string{"--auth-jwks-file", write("pkcs8.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}))}, "private RSA key"},
		{"EC PEM", []string{"--auth-jwks-file", write("ec.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}))}, "private EC key"},
		{"private JWK", []string{"--auth-jwks-file", write("private.json", privateJSON)}, `private RSA key (kid "rsa-1")`},
		{"empty file", []string{"--auth-jwks-file", write("empty.json", []byte(`{"keys": []}`))}, "holds no keys"},
		{"empty URL", []string{"--auth-jwks-url", empty.URL}, "holds no keys"},
	} {
		out := refusesToStart(t, tc.args...)
		if !strings.Contains(out, tc.want) || !strings.Contains(out, tc.args[1]) {
			t.Errorf("%s: the refusal does not say %q and name %s:\n%s", tc.name, tc.want, tc.args[1], out)
		}
	}

	p.rotate() // RSA and EC
	s := startServer(t, append(p.args(), "--log-level", "info")...)
	if !strings.Contains(s.out.String(), `"keys":2,"rsa":1,"ec":1,"okp":0,"jwks_url":"`+p.srv.URL+`"`) {
		t.Errorf("the keys loaded from the URL are not logged by kind:\n%s", s.out.String())
	}
	s = startServer(t, "--auth-jwks-file", write("public.pem", p.rsaPEM), "--log-level", "info")
	if !strings.Contains(s.out.String(), `"keys":1,"rsa":1,"ec":0,"okp":0,"jwks_file":`) {
		t.Errorf("the keys loaded from the file are not logged by kind:\n%s", s.out.String())
	}
}
