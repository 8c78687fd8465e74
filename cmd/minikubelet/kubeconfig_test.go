package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestWrittenKubeconfigIsStrict checks the kubeconfig --write-kubeconfig writes against what the
// strictest clients demand: over HTTPS the certificate authority that verifies the server (and
// no insecure-skip-tls-verify, which client-go refuses beside one); over plain HTTP
// insecure-skip-tls-verify set, without which the JavaScript client refuses an http:// server.
// Then a client that verifies the server with nothing but the file reaches it, and so does
// kubectl where it is installed.
func TestWrittenKubeconfigIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sec        securityConfig
		scheme     string
		wantCA     bool
		wantSkipOK bool
	}{
		{"https", securityConfig{}, "https://", true, false},
		{"plain http", securityConfig{NoAuth: true, NoTLS: true}, "http://", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			_, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc, Security: tc.sec})
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("runAPIServer() after cancel = %v", err)
				}
			}()
			cfg, err := clientcmd.LoadFromFile(kc)
			if err != nil {
				t.Fatalf("LoadFromFile() = %v", err)
			}
			cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
			if !strings.HasPrefix(cluster.Server, tc.scheme) {
				t.Errorf("server = %q, want %s", cluster.Server, tc.scheme)
			}
			if got := len(cluster.CertificateAuthorityData) > 0; got != tc.wantCA {
				t.Errorf("certificate-authority-data present = %v, want %v", got, tc.wantCA)
			}
			if cluster.InsecureSkipTLSVerify != tc.wantSkipOK {
				t.Errorf("insecure-skip-tls-verify = %v, want %v", cluster.InsecureSkipTLSVerify, tc.wantSkipOK)
			}
			if err := clientcmd.Validate(*cfg); err != nil {
				t.Errorf("clientcmd.Validate() = %v", err)
			}
			rc, err := restConfigFromKubeconfig(kc)
			if err != nil {
				t.Fatal(err)
			}
			client, err := kubernetes.NewForConfig(rc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
				t.Errorf("get namespace default through the kubeconfig = %v", err)
			}
			if _, err := exec.LookPath("kubectl"); err == nil {
				if out := kubectl(t, ctx, kc, "", "get", "namespace", "default", "-o", "name"); strings.TrimSpace(out) != "namespace/default" {
					t.Errorf("kubectl get namespace default = %q", out)
				}
			}
		})
	}
}
