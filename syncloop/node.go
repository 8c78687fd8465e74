package syncloop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/trace"
)

// Node facts the simulated kubelet reports.
const (
	// KubeletVersion is the version the node reports.
	KubeletVersion = "v1.35.0"
	// LeaseNamespace holds the node leases.
	LeaseNamespace = "kube-node-lease"
	// leaseDurationSeconds is the kubelet's default nodeLeaseDurationSeconds.
	leaseDurationSeconds = 40
	// registerBackoffMax caps the retry delay of node registration, as the kubelet's does.
	registerBackoffMax = 7 * time.Second
	registerBackoffMin = 100 * time.Millisecond
)

// NodeClient is the part of the API the node heartbeat writes through. Errors are the API's, so
// that apierrors.IsNotFound works on them.
type NodeClient interface {
	// GetNode reads the node.
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// CreateNode creates the node.
	CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error)
	// UpdateNodeStatus writes the node's status subresource.
	UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error)
	// RenewLease creates the lease or replaces its spec.
	RenewLease(ctx context.Context, lease *coordinationv1.Lease) error
}

// ClientsetNodeClient implements NodeClient with client-go typed calls.
type ClientsetNodeClient struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ NodeClient = ClientsetNodeClient{}

// GetNode reads the node.
func (c ClientsetNodeClient) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// CreateNode creates the node.
func (c ClientsetNodeClient) CreateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
}

// UpdateNodeStatus writes the node's status subresource.
func (c ClientsetNodeClient) UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
}

// RenewLease creates the lease, or updates the existing one's spec.
func (c ClientsetNodeClient) RenewLease(ctx context.Context, lease *coordinationv1.Lease) error {
	leases := c.Client.CoordinationV1().Leases(lease.Namespace)
	old, err := leases.Get(ctx, lease.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	upd := old.DeepCopy()
	upd.Spec = lease.Spec
	if len(upd.OwnerReferences) == 0 {
		upd.OwnerReferences = lease.OwnerReferences
	}
	_, err = leases.Update(ctx, upd, metav1.UpdateOptions{})
	return err
}

// nodeState is the heartbeat's memory: whether the node is registered and when each write is due.
type nodeState struct {
	registered bool
	uid        types.UID
	// retry is when registration is tried again, and backoff its current delay.
	retry   time.Time
	backoff time.Duration
	// status and lease are when the node status and the lease are next written.
	status, lease time.Time
	// ready is the Ready condition last reported.
	ready bool
}

// nextWake returns when the heartbeat next has work.
func (n *nodeState) nextWake(now time.Time) time.Time {
	if !n.registered {
		if n.retry.IsZero() {
			return now
		}
		return n.retry
	}
	if n.lease.Before(n.status) {
		return n.lease
	}
	return n.status
}

// registerNode creates the node object (the kubelet's registerWithAPIServer), adopting an existing
// one. A failure is retried with a doubling delay from 100ms to 7s.
func (l *Loop) registerNode(ctx context.Context, now time.Time) error {
	n := &l.node
	if !n.retry.IsZero() && now.Before(n.retry) {
		return nil
	}
	ready, _ := l.plegHealthy()
	created, err := l.opts.NodeClient.CreateNode(ctx, l.initialNode(now, ready))
	if apierrors.IsAlreadyExists(err) {
		created, err = l.opts.NodeClient.GetNode(ctx, l.opts.NodeName)
	}
	ev := trace.Event{Component: trace.Node, Pod: l.opts.NodeName, Func: "registerWithAPIServer"}
	if err != nil {
		n.backoff = min(max(2*n.backoff, registerBackoffMin), registerBackoffMax)
		n.retry = now.Add(n.backoff)
		l.emit(with(ev, "error", "FailedToRegisterNode", err.Error()))
		return fmt.Errorf("register node %s: %w", l.opts.NodeName, err)
	}
	n.registered, n.uid, n.ready = true, created.UID, ready
	n.status, n.lease = now.Add(NodeStatusPeriod), now
	l.emit(with(ev, "register", "", ""))
	return nil
}

// heartbeat writes the node status and renews the lease when they are due.
func (l *Loop) heartbeat(ctx context.Context, now time.Time) error {
	n := &l.node
	if !n.registered {
		return nil
	}
	var errs []error
	if due(n.lease, now) {
		n.lease = nextTick(n.lease, LeaseRenewPeriod, now)
		if err := l.opts.NodeClient.RenewLease(ctx, l.lease(now)); err != nil {
			l.emit(trace.Event{Component: trace.Node, Event: "error", Pod: l.opts.NodeName, Reason: "FailedToRenewLease", Message: err.Error(), Func: "renewLease"})
			errs = append(errs, fmt.Errorf("renew lease of node %s: %w", l.opts.NodeName, err))
		}
	}
	if due(n.status, now) {
		n.status = nextTick(n.status, NodeStatusPeriod, now)
		if err := l.updateNodeStatus(ctx, now); err != nil {
			l.emit(trace.Event{Component: trace.Node, Event: "error", Pod: l.opts.NodeName, Reason: "FailedToUpdateNodeStatus", Message: err.Error(), Func: "updateNodeStatus"})
			errs = append(errs, fmt.Errorf("update status of node %s: %w", l.opts.NodeName, err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// updateNodeStatus reads the node and writes its conditions with a fresh heartbeat time.
func (l *Loop) updateNodeStatus(ctx context.Context, now time.Time) error {
	node, err := l.opts.NodeClient.GetNode(ctx, l.opts.NodeName)
	if err != nil {
		return err
	}
	ready, msg := l.readiness()
	upd := node.DeepCopy()
	setConditions(upd, now, ready, msg)
	if _, err := l.opts.NodeClient.UpdateNodeStatus(ctx, upd); err != nil {
		return err
	}
	if ready != l.node.ready {
		l.node.ready = ready
		to := string(v1.ConditionFalse)
		if ready {
			to = string(v1.ConditionTrue)
		}
		l.emit(trace.Event{Component: trace.Node, Event: "ready", Pod: l.opts.NodeName, To: to, Message: msg, Func: "setNodeReadyCondition"})
	}
	return nil
}

// readiness is the Ready condition the kubelet would report: not ready while the runtime state
// has errors (the runtime is down, or the PLEG is not healthy).
func (l *Loop) readiness() (bool, string) {
	if err := l.runtimeErrors(); err != nil {
		return false, strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return true, "kubelet is posting ready status"
}

// getNode returns the node as SyncPod sees it: from the API, or the node the kubelet would build
// when it has no API client.
func (l *Loop) getNode(ctx context.Context) (*v1.Node, error) {
	if l.opts.NodeClient == nil {
		return l.initialNode(l.opts.Clock.Now(), true), nil
	}
	node, err := l.opts.NodeClient.GetNode(ctx, l.opts.NodeName)
	if err != nil {
		return nil, fmt.Errorf("failed to get node info: %w", err)
	}
	return node, nil
}

// hostIP is the IP pods report as hostIP: none for a kubelet without an API client.
func (l *Loop) hostIP() string {
	if l.opts.NodeClient == nil {
		return ""
	}
	return l.opts.NodeIP
}

// initialNode is the node object the kubelet registers: the kubelet's initialNode plus the first
// status.
func (l *Loop) initialNode(now time.Time, ready bool) *v1.Node {
	capacity := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse("4"),
		v1.ResourceMemory:           resource.MustParse("8Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		v1.ResourcePods:             resource.MustParse("110"),
	}
	allocatable := capacity.DeepCopy()
	// The default hard eviction threshold memory.available<100Mi is held back from allocatable.
	mem := allocatable[v1.ResourceMemory]
	mem.Sub(resource.MustParse("100Mi"))
	allocatable[v1.ResourceMemory] = mem
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: l.opts.NodeName,
			Labels: map[string]string{
				v1.LabelHostname:   l.opts.NodeName,
				v1.LabelOSStable:   "linux",
				v1.LabelArchStable: "amd64",
			},
		},
		Status: v1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			NodeInfo: v1.NodeSystemInfo{
				KubeletVersion:          KubeletVersion,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				ContainerRuntimeVersion: "fake://" + KubeletVersion,
			},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}},
		},
	}
	node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: l.opts.NodeName}}
	if l.opts.NodeIP != "" {
		node.Status.Addresses = append([]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: l.opts.NodeIP}}, node.Status.Addresses...)
	}
	msg := "kubelet is posting ready status"
	if !ready {
		msg = "PLEG is not healthy"
	}
	setConditions(node, now, ready, msg)
	return node
}

// setConditions writes the pressure conditions and Ready with heartbeat now. A condition's
// transition time moves only when its status changes.
func setConditions(node *v1.Node, now time.Time, ready bool, readyMsg string) {
	ts := metav1.NewTime(now)
	readyStatus, readyReason := v1.ConditionTrue, "KubeletReady"
	if !ready {
		readyStatus, readyReason = v1.ConditionFalse, "KubeletNotReady"
	}
	want := []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: v1.NodeReady, Status: readyStatus, Reason: readyReason, Message: readyMsg},
	}
	for i := range want {
		want[i].LastHeartbeatTime = ts
		want[i].LastTransitionTime = ts
		for _, old := range node.Status.Conditions {
			if old.Type == want[i].Type && old.Status == want[i].Status {
				want[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	node.Status.Conditions = want
}

// lease is the node lease as renewed at now.
func (l *Loop) lease(now time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(now)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: l.opts.NodeName, Namespace: LeaseNamespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(l.opts.NodeName),
			LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds),
			RenewTime:            &renew,
		},
	}
	if l.node.uid != "" {
		lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: l.opts.NodeName, UID: l.node.uid}}
	}
	return lease
}
