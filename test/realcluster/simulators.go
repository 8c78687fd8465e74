package realcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// A Simulator runs simulated nodes against a control plane.
type Simulator interface {
	// Name is the simulator's name in the tables.
	Name() string
	// Start starts n simulated nodes against cp, writing its files and logs into dir. It
	// returns once the processes run; the nodes register on their own time.
	Start(ctx context.Context, cp *ControlPlane, dir string, n int) error
	// Usage is the CPU time and memory of the simulator's processes, summed.
	Usage() (Usage, error)
	// Exited reports a process of the simulator that ended.
	Exited() error
	// Stop ends the simulator.
	Stop()
	// Tails is the end of the simulator's logs, for an error.
	Tails() string
}

// The simulators' identities. Every simulator is in the system:nodes group, as kubelets are:
// the audit policy records that group, and kube-apiserver's priority and fairness puts every
// simulator's requests in the same flow schema (system-nodes) and priority level, where a
// system:masters identity would be exempt and a service account would be in workload-low.
// kubemark's hollow nodes are system:node:<name>, limited by the Node authorizer and
// NodeRestriction as kubelets are.
var (
	// MinikubeletFleetIdentity is the one identity of a minikubelet fleet. It is not a node
	// identity (one process holds many nodes), so the Node authorizer and NodeRestriction leave
	// it alone; RBAC grants it the ClusterRole of docs/examples/deploy/rbac.yaml.
	MinikubeletFleetIdentity = Identity{User: "minikubelet", Groups: []string{"system:nodes"}}
	// KwokIdentity is KWOK's, bound to cluster-admin as kwokctl's admin kubeconfig is.
	KwokIdentity = Identity{User: "kwok", Groups: []string{"system:nodes"}}
)

// BindClusterRole binds the ClusterRole role to the user.
func (cp *ControlPlane) BindClusterRole(ctx context.Context, role, user string) error {
	_, err := cp.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role + ":" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("bind the ClusterRole %s to %s: %w", role, user, err)
	}
	return nil
}

// CreateClusterRoleFromFile creates the ClusterRoles of a multi-document YAML file (the other
// documents are left out) and returns their names.
func (cp *ControlPlane) CreateClusterRoleFromFile(ctx context.Context, path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ClusterRole file: %w", err)
	}
	var names []string
	for i, doc := range strings.Split(string(b), "\n---") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", path, i+1, err)
		}
		if meta.Kind != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", path, i+1, err)
		}
		if _, err := cp.Admin.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create the ClusterRole %s of %s: %w", role.Name, path, err)
		}
		names = append(names, role.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s has no ClusterRole", path)
	}
	return names, nil
}

// InstantRuntimeLabel names, in the tables, a minikubelet fleet run with --runtime-latencies=0.
const InstantRuntimeLabel = "minikubelet, instant runtime"

// NoEventsLabel names a minikubelet fleet run with --runtime-latencies=0 --send-events=false:
// kubemark's hollow nodes' choices (a runtime that takes no time, no event client).
const NoEventsLabel = "minikubelet, instant runtime, no event client"

// MinikubeletFleet is `minikubelet run --kubeconfig --nodes N`.
type MinikubeletFleet struct {
	Binary string
	// RBACFile is the file whose ClusterRole the fleet's identity gets: the repository's
	// docs/examples/deploy/rbac.yaml.
	RBACFile string
	// Prefix is --node-name-prefix ("mk" when empty).
	Prefix string
	// Args are added to the command line: --pod-manifest-path, --api-latency, ...
	Args []string
	// TraceFile receives the trace (standard output); by default it is discarded.
	TraceFile string
	// Kubeconfig, if set, is used as it is (a node identity for one node, say) instead of the
	// fleet identity with RBACFile's ClusterRole.
	Kubeconfig string
	// Label names the fleet in the tables ("minikubelet" when empty): the side-by-side
	// benchmark runs minikubelet with its runtime's latencies and without.
	Label string

	proc *Process
}

// Name implements Simulator.
func (m *MinikubeletFleet) Name() string {
	if m.Label != "" {
		return m.Label
	}
	return "minikubelet"
}

// Start implements Simulator: the fleet's identity and its ClusterRole, then the process. The
// kubelet server picks a free port; the trace is JSON (the cheaper form) and goes to TraceFile.
func (m *MinikubeletFleet) Start(ctx context.Context, cp *ControlPlane, dir string, n int) error {
	kc := m.Kubeconfig
	if kc == "" {
		roles, err := cp.CreateClusterRoleFromFile(ctx, m.RBACFile)
		if err != nil {
			return err
		}
		for _, r := range roles {
			if err := cp.BindClusterRole(ctx, r, MinikubeletFleetIdentity.User); err != nil {
				return err
			}
		}
		if kc, err = cp.Kubeconfig("minikubelet", MinikubeletFleetIdentity); err != nil {
			return err
		}
	}
	prefix := m.Prefix
	if prefix == "" {
		prefix = "mk"
	}
	args := []string{m.Binary, "run", "--kubeconfig=" + kc,
		// A short name: the device plugin socket under it must fit a unix socket address (107 bytes).
		"--root-dir=" + filepath.Join(dir, "r"),
		"--port=0", "--trace-format=json"}
	if n == 1 {
		args = append(args, "--hostname-override="+prefix)
	} else {
		args = append(args, "--nodes="+strconv.Itoa(n), "--node-name-prefix="+prefix)
	}
	args = append(args, m.Args...)
	out := m.TraceFile
	if out == "" {
		out = os.DevNull
	}
	p, err := startProcessTo(dir, "minikubelet", args, out)
	if err != nil {
		return err
	}
	m.proc = p
	return nil
}

// Usage implements Simulator.
func (m *MinikubeletFleet) Usage() (Usage, error) { return m.proc.Usage() }

// Exited implements Simulator.
func (m *MinikubeletFleet) Exited() error { return exitedErr(m.proc) }

// Stop implements Simulator.
func (m *MinikubeletFleet) Stop() {
	if m.proc != nil {
		m.proc.Stop(30 * time.Second)
	}
}

// Tails implements Simulator.
func (m *MinikubeletFleet) Tails() string { return tails(m.proc) }

// KWOK is KWOK's controller with `--manage-all-nodes=true --node-lease-duration-seconds=40` and
// kwokctl's default stages, managing nodes the harness creates as `kwokctl scale node` does.
type KWOK struct {
	Binary string
	// Stages is the stage configuration (cmd/build writes kwokctl's defaults as kwok-stages.yaml).
	Stages string

	proc *Process
}

// Name implements Simulator.
func (k *KWOK) Name() string { return "KWOK" }

// Start implements Simulator: KWOK, then n nodes named kwok-<i>.
func (k *KWOK) Start(ctx context.Context, cp *ControlPlane, dir string, n int) error {
	if err := cp.BindClusterRole(ctx, "cluster-admin", KwokIdentity.User); err != nil {
		return err
	}
	kc, err := cp.Kubeconfig("kwok", KwokIdentity)
	if err != nil {
		return err
	}
	home := filepath.Join(dir, "kwok-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	// HOME keeps KWOK from reading or writing the user's ~/.kwok.
	k.proc, err = StartProcess(dir, "kwok", []string{k.Binary,
		"--kubeconfig=" + kc, "--config=" + k.Stages,
		"--manage-all-nodes=true", "--node-lease-duration-seconds=40",
	}, "HOME="+home)
	if err != nil {
		return err
	}
	for i := range n {
		if _, err := cp.Admin.CoreV1().Nodes().Create(ctx, kwokNode(i, n), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create KWOK node %d: %w", i, err)
		}
	}
	return nil
}

// kwokNode is node i as kwokctl's default node template makes it: KWOK's annotation and
// labels, a pod CIDR of its own, 32 CPUs, 256Gi and 110 pods.
func kwokNode(i, n int) *corev1.Node {
	name := nodeName("kwok", i, n)
	cidr := fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)
	list := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"kwok.x-k8s.io/node":           "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
				"kubernetes.io/hostname": name, "kubernetes.io/role": "agent",
				"node-role.kubernetes.io/agent": "", "type": "kwok",
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{
			Allocatable: list, Capacity: list,
			NodeInfo: corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux"},
		},
	}
}

// Usage implements Simulator.
func (k *KWOK) Usage() (Usage, error) { return k.proc.Usage() }

// Exited implements Simulator.
func (k *KWOK) Exited() error { return exitedErr(k.proc) }

// Stop implements Simulator.
func (k *KWOK) Stop() {
	if k.proc != nil {
		k.proc.Stop(30 * time.Second)
	}
}

// Tails implements Simulator.
func (k *KWOK) Tails() string { return tails(k.proc) }

// KubemarkNodes runs one kubemark hollow node (real kubelet code over a fake CRI runtime) per node,
// each as system:node:<name> with the kubelet's default API rate limits (50 QPS, burst 100;
// kubemark's own defaults are 10 and 20).
type KubemarkNodes struct {
	Binary string

	procs []*Process
}

// Name implements Simulator.
func (k *KubemarkNodes) Name() string { return "kubemark" }

// Start implements Simulator.
func (k *KubemarkNodes) Start(ctx context.Context, cp *ControlPlane, dir string, n int) error {
	for i := range n {
		name := nodeName("km", i, n)
		kc, err := cp.Kubeconfig(name, NodeIdentity(name))
		if err != nil {
			return err
		}
		port := freePort("127.0.0.1")
		if port == 0 {
			return errors.New("kubemark: no free port")
		}
		// Each hollow kubelet makes its root directory and its fake runtime's socket under TMPDIR.
		tmp := filepath.Join(dir, name)
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return err
		}
		p, err := StartProcess(dir, name, []string{k.Binary,
			"--morph=kubelet", "--name=" + name, "--kubeconfig=" + kc,
			"--kubelet-port=" + strconv.Itoa(port), "--kubelet-read-only-port=0",
			"--use-host-image-service=false",
			"--kube-api-qps=50", "--kube-api-burst=100",
		}, "TMPDIR="+tmp)
		if err != nil {
			return err
		}
		k.procs = append(k.procs, p)
	}
	return nil
}

// Usage implements Simulator: the sum over the hollow nodes (their peak RSS summed too, an upper
// bound of the peak of the sum).
func (k *KubemarkNodes) Usage() (Usage, error) {
	var sum Usage
	for _, p := range k.procs {
		u, err := p.Usage()
		if err != nil {
			return sum, err
		}
		sum = sum.Add(u)
	}
	return sum, nil
}

// Exited implements Simulator.
func (k *KubemarkNodes) Exited() error {
	for _, p := range k.procs {
		if err := exitedErr(p); err != nil {
			return err
		}
	}
	return nil
}

// Stop implements Simulator.
func (k *KubemarkNodes) Stop() {
	for _, p := range k.procs {
		_ = p.signal()
	}
	for _, p := range k.procs {
		p.Stop(30 * time.Second)
	}
}

// Tails implements Simulator.
func (k *KubemarkNodes) Tails() string {
	if len(k.procs) == 0 {
		return ""
	}
	return tails(k.procs[0])
}

// nodeName is prefix-<i>, zero-padded to the width of n-1.
func nodeName(prefix string, i, n int) string {
	return fmt.Sprintf("%s-%0*d", prefix, len(strconv.Itoa(max(n-1, 1))), i)
}

func exitedErr(p *Process) error {
	if p == nil {
		return nil
	}
	if exited, err := p.Exited(); exited {
		return fmt.Errorf("%s exited (%v):\n%s", p.Name, err, p.Tail(20))
	}
	return nil
}

func tails(p *Process) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("\n--- %s (%s):\n%s", p.Name, p.LogPath, p.Tail(20))
}
