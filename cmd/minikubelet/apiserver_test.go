package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestAPIServerCommandServesUntilCancelled runs `minikubelet apiserver` in-process: it announces
// its URL, writes a working kubeconfig, serves client-go, and returns nil once cancelled.
func TestAPIServerCommandServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	url, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc})
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("URL = %q, want a loopback one", url)
	}
	cfg, err := restConfigFromKubeconfig(kc)
	if err != nil {
		t.Fatalf("restConfigFromKubeconfig() error = %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod through the kubeconfig: %v", err)
	}
	list, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list pods = %v, %v, want the one pod", list, err)
	}
	if err := stop(); err != nil {
		t.Errorf("runAPIServer() after cancel = %v, want nil", err)
	}
}

// startAPIServerCommand runs runAPIServer with cfg until stop is called, and returns the URL it
// announced. stop cancels it and returns its result, or stops the test if it does not return
// before ctx ends.
func startAPIServerCommand(t *testing.T, ctx context.Context, cfg apiserverConfig) (url string, stop func() error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	serveCtx, cancel := context.WithCancel(ctx)
	go func() {
		done <- runAPIServer(serveCtx, cfg, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr) // nothing more is printed, but never block the server on it
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "fake API server listening on ")
	if err != nil || !ok {
		cancel()
		t.Fatalf("first line = %q, %v, want the URL", line, err)
	}
	return url, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			t.Fatal("runAPIServer() did not return after cancel")
			return nil
		}
	}
}

// TestAPIServerCommandStopsWithStuckWatcher opens a watch over TCP that reads its response line
// and then nothing more, while the server has megabytes of events to send it. Cancelling must
// still end runAPIServer: the server gives requests in flight a short grace and then closes them.
func TestAPIServerCommandStopsWithStuckWatcher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	// Plain HTTP, so that the test can speak it on a bare connection.
	url, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc,
		Security: securityConfig{NoAuth: true, NoTLS: true}})
	cfg, err := restConfigFromKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	// Sixteen pods of 1 MiB each: more than the kernel buffers of one loopback connection hold.
	// The megabyte is a container argument: annotations are bounded to 256 KiB.
	big := strings.Repeat("x", 1<<20)
	for i := range 16 {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default"},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox", Args: []string{big}}}},
		}
		if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod p%d: %v", i, err)
		}
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET /api/v1/pods?watch=1&resourceVersion=0 HTTP/1.1\r\nHost: fake\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("watch response = %q, %v, want 200", status, err)
	}
	if err := stop(); err != nil {
		t.Errorf("runAPIServer() after cancel with a watch client that stopped reading = %v, want nil", err)
	}
}

// TestAPIServerWildcardAddress serves on every interface, the way shards reach the server, with
// extra names from --tls-san: the kubeconfig names an address its certificate covers (not the
// wildcard, which no certificate covers), a client that verifies the server with nothing but
// the kubeconfig reaches it, and the certificate names the extra names.
func TestAPIServerWildcardAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0"} {
		t.Run(addr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			sec := securityConfig{TLSSANs: []string{"apiserver.example", "192.0.2.7"}}
			url, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: addr, WriteKubeconfig: kc, Security: sec})
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("runAPIServer() after cancel = %v", err)
				}
			}()
			cfg, err := restConfigFromKubeconfig(kc)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != url {
				t.Errorf("kubeconfig server = %q, want the announced %q", cfg.Host, url)
			}
			host, _, err := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
			if err != nil {
				t.Fatal(err)
			}
			if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
				t.Errorf("kubeconfig server = %q, want an address clients can verify, not a wildcard", url)
			}
			client := kubernetes.NewForConfigOrDie(cfg)
			if _, err := client.Discovery().ServerVersion(); err != nil {
				t.Fatalf("a client with the kubeconfig: %v", err)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(cfg.CAData)
			conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: pool})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			leaf := conn.ConnectionState().PeerCertificates[0]
			if err := leaf.VerifyHostname("apiserver.example"); err != nil {
				t.Errorf("certificate and --tls-san apiserver.example: %v", err)
			}
			if err := leaf.VerifyHostname("192.0.2.7"); err != nil {
				t.Errorf("certificate and --tls-san 192.0.2.7: %v", err)
			}
		})
	}
}

// TestCheckServingRefusesAnUnverifiableServer gives the start's check a URL whose certificate
// the authority does not cover: it fails with an error naming the URL, so that the command exits
// 1 instead of serving clients that can never connect.
func TestCheckServingRefusesAnUnverifiableServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, sv, err := securityConfig{}.listen("127.0.0.1:0", "token", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard, BearerToken: "token"})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stopServe := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(serveCtx, l) }()
	defer func() { stopServe(); <-done }()
	if err := checkServing(ctx, sv); err != nil {
		t.Fatalf("checkServing() on the address it serves = %v, want nil", err)
	}
	_, other, err := fakeapiserver.SelfSignedTLS(nil)
	if err != nil {
		t.Fatal(err)
	}
	wrong := sv
	wrong.caData = other
	if err := checkServing(ctx, wrong); err == nil || !strings.Contains(err.Error(), sv.url) {
		t.Errorf("checkServing() with another authority = %v, want an error naming %s", err, sv.url)
	}
}
