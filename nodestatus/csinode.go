package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// MigratedPlugins is the value of the CSINode's storage.alpha.kubernetes.io/migrated-plugins
// annotation the v1.35 kubelet writes: every in-tree volume plugin whose CSI migration is on (all
// of them, CSIMigrationPortworx being GA), sorted, comma-separated.
const MigratedPlugins = "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder," +
	"kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume"

// SetMigrationAnnotation writes MigratedPlugins into the CSINode's annotation, as the kubelet's
// node info manager does whenever it creates or updates the CSINode, and reports whether that
// changed it. The annotation's plugins are compared as a set.
func SetMigrationAnnotation(cn *storagev1.CSINode) bool {
	old := cn.Annotations[v1.MigratedPluginsAnnotationKey]
	have := strings.Split(old, ",")
	if old == "" {
		have = nil
	}
	slices.Sort(have)
	have = slices.Compact(have)
	if slices.Equal(have, strings.Split(MigratedPlugins, ",")) {
		return false
	}
	if cn.Annotations == nil {
		cn.Annotations = map[string]string{}
	}
	cn.Annotations[v1.MigratedPluginsAnnotationKey] = MigratedPlugins
	return true
}

// errCSINodeNotInitialized is the storage error the CSI volume plugin sets when it starts
// (csiPlugin.Init), which keeps the node NotReady until its CSINode exists.
var errCSINodeNotInitialized = errors.New("CSINode is not yet initialized")

// initializeCSINode's timing: the poll that waits for the API server (waitForAPIServerForever),
// and the two back-offs, the outer one of initializeCSINode (6 attempts, 15ms times 6) and the
// inner one of each attempt (InitializeCSINodeWithAnnotation: 4 tries, 10ms times 5), both with
// 10% jitter.
const (
	csiNodeAPIPoll     = time.Second
	csiNodeOuterSteps  = 6
	csiNodeOuterDelay  = 15 * time.Millisecond
	csiNodeOuterFactor = 6
	csiNodeInnerSteps  = 4
	csiNodeInnerDelay  = 10 * time.Millisecond
	csiNodeInnerFactor = 5
	csiNodeJitter      = 0.1
)

// CSINodeClient is what the CSINode's initialization reads and writes through: the kubelet's API
// client. Errors are the API's, so that apierrors.IsNotFound works on them.
type CSINodeClient interface {
	// GetNode reads the node, for the CSINode's owner.
	GetNode(ctx context.Context, name string) (*v1.Node, error)
	// GetCSINode reads the CSINode with opts: the wait for the API server reads from its cache
	// (resourceVersion "0"), the initialization's tries read the latest.
	GetCSINode(ctx context.Context, name string, opts metav1.GetOptions) (*storagev1.CSINode, error)
	CreateCSINode(ctx context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error)
	UpdateCSINode(ctx context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error)
	DeleteCSINode(ctx context.Context, name string) error
}

// ClientsetCSINodes implements CSINodeClient with client-go typed calls.
type ClientsetCSINodes struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ CSINodeClient = ClientsetCSINodes{}

// GetNode reads the node.
func (c ClientsetCSINodes) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	return c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// GetCSINode reads the CSINode.
func (c ClientsetCSINodes) GetCSINode(ctx context.Context, name string, opts metav1.GetOptions) (*storagev1.CSINode, error) {
	return c.Client.StorageV1().CSINodes().Get(ctx, name, opts)
}

// CreateCSINode creates the CSINode.
func (c ClientsetCSINodes) CreateCSINode(ctx context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error) {
	return c.Client.StorageV1().CSINodes().Create(ctx, cn, metav1.CreateOptions{})
}

// UpdateCSINode replaces the CSINode.
func (c ClientsetCSINodes) UpdateCSINode(ctx context.Context, cn *storagev1.CSINode) (*storagev1.CSINode, error) {
	return c.Client.StorageV1().CSINodes().Update(ctx, cn, metav1.UpdateOptions{})
}

// DeleteCSINode deletes the CSINode.
func (c ClientsetCSINodes) DeleteCSINode(ctx context.Context, name string) error {
	return c.Client.StorageV1().CSINodes().Delete(ctx, name, metav1.DeleteOptions{})
}

// csiNodeInit is the CSI volume plugin's initializeCSINode as a core: it waits for the API server
// (a CSINode read that answers, found or not, every second), then creates the node's empty
// CSINode with the migrated-plugins annotation, or fixes the annotation of the one there is. Each
// attempt makes up to four tries and the initialization up to six attempts, each back-off with its
// jitter. Until an attempt succeeds the storage error keeps the node NotReady: "CSINode is not yet
// initialized", then the last attempt's failure. The kubelet exits after the sixth failure
// (klog.Fatalf); here the initialization stops with its error, and the node stays NotReady.
type csiNodeInit struct {
	name   string
	client CSINodeClient
	tracer trace.Tracer
	// clock times the back-off steps, which the kubelet sleeps after a failed try returns.
	clock clock.PassiveClock
	rand  *rand.Rand
	// err is the storage error; nil once the CSINode is initialized. In `run` the
	// initialization runs on a goroutine of its own (CSINodeRunner) while the node status reads
	// the error: it is published atomically, as the kubelet's runtime state guards its own.
	err atomic.Pointer[error]
	// next is when the next read or try is due; zero before the start and once done.
	next time.Time
	// apiTick is when waitForAPIServerForever's ticker started: once the first read, the
	// immediate one, had returned; zero before.
	apiTick time.Time
	// apiUp is set once the API server answered; outer and inner count the failed attempts and
	// the current attempt's failed tries, outerDelay and innerDelay are the next back-off steps.
	apiUp                  bool
	outer, inner           int
	outerDelay, innerDelay time.Duration
	lastErr                error
}

func newCSINodeInit(o Options, r *rand.Rand) *csiNodeInit {
	if o.CSINodes == nil {
		return nil
	}
	c := &csiNodeInit{name: o.NodeName, client: o.CSINodes, tracer: o.Tracer, clock: o.Clock, rand: r,
		outerDelay: csiNodeOuterDelay, innerDelay: csiNodeInnerDelay}
	c.setError(errCSINodeNotInitialized)
	return c
}

// setError publishes the storage error; nil clears it.
func (c *csiNodeInit) setError(err error) {
	if err == nil {
		c.err.Store(nil)
		return
	}
	c.err.Store(&err)
}

// start makes the first read due at now: the kubelet starts the goroutine when it builds its
// volume plugins, just before Run.
func (c *csiNodeInit) start(now time.Time) { c.next = now }

// storageError is the runtime state's storage error as the CSI plugin leaves it.
func (c *csiNodeInit) storageError() error {
	if c == nil {
		return nil
	}
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// nextWake is when the next read or try is due.
func (c *csiNodeInit) nextWake() (time.Time, bool) {
	if c == nil || c.next.IsZero() {
		return time.Time{}, false
	}
	return c.next, true
}

// step does the read or the try that is due at now.
func (c *csiNodeInit) step(ctx context.Context, now time.Time) {
	if c == nil || c.next.IsZero() || now.Before(c.next) {
		return
	}
	logger := klog.FromContext(ctx)
	if !c.apiUp {
		// waitForAPIServerForever: any answer of the API server will do, NotFound too. The
		// object is thrown away, so the kubelet reads it from the API server's cache
		// (resourceVersion "0"), which spares etcd a read a node at every start.
		if _, err := c.client.GetCSINode(ctx, c.name, metav1.GetOptions{ResourceVersion: "0"}); err != nil && !apierrors.IsNotFound(err) {
			logger.V(2).Info("Failed to contact API server when waiting for CSINode publishing", "err", err)
			c.next = c.nextAPIRead(c.clock.Now())
			return
		}
		c.apiUp = true
	}
	logger.V(4).Info("Initializing migrated drivers on CSINode")
	err := c.try(ctx)
	if err == nil {
		c.setError(nil)
		c.next = time.Time{}
		return
	}
	logger.V(2).Info("Failed to publish CSINode", "err", err)
	c.lastErr = err
	// ExponentialBackoff sleeps once the failed try has returned: the next is timed from then.
	now = c.clock.Now()
	if c.inner++; c.inner < csiNodeInnerSteps {
		c.next = now.Add(jitter(c.rand, c.innerDelay, csiNodeJitter))
		c.innerDelay *= csiNodeInnerFactor
		return
	}
	// The attempt failed: its error is the storage error until the next one succeeds.
	failed := fmt.Errorf("failed to initialize CSINode: %w", fmt.Errorf("error updating CSINode annotation: %w; caused by: %w", errWaitTimeout, c.lastErr))
	c.setError(failed)
	logger.Error(failed, "Failed to initialize CSINode")
	c.tracer.Emit(trace.Event{Component: trace.Node, Event: trace.KindError, Pod: c.name, Reason: "FailedToInitializeCSINode", Message: failed.Error(), Func: "initializeCSINode"})
	c.inner, c.innerDelay = 0, csiNodeInnerDelay
	if c.outer++; c.outer >= csiNodeOuterSteps {
		logger.Error(errWaitTimeout, "Failed to initialize CSINode after retrying")
		c.next = time.Time{}
		return
	}
	c.next = now.Add(jitter(c.rand, c.outerDelay, csiNodeJitter))
	c.outerDelay *= csiNodeOuterFactor
}

// nextAPIRead is when waitForAPIServerForever reads again after a failed read that returned at
// end. PollImmediateInfinite makes its first read at once and starts its 1s ticker once that has
// returned; a tick that comes while a read is still in flight is dropped. So the next read is at
// the first tick after end: 1s after the first read returned, then on that beat.
func (c *csiNodeInit) nextAPIRead(end time.Time) time.Time {
	if c.apiTick.IsZero() {
		c.apiTick = end
		return end.Add(csiNodeAPIPoll)
	}
	ticks := end.Sub(c.apiTick)/csiNodeAPIPoll + 1
	return c.apiTick.Add(ticks * csiNodeAPIPoll)
}

// CSINode is the CSINode's initialization detached from the node status (Status.DetachCSINode),
// for a driver that runs it on a goroutine of its own, as the kubelet runs initializeCSINode's:
// its API calls, which may hang, then hold up neither registration nor the status updates. The
// node status goes on reading its storage error.
type CSINode struct{ init *csiNodeInit }

// Step does the read or the try that is due now.
func (c *CSINode) Step(ctx context.Context) { c.init.step(ctx, c.init.clock.Now()) }

// NextWake returns when the next read or try is due; false once the initialization is over,
// done or given up.
func (c *CSINode) NextWake() (time.Time, bool) { return c.init.nextWake() }

// try is one tryInitializeCSINodeWithAnnotation: it reads the node (the CSINode's owner), then
// creates the CSINode, or deletes one another node owns, or writes the annotation when it differs.
func (c *csiNodeInit) try(ctx context.Context) error {
	node, err := c.client.GetNode(ctx, c.name)
	if err != nil {
		return err
	}
	cn, err := c.client.GetCSINode(ctx, c.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		fresh := &storagev1.CSINode{
			ObjectMeta: metav1.ObjectMeta{Name: c.name,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: c.name, UID: node.UID}}},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{}},
		}
		SetMigrationAnnotation(fresh)
		_, err = c.client.CreateCSINode(ctx, fresh)
		return err
	}
	if err != nil {
		return err
	}
	if owned, owner := ownedBy(cn, c.name, node.UID); !owned {
		if err := c.client.DeleteCSINode(ctx, c.name); err != nil {
			return fmt.Errorf("error deleting existing CSINode %q: %w", cn.Name, err)
		}
		return fmt.Errorf("CSINode %q was owned by different node (oldNodeID=%q, newNodeID=%q), deleted it", cn.Name, owner, node.UID)
	}
	if SetMigrationAnnotation(cn) {
		_, err = c.client.UpdateCSINode(ctx, cn)
	}
	return err
}

// ownedBy reports whether the CSINode is owned by the node name with uid (nodeOwnsCSINode), and the
// UID of the last Node owner it names.
func ownedBy(cn *storagev1.CSINode, name string, uid types.UID) (bool, types.UID) {
	var owner types.UID
	for _, ref := range cn.OwnerReferences {
		if ref.Kind != "Node" {
			continue
		}
		owner = ref.UID
		if ref.Name == name && ref.UID == uid {
			return true, owner
		}
	}
	return false, owner
}

// errWaitTimeout is the error v1.35's wait.ExponentialBackoff returns when its steps run out
// (apimachinery's deprecated ErrWaitTimeout), whose text the kubelet's CSINode messages carry.
var errWaitTimeout = errors.New("timed out waiting for the condition")
