package realcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// PKI is a cluster's certificate authority and the service-account key pair, generated for one
// test as kubeadm's `init phase certs` would (without the front proxy and etcd CAs: etcd listens
// on loopback without TLS, and nothing here is aggregated).
type PKI struct {
	Dir    string
	CA     *x509.Certificate
	caKey  crypto.Signer
	CAFile string
	// CAKeyFile is the CA's key, for the controller manager's CSR signer.
	CAKeyFile string
	// ServiceAccountKey and ServiceAccountPub are the key pair that signs service-account tokens.
	ServiceAccountKey, ServiceAccountPub string
}

// Identity is a client certificate's user: its common name is the user name and its
// organizations are the groups, as kube-apiserver's x509 authenticator reads them.
type Identity struct {
	User   string
	Groups []string
}

// The identities of the control plane's own clients, as kubeadm names them.
var (
	AdminIdentity             = Identity{User: "kubernetes-admin", Groups: []string{"system:masters"}}
	ControllerManagerIdentity = Identity{User: "system:kube-controller-manager"}
	SchedulerIdentity         = Identity{User: "system:kube-scheduler"}
	// APIServerKubeletClient is the identity kube-apiserver presents to kubelets (--kubelet-client-certificate).
	APIServerKubeletClient = Identity{User: "kube-apiserver-kubelet-client", Groups: []string{"kubeadm:cluster-admins"}}
)

// NodeIdentity is a kubelet's identity, which the Node authorizer and NodeRestriction recognise.
func NodeIdentity(node string) Identity {
	return Identity{User: "system:node:" + node, Groups: []string{"system:nodes"}}
}

// NewPKI generates a CA and a service-account key pair into dir.
func NewPKI(dir string) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki directory %s: %w", dir, err)
	}
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse the CA certificate: %w", err)
	}
	p := &PKI{Dir: dir, CA: ca, caKey: key, CAFile: filepath.Join(dir, "ca.crt")}
	if err := writePEM(p.CAFile, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	// The controller manager signs CertificateSigningRequests with the CA's key, as kubeadm's.
	p.CAKeyFile = filepath.Join(dir, "ca.key")
	if err := writeKey(p.CAKeyFile, key); err != nil {
		return nil, err
	}
	saKey, err := newKey()
	if err != nil {
		return nil, err
	}
	p.ServiceAccountKey, p.ServiceAccountPub = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := writeKey(p.ServiceAccountKey, saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, fmt.Errorf("marshal the service-account public key: %w", err)
	}
	if err := writePEM(p.ServiceAccountPub, "PUBLIC KEY", pub); err != nil {
		return nil, err
	}
	return p, nil
}

// ServingCert writes a serving certificate for the names and addresses into name.crt and
// name.key, and returns their paths.
func (p *PKI) ServingCert(name string, dnsNames []string, ips []net.IP) (certFile, keyFile string, err error) {
	return p.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	})
}

// ClientCert writes a client certificate for id into name.crt and name.key.
func (p *PKI) ClientCert(name string, id Identity) (certFile, keyFile string, err error) {
	return p.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: id.User, Organization: id.Groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// Kubeconfig writes a kubeconfig for id against server into name.kubeconfig, with the client
// certificate embedded, and returns its path.
func (p *PKI) Kubeconfig(name, server string, id Identity) (string, error) {
	certFile, keyFile, err := p.ClientCert(name, id)
	if err != nil {
		return "", err
	}
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return "", err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return "", err
	}
	ca, err := os.ReadFile(p.CAFile)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "user"}
	cfg.CurrentContext = "default"
	path := filepath.Join(p.Dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return path, nil
}

func (p *PKI) issue(name string, tmpl *x509.Certificate) (certFile, keyFile string, err error) {
	key, err := newKey()
	if err != nil {
		return "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", "", fmt.Errorf("serial number for %s: %w", name, err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(10*24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, key.Public(), p.caKey)
	if err != nil {
		return "", "", fmt.Errorf("issue the certificate %s: %w", name, err)
	}
	certFile, keyFile = filepath.Join(p.Dir, name+".crt"), filepath.Join(p.Dir, name+".key")
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	return certFile, keyFile, writeKey(keyFile, key)
}

// newKey makes an ECDSA P-256 key: kube-apiserver, the kubelet's client and client-go accept it,
// and it is generated in microseconds where RSA takes a good part of a second on a loaded machine.
func newKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate a key: %w", err)
	}
	return k, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal the key %s: %w", path, err)
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, kind string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
