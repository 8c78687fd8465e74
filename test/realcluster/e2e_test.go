package realcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The deadlines of these tests are about ten times what a quiet 2-CPU machine needs.
const (
	controlPlaneTimeout = 5 * time.Minute
	nodesTimeout        = 3 * time.Minute
	podsTimeout         = 5 * time.Minute
)

// rbacFile is the ClusterRole a fleet's identity gets: the one docs/examples/deploy ships.
var rbacFile = filepath.Join("..", "..", "docs", "examples", "deploy", "rbac.yaml")

// workDir is MINIKUBELET_E2E_WORK_DIR/<test> when that is set (kept after the test, for its
// logs and audit log), else a temporary directory.
func workDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv("MINIKUBELET_E2E_WORK_DIR")
	if base == "" {
		return t.TempDir()
	}
	dir := filepath.Join(base, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startControlPlane(t *testing.T, ctx context.Context, opts ControlPlaneOptions) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, controlPlaneTimeout)
	defer cancel()
	cp, err := StartControlPlane(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	return cp
}

func startSimulator(t *testing.T, ctx context.Context, sim Simulator, cp *ControlPlane, dir string, n int) {
	t.Helper()
	if err := sim.Start(ctx, cp, dir, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("simulator's log:%s", sim.Tails())
		}
		sim.Stop()
	})
}

// TestFleetOnRealControlPlane runs `minikubelet run --kubeconfig --nodes 3` with one client
// certificate bound to docs/examples/deploy's ClusterRole against kube-apiserver with Node,RBAC
// authorization and NodeRestriction: the nodes register and turn Ready, renew their leases, run
// a Deployment's pods that kube-scheduler places, and the API server refuses none of their
// requests (which also checks that the ClusterRole grants what a fleet asks for).
func TestFleetOnRealControlPlane(t *testing.T) {
	bins := RequireBinaries(t, append(ControlPlaneBinaries, Minikubelet)...)
	ctx := t.Context()
	dir := workDir(t)
	cp := startControlPlane(t, ctx, ControlPlaneOptions{Binaries: bins, Dir: dir})
	w, err := Watch(ctx, cp.Admin, metav1.NamespaceDefault, labels.SelectorFromSet(labels.Set{"app": "pause"}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.Expect(3, 0)
	fleet := &MinikubeletFleet{Binary: bins[Minikubelet], RBACFile: rbacFile, Prefix: "fleet", Args: []string{"--api-latency=0"}}
	startSimulator(t, ctx, fleet, cp, dir, 3)
	nodes := []string{"fleet-0", "fleet-1", "fleet-2"}

	t.Run("nodes register Ready", func(t *testing.T) {
		if err := w.Wait(ctx, nodesTimeout, "3 nodes Ready", func(s Snapshot) bool { return !s.NodesReadyAt.IsZero() }, fleet.Exited); err != nil {
			t.Fatal(err)
		}
		for _, name := range nodes {
			n, err := cp.Admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("node %s: %v", name, err)
			}
			if n.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
				t.Errorf("node %s advertises no kubelet port", name)
			}
			if !strings.HasPrefix(n.Status.NodeInfo.KubeletVersion, "v1.35.") {
				t.Errorf("node %s: kubeletVersion %q, want v1.35.x", name, n.Status.NodeInfo.KubeletVersion)
			}
		}
	})

	t.Run("leases are renewed", func(t *testing.T) {
		first := map[string]time.Time{}
		err := wait.PollUntilContextTimeout(ctx, time.Second, nodesTimeout, true, func(ctx context.Context) (bool, error) {
			renewed := 0
			for _, name := range nodes {
				l, err := cp.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					continue
				}
				if err != nil {
					return false, err
				}
				rt := renewTime(l)
				if f, ok := first[name]; !ok {
					first[name] = rt
				} else if rt.After(f) {
					renewed++
				}
			}
			return renewed == len(nodes), nil
		})
		if err != nil {
			t.Fatalf("the fleet's leases were not all renewed: %v", err)
		}
	})

	t.Run("a Deployment's pods run on the fleet", func(t *testing.T) {
		if err := CreatePauseDeployment(ctx, cp.Admin, "pause", 6); err != nil {
			t.Fatal(err)
		}
		w.Expect(3, 6)
		if err := w.Wait(ctx, podsTimeout, "6 pods Running and Ready", func(s Snapshot) bool {
			return !s.PodsRunningAt.IsZero() && !s.PodsReadyAt.IsZero()
		}, fleet.Exited); err != nil {
			t.Fatal(err)
		}
		for node := range w.Snapshot().PodsByNode {
			if !strings.HasPrefix(node, "fleet-") {
				t.Errorf("a pod runs on %s, not on the fleet", node)
			}
		}
	})

	t.Run("no request refused", func(t *testing.T) {
		reqs, err := ReadAuditLog(cp.AuditLog)
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) == 0 {
			t.Fatal("the audit log holds no request of the fleet")
		}
		for _, r := range reqs {
			if r.User == MinikubeletFleetIdentity.User && (r.Code == 401 || r.Code == 403) {
				t.Errorf("%s %s by %s: %d", r.Verb, r.Resource, r.User, r.Code)
			}
		}
	})
}

func renewTime(l *coordinationv1.Lease) time.Time {
	if l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

const staticPod = `apiVersion: v1
kind: Pod
metadata:
  name: static-web
spec:
  containers:
  - name: web
    image: registry.k8s.io/pause:3.10.1
`

// TestMirrorPodThroughNodeRestriction runs one node with a kubelet's identity,
// system:node:<name> in system:nodes, and a static pod: its mirror pod is created through the
// Node authorizer and NodeRestriction (which admits a node's mirror pods only for itself, with
// the mirror annotation and the node as owner) and reports the static pod Running.
func TestMirrorPodThroughNodeRestriction(t *testing.T) {
	bins := RequireBinaries(t, append(ControlPlaneBinaries, Minikubelet)...)
	ctx := t.Context()
	dir := workDir(t)
	cp := startControlPlane(t, ctx, ControlPlaneOptions{Binaries: bins, Dir: dir})
	const node = "static-node"
	kc, err := cp.Kubeconfig(node, NodeIdentity(node))
	if err != nil {
		t.Fatal(err)
	}
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(staticPod), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := &MinikubeletFleet{Binary: bins[Minikubelet], Kubeconfig: kc, Prefix: node,
		Args: []string{"--api-latency=0", "--pod-manifest-path=" + manifests, "--file-check-frequency=1s"}}
	startSimulator(t, ctx, sim, cp, dir, 1)

	var mirror *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, podsTimeout, true, func(ctx context.Context) (bool, error) {
		if err := sim.Exited(); err != nil {
			return false, err
		}
		p, err := cp.Admin.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, "static-web-"+node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		mirror = p
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("mirror pod static-web-%s Running: %v (last seen: %v)", node, err, mirror != nil)
	}
	if _, ok := mirror.Annotations[corev1.MirrorPodAnnotationKey]; !ok {
		t.Errorf("the mirror pod has no %s annotation: %v", corev1.MirrorPodAnnotationKey, mirror.Annotations)
	}
	owned := false
	for _, o := range mirror.OwnerReferences {
		owned = owned || (o.Kind == "Node" && o.Name == node)
	}
	if !owned {
		t.Errorf("the mirror pod is not owned by its node: %+v", mirror.OwnerReferences)
	}
	reqs, err := ReadAuditLog(cp.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	created := false
	for _, r := range reqs {
		if r.User == "system:node:"+node && r.Verb == "create" && r.Resource == "pods" && r.Code == 201 {
			created = true
		}
		if r.Code == 401 || r.Code == 403 {
			t.Errorf("%s %s by %s refused: %d", r.Verb, r.Resource, r.User, r.Code)
		}
	}
	if !created {
		t.Error("the audit log shows no pod created by the node's identity")
	}
}

// TestControlPlaneInNetNS starts the control plane in a network namespace of its own, on a
// non-loopback address, and a node registers with it there: what a node-proxy test needs,
// since kube-apiserver proxies only to non-loopback node addresses.
func TestControlPlaneInNetNS(t *testing.T) {
	bins := RequireBinaries(t, append(ControlPlaneBinaries, Minikubelet)...)
	addr, inside := InNetNS(t, "10.250.0.1")
	if !inside {
		return
	}
	ctx := t.Context()
	dir := workDir(t)
	cp := startControlPlane(t, ctx, ControlPlaneOptions{Binaries: bins, Dir: dir, BindAddress: addr})
	if !strings.HasPrefix(cp.URL, "https://"+addr+":") {
		t.Errorf("kube-apiserver at %s, want %s", cp.URL, addr)
	}
	w, err := Watch(ctx, cp.Admin, metav1.NamespaceDefault, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w.Expect(1, 0)
	const node = "netns-node"
	kc, err := cp.Kubeconfig(node, NodeIdentity(node))
	if err != nil {
		t.Fatal(err)
	}
	sim := &MinikubeletFleet{Binary: bins[Minikubelet], Kubeconfig: kc, Prefix: node, Args: []string{"--api-latency=0"}}
	startSimulator(t, ctx, sim, cp, dir, 1)
	if err := w.Wait(ctx, nodesTimeout, "the node Ready", func(s Snapshot) bool { return !s.NodesReadyAt.IsZero() }, sim.Exited); err != nil {
		t.Fatal(err)
	}
	// kube-apiserver advertises the namespace's address as the kubernetes Service's endpoint.
	es, err := cp.Admin.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es.Endpoints) == 0 || len(es.Endpoints[0].Addresses) == 0 || es.Endpoints[0].Addresses[0] != addr {
		t.Errorf("the kubernetes Service's endpoints are %+v, want %s", es.Endpoints, addr)
	}
}
