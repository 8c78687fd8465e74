package main

import (
	"context"
	"os"
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

// TestWriteKubeconfigReplacesThePath writes the kubeconfig where something is already: a file
// others may read, a symbolic link to a file elsewhere, a file of another user. The first two
// are replaced by a new file only its owner may read, the link's target untouched; the third
// is refused and left as it was.
func TestWriteKubeconfigReplacesThePath(t *testing.T) {
	sv := serving{url: "https://127.0.0.1:6443", token: "secret-token", caData: []byte("ca")}
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string) (check func(t *testing.T))
		wantErr bool
	}{
		{name: "nothing there", prepare: func(*testing.T, string) func(*testing.T) { return func(*testing.T) {} }},
		{name: "a file others may read", prepare: func(t *testing.T, path string) func(*testing.T) {
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			return func(*testing.T) {}
		}},
		{name: "a link to another file", prepare: func(t *testing.T, path string) func(*testing.T) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if b, err := os.ReadFile(target); err != nil || string(b) != "theirs" {
					t.Errorf("the link's target now holds %q (%v), want it untouched", b, err)
				}
			}
		}},
		{name: "a file of another user", wantErr: true, prepare: func(t *testing.T, path string) func(*testing.T) {
			if os.Getuid() != 0 {
				t.Skip("making a file of another user needs root")
			}
			if err := os.WriteFile(path, []byte("theirs"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if b, err := os.ReadFile(path); err != nil || string(b) != "theirs" {
					t.Errorf("the other user's file now holds %q (%v), want it untouched", b, err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "kubeconfig")
			check := tc.prepare(t, path)
			err := writeKubeconfig(path, sv)
			check(t)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Errorf("writeKubeconfig() = %v, want an error naming %s", err, path)
				}
				return
			}
			if err != nil {
				t.Fatalf("writeKubeconfig() = %v", err)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("kubeconfig mode = %v, want a regular file with mode 0600", fi.Mode())
			}
			cfg, err := clientcmd.LoadFromFile(path)
			if err != nil {
				t.Fatalf("LoadFromFile() = %v", err)
			}
			if got := cfg.AuthInfos["minikubelet"].Token; got != sv.token {
				t.Errorf("token = %q, want %q", got, sv.token)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want the kubeconfig alone (no temporary file left)", len(entries))
			}
		})
	}
}
