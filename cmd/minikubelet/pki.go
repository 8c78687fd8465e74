package main

import (
	"crypto"
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
	"slices"
	"time"
)

// certValidity is how long the certificates `run` and `apiserver` make are valid: a year, as the
// kubelet's and the API server's self-signed ones.
const certValidity = 365 * 24 * time.Hour

// authority is a certificate authority made at start, whose key never leaves the process: the
// embedded API server's (its serving certificate, and the client certificate it calls kubelets
// with) and the kubelets' (their serving certificates).
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
	// pem is the authority's certificate, for clients to trust.
	pem []byte
}

// newAuthority makes an authority named name@<unix time>, as client-go's self-signed ones.
func newAuthority(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the key of %s: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", name, now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create the certificate of %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// pool is a pool holding the authority alone.
func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// serving signs a serving certificate for the names and addresses with key (a new one when
// nil). The chain holds the authority too, as the kubelet's self-signed certificate file does.
func (a *authority) serving(cn string, names []string, ips []net.IP, key crypto.Signer) (tls.Certificate, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    slices.Compact(slices.Clone(names)),
	}
	for _, ip := range ips {
		if ip != nil && !ip.IsUnspecified() && !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		}
	}
	return a.sign(tmpl, key)
}

// client signs a client certificate for user in groups: its common name and organizations, as
// kube-apiserver's and the kubelet's x509 authenticators read them.
func (a *authority) client(user string, groups ...string) (tls.Certificate, error) {
	return a.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, nil)
}

func (a *authority) sign(tmpl *x509.Certificate, key crypto.Signer) (tls.Certificate, error) {
	if key == nil {
		k, err := newKey()
		if err != nil {
			return tls.Certificate{}, err
		}
		key = k
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(certValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("sign a certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: key, Leaf: leaf}, nil
}

// newKey is a new P-256 key, cheap enough to make for a thousand nodes.
func newKey() (crypto.Signer, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate a key: %w", err)
	}
	return k, nil
}

// serial is a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		// crypto/rand does not fail on the platforms Go supports.
		panic(err)
	}
	return n
}
