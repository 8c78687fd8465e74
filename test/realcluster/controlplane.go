package realcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ControlPlaneOptions say how StartControlPlane starts etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler.
type ControlPlaneOptions struct {
	// Binaries must hold ControlPlaneBinaries.
	Binaries Binaries
	// Dir receives the certificates, kubeconfigs, the audit log and every process's log.
	Dir string
	// BindAddress is where kube-apiserver listens: 127.0.0.1 by default, or an address of a
	// network namespace (InNetNS) so that nodes can advertise addresses it will proxy to.
	BindAddress string
	// AdvertiseAddress is kube-apiserver's --advertise-address, the address of the kubernetes
	// Service's endpoint, which must not be loopback: BindAddress when that is not loopback,
	// else the first non-loopback IPv4 address of the machine.
	AdvertiseAddress string
	// EtcdDir is etcd's data directory: by default a new directory on /dev/shm where it exists
	// (the benchmark measures simulators, not the disk's fsync latency), else under Dir.
	EtcdDir string
	// ClientQPS, when not zero, is the controller manager's and the scheduler's --kube-api-qps and
	// --kube-api-burst. Zero keeps their defaults (20 and 50 QPS), as kubeadm does.
	ClientQPS int
	// ExtraAPIServerArgs are added to kube-apiserver's command line.
	ExtraAPIServerArgs []string
}

// ControlPlane is a running control plane on a fresh etcd.
type ControlPlane struct {
	PKI *PKI
	// URL is kube-apiserver's https URL.
	URL string
	// AdminKubeconfig is a kubeconfig of a system:masters user, as kubeadm's admin.conf.
	AdminKubeconfig string
	AdminConfig     *rest.Config
	Admin           kubernetes.Interface
	// AuditLog is the audit log: every request of a user in the system:nodes group (every
	// simulated kubelet and simulator, see SimulatorIdentity), at the Metadata level.
	AuditLog string
	// Etcd, APIServer, ControllerManager and Scheduler are the processes.
	Etcd, APIServer, ControllerManager, Scheduler *Process

	dir, etcdDir string
	removeEtcd   bool
}

// APIServerFlags are the kube-apiserver flags that matter to kubelets, as kubeadm v1.35 sets
// them (docs/kubelet-server.md lists them). There is no --kubelet-certificate-authority, as in
// kubeadm: kube-apiserver does not verify the kubelet's serving certificate when it calls a
// kubelet (logs, exec, nodes/proxy).
func APIServerFlags(pki *PKI, kubeletClientCert, kubeletClientKey string) []string {
	return []string{
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--client-ca-file=" + pki.CAFile,
		"--kubelet-client-certificate=" + kubeletClientCert,
		"--kubelet-client-key=" + kubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--allow-privileged=true",
		"--enable-bootstrap-token-auth=true",
	}
}

// auditPolicy records the requests of the system:nodes group and nothing else: the simulators'
// identities are all in that group, the control plane's are not.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:nodes"]
- level: None
`

// StartControlPlane starts etcd on a fresh data directory, then kube-apiserver, the controller
// manager and the scheduler, and waits until the API server is ready, the controllers and the
// scheduler answer their health checks, and the default service account exists (pods can be
// created). Stop ends them all.
func StartControlPlane(ctx context.Context, opts ControlPlaneOptions) (cp *ControlPlane, err error) {
	for _, name := range ControlPlaneBinaries {
		if opts.Binaries[name] == "" {
			return nil, fmt.Errorf("control plane: no %s binary", name)
		}
	}
	if opts.BindAddress == "" {
		opts.BindAddress = "127.0.0.1"
	}
	bind := net.ParseIP(opts.BindAddress)
	if bind == nil {
		return nil, fmt.Errorf("control plane: bind address %q is not an IP address", opts.BindAddress)
	}
	if opts.AdvertiseAddress == "" {
		if !bind.IsLoopback() {
			opts.AdvertiseAddress = opts.BindAddress
		} else if opts.AdvertiseAddress, err = hostAddress(); err != nil {
			return nil, err
		}
	}
	cp = &ControlPlane{dir: opts.Dir, etcdDir: opts.EtcdDir}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, cp.tails())
			cp.Stop()
		}
	}()
	if cp.etcdDir == "" {
		cp.etcdDir, err = os.MkdirTemp(shmOr(opts.Dir), "etcd-")
		if err != nil {
			return cp, fmt.Errorf("etcd data directory: %w", err)
		}
		cp.removeEtcd = true
	}

	if cp.PKI, err = NewPKI(filepath.Join(opts.Dir, "pki")); err != nil {
		return cp, err
	}
	if err := cp.startEtcd(ctx, opts.Binaries[Etcd]); err != nil {
		return cp, err
	}
	if err := cp.startAPIServer(ctx, opts); err != nil {
		return cp, err
	}
	if err := cp.startControllers(ctx, opts); err != nil {
		return cp, err
	}
	return cp, nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context, bin string) error {
	client, peer := freePort("127.0.0.1"), freePort("127.0.0.1")
	if client == 0 || peer == 0 {
		return errors.New("etcd: no free port on 127.0.0.1")
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	var err error
	cp.Etcd, err = StartProcess(cp.dir, "etcd", []string{bin,
		"--name=default", "--data-dir=" + cp.etcdDir,
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// kube-apiserver compacts itself every 5 minutes; etcd's own snapshot count keeps memory low.
		"--snapshot-count=10000",
	})
	if err != nil {
		return err
	}
	return waitHTTP(ctx, cp.Etcd, clientURL+"/health", http.DefaultClient, 2*time.Minute)
}

func (cp *ControlPlane) etcdURL() string {
	for _, a := range cp.Etcd.cmd.Args {
		if u, ok := strings.CutPrefix(a, "--listen-client-urls="); ok {
			return u
		}
	}
	return ""
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, opts ControlPlaneOptions) error {
	port := freePort(opts.BindAddress)
	if port == 0 {
		return fmt.Errorf("kube-apiserver: no free port on %s", opts.BindAddress)
	}
	pki := cp.PKI
	ips := []net.IP{net.ParseIP(opts.BindAddress), net.ParseIP(opts.AdvertiseAddress), net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}
	certFile, keyFile, err := pki.ServingCert("apiserver",
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}, ips)
	if err != nil {
		return err
	}
	kcCert, kcKey, err := pki.ClientCert("apiserver-kubelet-client", APIServerKubeletClient)
	if err != nil {
		return err
	}
	cp.AuditLog = filepath.Join(cp.dir, "audit.log")
	policy := filepath.Join(cp.dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return fmt.Errorf("audit policy: %w", err)
	}
	cp.URL = "https://" + net.JoinHostPort(opts.BindAddress, strconv.Itoa(port))
	args := []string{opts.Binaries[KubeAPIServer],
		"--etcd-servers=" + cp.etcdURL(),
		"--bind-address=" + opts.BindAddress, "--secure-port=" + strconv.Itoa(port),
		"--advertise-address=" + opts.AdvertiseAddress,
		"--tls-cert-file=" + certFile, "--tls-private-key-file=" + keyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.ServiceAccountPub,
		"--service-account-signing-key-file=" + pki.ServiceAccountKey,
		"--service-cluster-ip-range=10.96.0.0/12",
		"--audit-policy-file=" + policy, "--audit-log-path=" + cp.AuditLog,
		// One file, never rotated: the tables count every request of the run, and the log of a
		// 500-node run passes the default's 100 MB within minutes.
		"--audit-log-maxsize=" + strconv.Itoa(auditLogMaxMB),
		"--cert-dir=" + filepath.Join(cp.dir, "apiserver-certs"),
	}
	args = append(args, APIServerFlags(pki, kcCert, kcKey)...)
	args = append(args, opts.ExtraAPIServerArgs...)
	if cp.APIServer, err = StartProcess(cp.dir, "kube-apiserver", args); err != nil {
		return err
	}
	if cp.AdminKubeconfig, err = pki.Kubeconfig("admin", cp.URL, AdminIdentity); err != nil {
		return err
	}
	if cp.AdminConfig, err = clientcmd.BuildConfigFromFlags("", cp.AdminKubeconfig); err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	// The harness's own watches and lists must not be throttled on the client side.
	cp.AdminConfig.QPS, cp.AdminConfig.Burst = 1000, 2000
	cp.AdminConfig.UserAgent = "minikubelet-e2e-harness"
	if cp.Admin, err = kubernetes.NewForConfig(cp.AdminConfig); err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	rt, err := rest.TransportFor(cp.AdminConfig)
	if err != nil {
		return fmt.Errorf("admin transport: %w", err)
	}
	if err := waitHTTP(ctx, cp.APIServer, cp.URL+"/readyz", &http.Client{Transport: rt, Timeout: 10 * time.Second}, 3*time.Minute); err != nil {
		return err
	}
	// kubeadm binds its group kubeadm:cluster-admins, which kube-apiserver's kubelet client
	// certificate carries, to cluster-admin: a kubelet that authorizes its callers through
	// SubjectAccessReviews (webhook mode) lets kube-apiserver in for logs, exec and nodes/proxy.
	_, err = cp.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:cluster-admins"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "kubeadm:cluster-admins"}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("bind kubeadm:cluster-admins: %w", err)
	}
	return nil
}

func (cp *ControlPlane) startControllers(ctx context.Context, opts ControlPlaneOptions) error {
	pki := cp.PKI
	kcm, err := pki.Kubeconfig("controller-manager", cp.URL, ControllerManagerIdentity)
	if err != nil {
		return err
	}
	sched, err := pki.Kubeconfig("scheduler", cp.URL, SchedulerIdentity)
	if err != nil {
		return err
	}
	var qps []string
	if opts.ClientQPS > 0 {
		qps = []string{"--kube-api-qps=" + strconv.Itoa(opts.ClientQPS), "--kube-api-burst=" + strconv.Itoa(opts.ClientQPS)}
	}
	kcmPort, schedPort := freePort("127.0.0.1"), freePort("127.0.0.1")
	if kcmPort == 0 || schedPort == 0 {
		return errors.New("controller manager and scheduler: no free port on 127.0.0.1")
	}
	// The controller manager's flags are kubeadm's, with leader election off (one instance,
	// and no lease writes to wait for).
	kcmArgs := append([]string{opts.Binaries[KubeControllerMgr],
		"--kubeconfig=" + kcm, "--authentication-kubeconfig=" + kcm, "--authorization-kubeconfig=" + kcm,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(kcmPort),
		"--cert-dir=" + filepath.Join(cp.dir, "controller-manager-certs"),
		"--client-ca-file=" + pki.CAFile, "--root-ca-file=" + pki.CAFile,
		"--cluster-name=kubernetes",
		"--cluster-signing-cert-file=" + pki.CAFile, "--cluster-signing-key-file=" + pki.CAKeyFile,
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--leader-elect=false",
		"--service-account-private-key-file=" + pki.ServiceAccountKey,
		"--use-service-account-credentials=true",
	}, qps...)
	if cp.ControllerManager, err = StartProcess(cp.dir, "kube-controller-manager", kcmArgs); err != nil {
		return err
	}
	schedArgs := append([]string{opts.Binaries[KubeScheduler],
		"--kubeconfig=" + sched, "--authentication-kubeconfig=" + sched, "--authorization-kubeconfig=" + sched,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(schedPort),
		"--cert-dir=" + filepath.Join(cp.dir, "scheduler-certs"),
		"--leader-elect=false",
	}, qps...)
	if cp.Scheduler, err = StartProcess(cp.dir, "kube-scheduler", schedArgs); err != nil {
		return err
	}
	// Their serving certificates are self-signed; /healthz is open to anyone.
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if err := waitHTTP(ctx, cp.ControllerManager, fmt.Sprintf("https://127.0.0.1:%d/healthz", kcmPort), insecure, 3*time.Minute); err != nil {
		return err
	}
	if err := waitHTTP(ctx, cp.Scheduler, fmt.Sprintf("https://127.0.0.1:%d/healthz", schedPort), insecure, 3*time.Minute); err != nil {
		return err
	}
	// The service account admission plugin refuses pods until their namespace's default
	// service account exists; the controller manager creates it.
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cp.Admin.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// Kubeconfig writes a kubeconfig for id against the API server into the control plane's
// directory as name.kubeconfig.
func (cp *ControlPlane) Kubeconfig(name string, id Identity) (string, error) {
	return cp.PKI.Kubeconfig(name, cp.URL, id)
}

// Stop ends the control plane's processes, the API server's clients first, and removes etcd's
// data directory if StartControlPlane made it.
func (cp *ControlPlane) Stop() {
	for _, p := range []*Process{cp.Scheduler, cp.ControllerManager, cp.APIServer, cp.Etcd} {
		if p != nil {
			p.Stop(30 * time.Second)
		}
	}
	if cp.removeEtcd {
		_ = os.RemoveAll(cp.etcdDir)
	}
}

// tails is the end of every process's log, for an error.
func (cp *ControlPlane) tails() string {
	var b strings.Builder
	for _, p := range []*Process{cp.Etcd, cp.APIServer, cp.ControllerManager, cp.Scheduler} {
		if p != nil {
			fmt.Fprintf(&b, "\n--- %s (%s):\n%s", p.Name, p.LogPath, p.Tail(15))
		}
	}
	return b.String()
}

// waitHTTP polls url until it answers 200, p exits, or timeout passes.
func waitHTTP(ctx context.Context, p *Process, url string, client *http.Client, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("%s exited: %v", p.Name, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		_ = resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s at %s (last answer: %s): %w", p.Name, url, last, err)
	}
	return nil
}

// freePort returns a port on host that was free a moment ago, or 0.
func freePort(host string) int {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// hostAddress is the machine's first non-loopback IPv4 address, which kube-apiserver advertises
// when it listens on loopback.
func hostAddress() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("the machine's addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String(), nil
		}
	}
	return "", errors.New("kube-apiserver needs a non-loopback address to advertise, and the machine has none: set ControlPlaneOptions.AdvertiseAddress")
}

// shmOr is /dev/shm when it is a writable directory, else dir.
func shmOr(dir string) string {
	const shm = "/dev/shm"
	if f, err := os.CreateTemp(shm, ".probe-"); err == nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return shm
	}
	return dir
}

// auditLogMaxMB is kube-apiserver's --audit-log-maxsize: large enough that no run rotates the
// audit log (its default rotates at 100 MB, and the harness reads only the current file).
const auditLogMaxMB = 100 * 1024
