package main

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/kubelet"
	"github.com/minikubelet/minikubelet/kubelet/config"
	"github.com/minikubelet/minikubelet/kubeletserver"
)

// kubeletEndpoint is one node's kubelet server: its listener, opened at start, and the address
// and port the node advertises (InternalIP and daemonEndpoints.kubeletEndpoint.Port).
type kubeletEndpoint struct {
	node string
	l    net.Listener
	ip   net.IP
	port int32
	cert tls.Certificate
}

// hostPort is where the API server and Prometheus reach the node.
func (e *kubeletEndpoint) hostPort() string {
	return net.JoinHostPort(e.ip.String(), strconv.Itoa(int(e.port)))
}

// kubeletServers are the kubelet servers of every node of the process, one listener each, as
// each kubelet has its own: node i listens on the port after node i-1's, from --port (10250),
// or on a free port when that one is taken or --port is 0. They are opened before anything else,
// so that a port the user chose and another process holds fails the start before anything is
// printed or written.
type kubeletServers struct {
	cfg    *runConfig
	listen string // the listen address, "" for each node's own address
	nodes  []kubeletEndpoint
	byName map[string]int
	// ca signed the nodes' serving certificates; nil when --tls-cert-file gave one.
	ca *authority
	// clientCAs authenticate client certificates (x509.clientCAFile, else the API server's
	// authority).
	clientCAs *x509.CertPool
}

// openKubeletServers opens every node's listener: on the configured address, else the node's
// own address (nodeIP), which it advertises.
func openKubeletServers(ctx context.Context, cfg *runConfig, names []string, nodeIP net.IP) (*kubeletServers, error) {
	host, portStr, err := net.SplitHostPort(cfg.KubeletAddr)
	if err != nil {
		return nil, fmt.Errorf("kubelet server address %q: %w", cfg.KubeletAddr, err)
	}
	base, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("kubelet server address %q: %w", cfg.KubeletAddr, err)
	}
	s := &kubeletServers{cfg: cfg, listen: host, byName: make(map[string]int, len(names))}
	if host == "" {
		host = nodeIP.String()
	} else if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() && !ip.Equal(nodeIP) {
		klog.FromContext(ctx).Info("Warning: the kubelet server listens on another address than the node advertises: the API server will not reach it",
			"address", host, "nodeIP", nodeIP.String())
	}
	logger := klog.FromContext(ctx)
	for i, name := range names {
		port := 0
		if base != 0 && base+i <= 65535 {
			port = base + i
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil && port != 0 && errors.Is(err, syscall.EADDRINUSE) && (i > 0 || cfg.KubeletPortFallback) {
			logger.Info("Warning: the kubelet port is in use; taking a free port", "node", name, "address", addr, "err", err)
			l, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("kubelet server of node %s: listen on %s: %w", name, addr, err)
		}
		s.byName[name] = len(s.nodes)
		s.nodes = append(s.nodes, kubeletEndpoint{node: name, l: l, ip: nodeIP, port: int32(l.Addr().(*net.TCPAddr).Port)})
	}
	return s, nil
}

// close closes the listeners; those being served are closed by their servers as well.
func (s *kubeletServers) close() {
	for _, e := range s.nodes {
		_ = e.l.Close()
	}
}

// endpoint is the node's endpoint.
func (s *kubeletServers) endpoint(name string) *kubeletEndpoint {
	i, ok := s.byName[name]
	if !ok {
		return nil
	}
	return &s.nodes[i]
}

// kubeletAuthorityName names the authority of the nodes' self-signed serving certificates.
const kubeletAuthorityName = "minikubelet-kubelet-ca"

// setClientCAs sets the authorities that authenticate client certificates: x509.clientCAFile
// (--client-ca-file), else apiCA, the authority (PEM) of the API server the nodes use, as
// kubeadm gives the kubelet the cluster's CA, which signs the API server's kubelet client
// certificate. Without either, no certificate authenticates.
func (s *kubeletServers) setClientCAs(apiCA []byte) error {
	switch f := s.cfg.Kubelet.Server.Authentication.ClientCAFile; {
	case f != "":
		pool, err := certutil.NewPool(f)
		if err != nil {
			return fmt.Errorf("unable to load client CA file %s: %w", f, err)
		}
		s.clientCAs = pool
	case len(apiCA) > 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(apiCA) {
			return errors.New("the API server's certificate authority holds no certificate")
		}
		s.clientCAs = pool
	}
	return nil
}

// makeCertificates gives every node its serving certificate, as the kubelet's InitializeTLS:
// --tls-cert-file and --tls-private-key-file when given, for every node alike; else one made at
// start for the node's name and address, which one authority of the process signs (the
// kubelet's own is self-signed and names its host only), with a key the nodes share.
func (s *kubeletServers) makeCertificates() error {
	srv := s.cfg.Kubelet.Server
	if srv.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(srv.TLSCertFile, srv.TLSPrivateKeyFile)
		if err != nil {
			return fmt.Errorf("load the kubelet serving certificate %s: %w", srv.TLSCertFile, err)
		}
		for i := range s.nodes {
			s.nodes[i].cert = cert
		}
		return nil
	}
	ca, err := newAuthority(kubeletAuthorityName)
	if err != nil {
		return err
	}
	key, err := newKey()
	if err != nil {
		return err
	}
	s.ca = ca
	now := time.Now().Unix()
	for i := range s.nodes {
		e := &s.nodes[i]
		ips := []net.IP{e.ip}
		if ip := net.ParseIP(s.listen); ip != nil {
			ips = append(ips, ip)
		}
		if e.cert, err = ca.serving(fmt.Sprintf("%s@%d", e.node, now), []string{e.node}, ips, crypto.Signer(key)); err != nil {
			return err
		}
	}
	return nil
}

// tlsConfig is a node's TLS: its certificate, and client certificates requested but not
// verified by TLS, as the kubelet's server does with a client CA: the authenticator verifies
// them, and a request without one may still carry a token.
func (s *kubeletServers) tlsConfig(e *kubeletEndpoint) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{e.cert}, MinVersion: tls.VersionTLS12}
	if s.clientCAs != nil {
		cfg.ClientCAs, cfg.ClientAuth = s.clientCAs, tls.RequestClientCert
	}
	return cfg
}

// auth is the node's authentication and authorization, with its own API client for the
// reviews, as each kubelet has (nil when standalone).
func (s *kubeletServers) auth(name string, client kubernetes.Interface) (*kubeletserver.Auth, error) {
	srv := s.cfg.Kubelet.Server
	a := &kubeletserver.Auth{
		NodeName:    name,
		ClientCAs:   s.clientCAs,
		TokenTTL:    srv.Authentication.WebhookCacheTTL,
		Anonymous:   srv.Authentication.Anonymous,
		AllowTTL:    srv.Authorization.CacheAuthorizedTTL,
		DenyTTL:     srv.Authorization.CacheUnauthorizedTTL,
		FineGrained: s.cfg.Kubelet.FeatureGates.Enabled(config.KubeletFineGrainedAuthz),
	}
	if srv.Authentication.Webhook {
		if client == nil {
			return nil, errors.New("no client provided, cannot use webhook authentication")
		}
		a.Tokens = client.AuthenticationV1().TokenReviews()
	}
	if srv.Authorization.Mode == config.AuthorizationWebhook {
		if client == nil {
			return nil, errors.New("no client provided, cannot use webhook authorization")
		}
		a.Access = client.AuthorizationV1().SubjectAccessReviews()
	}
	return a, nil
}

// serve serves the node's kubelet on its endpoint in g, until ctx is done.
func (s *kubeletServers) serve(ctx context.Context, name string, k *kubelet.Kubelet, client kubernetes.Interface, clk clock.PassiveClock, g *group) error {
	e := s.endpoint(name)
	auth, err := s.auth(name, client)
	if err != nil {
		return fmt.Errorf("kubelet server of node %s: %w", name, err)
	}
	cfg := s.cfg
	h, err := kubeletserver.NewNodeHandler(kubeletserver.NodeOptions{
		Board:             k.Board,
		Clock:             clk,
		Metrics:           k.Metrics.Handler(),
		ProbeMetrics:      k.Metrics.ProbesHandler(),
		Configz:           s.configz(e),
		SyncLoopThreshold: max(2*cfg.Kubelet.SyncFrequency, 5*time.Minute),
		DisableDebugging:  !cfg.Kubelet.Server.EnableDebuggingHandlers,
		Profiling:         cfg.Kubelet.Server.EnableProfilingHandler,
		Cmdline:           redactedArgs(os.Args),
		Auth:              auth,
	})
	if err != nil {
		return fmt.Errorf("serve node %s: %w", name, err)
	}
	tlsConfig := s.tlsConfig(e)
	g.Go(ctx, "kubelet server of "+name, func(ctx context.Context) error { return serveKubelet(ctx, e.l, h, tlsConfig) })
	logger := klog.FromContext(ctx)
	logger.Info("Starting to listen", "address", e.l.Addr().String(), "node", name)
	if exposed(e.l.Addr()) && auth.Anonymous && auth.Access == nil {
		logger.Info("WARNING: the kubelet server lets anonymous requests do everything and listens on a non-loopback address: anyone who can reach it can read every pod, its logs and the node's metrics",
			"address", e.l.Addr().String())
	}
	return nil
}

// configz is the part of the KubeletConfiguration the simulated kubelet honours, with the v1beta1
// field names.
func (s *kubeletServers) configz(e *kubeletEndpoint) map[string]any {
	cfg := s.cfg
	srv := cfg.Kubelet.Server
	address := s.listen
	if address == "" {
		address = e.ip.String()
	}
	authn := map[string]any{
		"x509":      map[string]any{"clientCAFile": srv.Authentication.ClientCAFile},
		"webhook":   map[string]any{"enabled": srv.Authentication.Webhook, "cacheTTL": srv.Authentication.WebhookCacheTTL.String()},
		"anonymous": map[string]any{"enabled": srv.Authentication.Anonymous},
	}
	authz := map[string]any{"mode": srv.Authorization.Mode, "webhook": map[string]any{
		"cacheAuthorizedTTL": srv.Authorization.CacheAuthorizedTTL.String(), "cacheUnauthorizedTTL": srv.Authorization.CacheUnauthorizedTTL.String(),
	}}
	return map[string]any{
		"enableServer":            srv.Enable,
		"staticPodPath":           cfg.Kubelet.Sources.StaticPodPath,
		"staticPodURL":            cfg.Kubelet.Sources.StaticPodURL,
		"syncFrequency":           cfg.Kubelet.SyncFrequency.String(),
		"fileCheckFrequency":      cfg.Kubelet.Sources.FileCheckFrequency.String(),
		"httpCheckFrequency":      cfg.Kubelet.Sources.HTTPCheckFrequency.String(),
		"address":                 address,
		"port":                    e.port,
		"readOnlyPort":            0,
		"tlsCertFile":             srv.TLSCertFile,
		"tlsPrivateKeyFile":       srv.TLSPrivateKeyFile,
		"enableDebuggingHandlers": srv.EnableDebuggingHandlers,
		"enableProfilingHandler":  srv.EnableProfilingHandler,
		"healthzPort":             0,
		"authentication":          authn,
		"authorization":           authz,
	}
}

// publish makes the nodes' servers ready for their clients once the API server is known: the
// client CA defaults to its authority, and the nodes' authority and Prometheus targets are
// written beside the embedded API server's kubeconfig, else into the certificate directory
// (--cert-dir, by default <root-dir>/pki), or nowhere without either.
func (s *kubeletServers) publish(ctx context.Context, cfg *runConfig, conn apiConnection) error {
	if err := s.setClientCAs(conn.caData); err != nil {
		return err
	}
	dir := conn.kubeconfigDir
	if dir == "" {
		dir = cfg.CertDir
	}
	logger := klog.FromContext(ctx)
	if dir == "" {
		logger.Info("No directory for the kubelet servers' authority and Prometheus targets: set --cert-dir or --root-dir")
		return nil
	}
	caPath, targets, err := s.writeFiles(dir)
	if err != nil {
		return err
	}
	logger.Info("Wrote the kubelet servers' files", "authority", caPath, "prometheusTargets", targets)
	if w := cfg.Announce; w != nil && conn.kubeconfigDir != "" {
		first := s.nodes[0]
		more := ""
		if n := len(s.nodes) - 1; n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		fmt.Fprintf(w, "kubelet servers: https://%s (%s)%s, Prometheus targets in %s", first.hostPort(), first.node, more, targets)
		if caPath != "" {
			fmt.Fprintf(w, ", their authority in %s", caPath)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// The files `run` writes beside the kubeconfig (or in the certificate directory) for the nodes'
// clients: the authority of their serving certificates, and their addresses as Prometheus'
// file-based service discovery reads them.
const (
	kubeletCAFile      = "kubelet-ca.crt"
	kubeletTargetsFile = "kubelet-targets.json"
)

// writeFiles writes the nodes' authority (when the process made it) and their Prometheus targets
// into dir, and returns their paths.
func (s *kubeletServers) writeFiles(dir string) (caPath, targetsPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("kubelet files: %w", err)
	}
	if s.ca != nil {
		caPath = filepath.Join(dir, kubeletCAFile)
		if err := replaceFile(caPath, s.ca.pem, 0o644); err != nil {
			return "", "", err
		}
	}
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := make([]group, 0, len(s.nodes))
	for _, e := range s.nodes {
		groups = append(groups, group{Targets: []string{e.hostPort()}, Labels: map[string]string{"node": e.node}})
	}
	b, err := json.MarshalIndent(groups, "", "  ")
	if err != nil {
		return "", "", err
	}
	targetsPath = filepath.Join(dir, kubeletTargetsFile)
	if err := replaceFile(targetsPath, append(b, '\n'), 0o644); err != nil {
		return "", "", err
	}
	return caPath, targetsPath, nil
}

// replaceFile writes data to a new file beside path and renames it over path, so that a reader
// (Prometheus watching its targets) never sees half a file, and a link at path is replaced, not
// followed.
func replaceFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	// CreateTemp makes the file with mode 0600, exclusively: nobody else can have opened it.
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// kubeletClientTLS is how the embedded API server and its metrics scraper call the nodes: with
// the API server's kubelet client certificate, verifying the nodes' certificates against their
// authority when the process made it (kube-apiserver's --kubelet-certificate-authority), else not
// at all, as kube-apiserver without the flag.
func kubeletClientTLS(cert *tls.Certificate, kubeletCA *authority) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if kubeletCA != nil {
		cfg.RootCAs = kubeletCA.pool()
	} else {
		cfg.InsecureSkipVerify = true
	}
	return cfg
}
