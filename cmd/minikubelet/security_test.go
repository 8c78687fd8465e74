package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
)

// TestAPIServerCommandSecurity starts `minikubelet apiserver` with each security setting and
// checks what its kubeconfig carries, that a client with it is served and that one without the
// token is refused.
func TestAPIServerCommandSecurity(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sec       securityConfig
		scheme    string
		wantToken string // "" for none, "*" for a generated one
	}{
		{"default", securityConfig{}, "https://", "*"},
		{"fixed token", securityConfig{Token: "my-token"}, "https://", "my-token"},
		{"no auth", securityConfig{NoAuth: true}, "https://", ""},
		{"no auth, no tls", securityConfig{NoAuth: true, NoTLS: true}, "http://", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			url, stop := startAPIServerCommand(t, ctx, apiserverConfig{Addr: "127.0.0.1:0", WriteKubeconfig: kc, Security: tc.sec})
			defer func() {
				if err := stop(); err != nil {
					t.Errorf("runAPIServer() = %v", err)
				}
			}()
			if !strings.HasPrefix(url, tc.scheme) {
				t.Errorf("URL = %q, want %s", url, tc.scheme)
			}
			cfg, err := restConfigFromKubeconfig(kc)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantToken == "*" && len(cfg.BearerToken) < 20:
				t.Errorf("kubeconfig token = %q, want a generated one", cfg.BearerToken)
			case tc.wantToken != "*" && cfg.BearerToken != tc.wantToken:
				t.Errorf("kubeconfig token = %q, want %q", cfg.BearerToken, tc.wantToken)
			}
			if got := len(cfg.CAData) > 0; got == tc.sec.NoTLS {
				t.Errorf("kubeconfig carries a certificate authority = %v, want %v", got, !tc.sec.NoTLS)
			}
			list := func(cfg *rest.Config) error {
				_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("").List(ctx, metav1.ListOptions{})
				return err
			}
			if err := list(cfg); err != nil {
				t.Errorf("list with the kubeconfig = %v, want it served", err)
			}
			anonymous := rest.CopyConfig(cfg)
			anonymous.BearerToken = ""
			err = list(anonymous)
			if tc.wantToken == "" && err != nil {
				t.Errorf("list without a token and --no-auth = %v, want it served", err)
			}
			if tc.wantToken != "" && !apierrors.IsUnauthorized(err) {
				t.Errorf("list without the token = %v, want Unauthorized", err)
			}
		})
	}
}

func TestSecurityConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    securityConfig
		want string // "" for valid
	}{
		{"default", securityConfig{}, ""},
		{"token", securityConfig{Token: "x"}, ""},
		{"no auth", securityConfig{NoAuth: true}, ""},
		{"no auth, no tls", securityConfig{NoAuth: true, NoTLS: true}, ""},
		{"no auth and a token", securityConfig{NoAuth: true, Token: "x"}, "exclude each other"},
		{"a token over plain HTTP", securityConfig{NoTLS: true}, "--no-tls needs --no-auth"},
		{"extra names", securityConfig{TLSSANs: []string{"apiserver.example", "*.shards.example", "10.0.0.1", "::1"}}, ""},
		{"extra names without TLS", securityConfig{NoAuth: true, NoTLS: true, TLSSANs: []string{"a.example"}}, "--tls-san needs TLS"},
		{"an extra name that is no name", securityConfig{TLSSANs: []string{"not a name"}}, `--tls-san "not a name"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("validate(%+v) = %v, want %q", tc.c, err, tc.want)
			}
		})
	}
}

// TestWarnIfExposed checks the warning for each way of listening beyond loopback.
func TestWarnIfExposed(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr string
		sv   serving
		want string // "" for no warning
	}{
		{"loopback without anything", "127.0.0.1:8080", serving{}, ""},
		{"exposed without auth", "0.0.0.0:8080", serving{}, "has no authentication"},
		{"exposed without auth, with TLS", "0.0.0.0:8080", serving{caData: []byte("ca")}, "has no authentication"},
		{"exposed with a token", "10.1.2.3:8080", serving{token: "t"}, ""},
		{"exposed with a token and TLS", "[::]:8080", serving{token: "t", caData: []byte("ca")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			a, err := net.ResolveTCPAddr("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			warnIfExposed(logger, a, tc.sv)
			got := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			switch {
			case tc.want == "" && got != "":
				t.Errorf("warnIfExposed(%s) logged %q, want nothing", tc.addr, got)
			case tc.want != "" && !(strings.Contains(got, "WARNING") && strings.Contains(got, tc.want)):
				t.Errorf("warnIfExposed(%s) logged %q, want a WARNING with %q", tc.addr, got, tc.want)
			}
		})
	}
}

// TestRedactedArgs leaves the secrets out of a command line, in every way a flag may be spelt.
func TestRedactedArgs(t *testing.T) {
	in := []string{"minikubelet", "run", "--token", "s3cret", "--hostname-override", "n1", "-token=s3cret",
		"--manifest-url-header=Authorization:Bearer s3cret", "--manifest-url-header", "a:b", "--token"}
	want := []string{"minikubelet", "run", "--token", "<redacted>", "--hostname-override", "n1", "-token=<redacted>",
		"--manifest-url-header=<redacted>", "--manifest-url-header", "<redacted>", "--token"}
	if diff := cmp.Diff(want, redactedArgs(in)); diff != "" {
		t.Errorf("redactedArgs() (-want +got):\n%s", diff)
	}
	if in[3] != "s3cret" {
		t.Error("redactedArgs changed its input")
	}
}

// TestDebugHandlerSettings reads enableDebuggingHandlers and enableProfilingHandler from --config
// and --enable-debugging-handlers: debugging on and profiling off unless asked for, the flag
// winning over the file.
func TestDebugHandlerSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nenableDebuggingHandlers: false\nenableProfilingHandler: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		args                 []string
		debugging, profiling bool
	}{
		{"defaults", nil, true, false},
		{"config", []string{"--config", path}, false, true},
		{"flag over config", []string{"--config", path, "--enable-debugging-handlers=true"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := resolveArgs(t, append([]string{"--hostname-override", "n1", "--standalone"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got, gotP := cfg.Kubelet.Server.EnableDebuggingHandlers, cfg.Kubelet.Server.EnableProfilingHandler; got != tc.debugging || gotP != tc.profiling {
				t.Errorf("debugging, profiling = %v, %v, want %v, %v", got, gotP, tc.debugging, tc.profiling)
			}
		})
	}
}
