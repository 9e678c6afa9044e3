package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// gatewayKey is the header value the test gateway wants; it must appear
// in no output.
const gatewayKey = "gw-secret-7f3a9c"

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, written as PEM files.
type testPKI struct {
	caFile, clientCert, clientKey string
	pool                          *x509.CertPool
	server                        tls.Certificate
}

// newPKI generates the certificates in a temporary folder.
func newPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vllmperf test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
		k := newKey()
		tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = big.NewInt(serial), time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	srvCert, srvKey := issue(2, &x509.Certificate{Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	cliCert, cliKey := issue(3, &x509.Certificate{Subject: pkix.Name{CommonName: "vllmperf client"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	p := &testPKI{caFile: filepath.Join(dir, "ca.pem"), clientCert: filepath.Join(dir, "client.pem"), clientKey: filepath.Join(dir, "client-key.pem"), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	for path, b := range map[string][]byte{p.caFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), p.clientCert: cliCert, p.clientKey: cliKey} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if p.server, err = tls.X509KeyPair(srvCert, srvKey); err != nil {
		t.Fatal(err)
	}
	return p
}

// testGateway is a TLS reverse proxy on loopback in front of the
// simulator that answers 401 to a request without x-api-key: gatewayKey,
// and records the paths it let through.
type testGateway struct {
	url  string
	mu   sync.Mutex
	seen map[string]bool // paths passed to the simulator
}

// startGateway starts the gateway; with mTLS it also requires a client
// certificate signed by the test CA.
func startGateway(t *testing.T, pki *testPKI, mTLS bool) *testGateway {
	t.Helper()
	sim, err := url.Parse(startSim(t))
	if err != nil {
		t.Fatal(err)
	}
	g := &testGateway{seen: map[string]bool{}}
	proxy := simtest.StreamingProxy(sim)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != gatewayKey {
			http.Error(w, `{"message":"Unauthorized: no valid x-api-key"}`, http.StatusUnauthorized)
			return
		}
		g.mu.Lock()
		g.seen[r.URL.Path] = true
		g.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pki.pool, ClientAuth: tls.VerifyClientCertIfGiven}
	if mTLS {
		ts.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	g.url = ts.URL
	return g
}

// paths returns the paths the gateway let through, sorted.
func (g *testGateway) paths() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var ps []string
	for p := range g.seen {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// TestGatewayTLSWithHeader: `vllmperf run` reaches a deployment behind a
// TLS gateway with a self-signed certificate that wants a header: with
// --header and --ca-cert (or their variables) every request (health,
// models, tokenize, completions, scrapes) carries the header and the run
// succeeds; without the header it fails naming the gateway's 401; without
// the CA it fails naming the certificate; the header's value is never
// printed.
func TestGatewayTLSWithHeader(t *testing.T) {
	testphase.Fault(t)
	ctx := context.Background()
	pki := newPKI(t)
	g := startGateway(t, pki, false)
	load := []string{"--concurrency", "2", "--requests", "4", "--warmup", "0", "--max-tokens", "8", "--prompt-tokens", "16"}
	run := func(t *testing.T, args ...string) (cliResult, string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "result.json")
		r := runCLI(t, ctx, append(append([]string{"run", "--quiet", "--target", g.url, "--json", path}, args...), load...)...)
		data, _ := os.ReadFile(path)
		if out := r.stdout + r.stderr + string(data); strings.Contains(out, gatewayKey) {
			t.Errorf("the header's value appears in the output:\n%s", out)
		}
		return r, string(data)
	}
	t.Setenv("GW_KEY", gatewayKey)

	t.Run("header and CA", func(t *testing.T) {
		r, data := run(t, "--header", "x-api-key: env:GW_KEY", "--ca-cert", pki.caFile)
		r.wantCode(t, 0)
		if !strings.Contains(data, `"completed": 4`) {
			t.Errorf("the result does not say 4 completed requests:\n%s", data)
		}
		for _, p := range []string{"/health", "/metrics", "/tokenize", "/v1/chat/completions", "/v1/models"} {
			if !slices.Contains(g.paths(), p) {
				t.Errorf("no request to %s carried the header (seen: %v): that path does not go through the gateway's transport", p, g.paths())
			}
		}
	})
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv("VLLMPERF_HEADERS", "x-api-key: env:GW_KEY")
		t.Setenv("VLLMPERF_CA_CERT", pki.caFile)
		r, _ := run(t)
		r.wantCode(t, 0)
	})
	t.Run("literal value", func(t *testing.T) {
		r, _ := run(t, "--header", "X-Api-Key: "+gatewayKey, "--ca-cert", pki.caFile)
		r.wantCode(t, 0)
	})
	t.Run("no header", func(t *testing.T) {
		r, _ := run(t, "--ca-cert", pki.caFile)
		r.wantCode(t, 1, "401 Unauthorized", "--header 'Name: value'")
	})
	t.Run("wrong header", func(t *testing.T) {
		r, _ := run(t, "--ca-cert", pki.caFile, "--header", "x-api-key: not-the-key")
		r.wantCode(t, 1, "401 Unauthorized")
	})
	t.Run("scrape", func(t *testing.T) {
		args := []string{"scrape", "--url", g.url + "/metrics", "--ca-cert", pki.caFile}
		r := runCLI(t, ctx, append(args, "--header", "x-api-key: env:GW_KEY")...)
		r.wantCode(t, 0)
		if !strings.Contains(r.stdout, "num_requests_running") {
			t.Errorf("vllmperf scrape through the gateway printed no vLLM metric:\n%s", r.stdout)
		}
		runCLI(t, ctx, args...).wantCode(t, 1, "401 Unauthorized")
	})
	t.Run("no CA", func(t *testing.T) {
		r, _ := run(t, "--header", "x-api-key: env:GW_KEY")
		r.wantCode(t, 1, "certificate signed by unknown authority", "--ca-cert FILE")
	})
	t.Run("wrong CA", func(t *testing.T) {
		r, _ := run(t, "--header", "x-api-key: env:GW_KEY", "--ca-cert", newPKI(t).caFile)
		r.wantCode(t, 1, "certificate signed by unknown authority", "the CA given with --ca-cert (or VLLMPERF_CA_CERT) did not sign")
	})
	t.Run("wrong header named with the key", func(t *testing.T) {
		r, _ := run(t, "--ca-cert", pki.caFile, "--header", "x-api-key: not-the-key")
		r.wantCode(t, 1, "a gateway in front of it refused a header the run sends (X-Api-Key")
	})
}

// TestGatewayMTLS: a gateway that requires a client certificate is
// reached with --client-cert and --client-key, and refuses the handshake
// without them.
func TestGatewayMTLS(t *testing.T) {
	testphase.Fault(t)
	ctx := context.Background()
	pki := newPKI(t)
	g := startGateway(t, pki, true)
	t.Setenv("GW_KEY", gatewayKey)
	base := []string{"run", "--quiet", "--target", g.url, "--header", "x-api-key: env:GW_KEY", "--ca-cert", pki.caFile,
		"--concurrency", "1", "--requests", "2", "--warmup", "0", "--max-tokens", "8", "--prompt-tokens", "16"}
	t.Run("client certificate", func(t *testing.T) {
		runCLI(t, ctx, append(base, "--client-cert", pki.clientCert, "--client-key", pki.clientKey)...).wantCode(t, 0)
	})
	t.Run("none", func(t *testing.T) {
		r := runCLI(t, ctx, base...)
		r.wantCode(t, 1, "tls: certificate required", "give --client-cert and --client-key")
	})
}

// TestGatewayFlagsRejected: bad gateway settings are usage errors
// that name the flag or variable and the fix, before anything is sent.
func TestGatewayFlagsRejected(t *testing.T) {
	testphase.Fault(t)
	ctx := context.Background()
	pki := newPKI(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EMPTY_KEY", "")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		// No colon: not a header.
		{"no colon", []string{"--header", "x-api-key"}, nil, `--header "[REDACTED]": want 'Name: value'`},
		// A name with a space.
		{"bad name", []string{"--header", "x api key: v"}, nil, `header name "x api key" is not an HTTP token`},
		// Host is the URL's.
		{"host", []string{"--header", "Host: example"}, nil, "header Host is set by the transport itself"},
		// The variable is empty: said, never sent empty.
		{"empty variable", []string{"--header", "x-api-key: env:EMPTY_KEY"}, nil, "--header X-Api-Key: $EMPTY_KEY is empty or unset"},
		// The environment's header is named by its variable.
		{"variable", nil, map[string]string{"VLLMPERF_HEADERS": "broken"}, `VLLMPERF_HEADERS "[REDACTED]": want 'Name: value'`},
		// A CA file that holds no certificate.
		{"CA not PEM", []string{"--ca-cert", notPEM}, nil, "--ca-cert " + notPEM + ": no PEM certificate in the file"},
		// A missing CA file.
		{"CA missing", []string{"--ca-cert", notPEM + ".gone"}, nil, "--ca-cert: open " + notPEM + ".gone"},
		// A certificate without its key.
		{"cert without key", []string{"--client-cert", pki.clientCert}, nil, "--client-cert needs its private key"},
		// A key that is not the certificate's.
		{"key mismatch", []string{"--client-cert", pki.clientCert, "--client-key", pki.caFile}, nil, "--client-cert " + pki.clientCert + " with --client-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append([]string{"run", "--quiet", "--target", "https://127.0.0.1:1", "--concurrency", "1", "--requests", "1"}, tc.args...)
			runCLI(t, ctx, args...).wantCode(t, 2, tc.want)
		})
	}
	t.Run("without target", func(t *testing.T) {
		runCLI(t, ctx, "run", "--quiet", "--header", "a: b", "--concurrency", "1", "--requests", "1").
			wantCode(t, 2, "--header, --ca-cert, --client-cert and --client-key say how to reach a running server: give --target too")
	})
	// capacity takes the same flags: a bad one is refused before any run.
	t.Run("capacity", func(t *testing.T) {
		runCLI(t, ctx, "capacity", "--quiet", "--target", "https://127.0.0.1:1", "--header", "x-api-key").
			wantCode(t, 2, `--header "[REDACTED]": want 'Name: value'`)
	})
	t.Run("capacity without target", func(t *testing.T) {
		runCLI(t, ctx, "capacity", "--quiet", "--header", "a: b").
			wantCode(t, 2, "give --target too")
	})
}
