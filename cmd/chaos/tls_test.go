package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/redisserver"
)

// A Redis that speaks only TLS, with a password: rediss:// makes every
// connection TLS, the instances' through Toxiproxy (which forwards the
// bytes) included.
func TestRedisTLS(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server")
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeSelfSigned(t, cert, key)
	port, err := redisserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const pw = "tls-s3cret-9"
	cmd := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", cert, "--tls-auth-clients", "no",
		"--requirepass", pw, "--save", "", "--appendonly", "no", "--dir", dir, "--hz", "100")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "rediss://:" + pw + "@127.0.0.1:" + strconv.Itoa(port) + "/0?skip_verify=true"
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Skipf("redis-server without TLS support? %v", c.Ping(context.Background()).Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Setenv("LEASELAB_REDIS_ADDR", "")
	t.Setenv("LEASELAB_REDIS_URL", "")
	out := t.TempDir()
	code, stdout, stderr := chaos(t, "run", "testdata/quick.yaml", "--out", out, "--redis-url", url, "--quiet")
	if code != exitOK {
		t.Fatalf("rediss://: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, pw) {
		t.Errorf("the password is shown:\n%s%s", stdout, stderr)
	}
	// Plain TCP to a TLS-only port is an environment error, said once.
	code, _, stderr = chaos(t, "run", "testdata/quick.yaml", "--out", t.TempDir(), "--redis-url", strings.TrimSuffix(strings.Replace(url, "rediss://", "redis://", 1), "?skip_verify=true"), "--quiet")
	if code != exitEnv || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || strings.Contains(stderr, pw) {
		t.Errorf("redis:// to a TLS port: exit %d\n%s", code, stderr)
	}
}

func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "leaselab test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}
