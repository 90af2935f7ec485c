package taskmem_test

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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// selfSignedCert writes a certificate for 127.0.0.1 and localhost and its
// key as PEM files, and returns their paths and a pool that trusts it.
func selfSignedCert(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "taskmem test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, roots
}

func TestTokenTravelsOverTLS(t *testing.T) {
	certFile, keyFile, roots := selfSignedCert(t)
	srv := startServer(t, "--api-key", "secret", "--tls-cert-file", certFile, "--tls-key-file", keyFile)
	ctx := testContext(t)

	client := srv.dial(t, taskmem.WithTLS(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}), taskmem.WithToken("secret"))
	if _, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{Name: "over tls"}); err != nil {
		t.Fatalf("CreateTask over TLS: %v", err)
	}

	dialCtx, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	_, err := taskmem.Dial(dialCtx, srv.addr, taskmem.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}), taskmem.WithToken("secret"))
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Dial with a certificate the client does not trust: %v, want code Unavailable saying why", err)
	}
}
