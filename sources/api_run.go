package sources

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/api/podintern"
	"github.com/minikubelet/minikubelet/podconfig"
)

// waitForAPIServerSyncPeriod is how often the API source checks whether the node informer has
// synced before it starts watching pods: the kubelet's waitForAPIServerSyncPeriod.
const waitForAPIServerSyncPeriod = time.Second

// podHostField is the field selector key the kubelet uses to list only its own pods.
const podHostField = "spec.nodeName"

// APIRunnerOptions configures NewAPIRunner.
type APIRunnerOptions struct {
	// Core receives every store change. Required.
	Core *API
	// Client talks to the API server. Required: a standalone kubelet has no API source at all.
	Client kubernetes.Interface
	// NodeName selects the pods bound to this node. Required.
	NodeName string
	// NodeHasSynced reports whether the node informer has synced. Nil means always true.
	NodeHasSynced func() bool
	// Clock drives the node-sync poll and the reflector's back-off. Required.
	Clock clock.WithTicker
	// Out receives every SET the core returns. Required.
	Out chan<- podconfig.Update
}

func (o APIRunnerOptions) validate() error {
	var missing []string
	if o.Core == nil {
		missing = append(missing, "Core")
	}
	if o.Client == nil {
		missing = append(missing, "Client")
	}
	if o.NodeName == "" {
		missing = append(missing, "NodeName")
	}
	if o.Clock == nil {
		missing = append(missing, "Clock")
	}
	if o.Out == nil {
		missing = append(missing, "Out")
	}
	return missingOptions(missing)
}

// APIRunner runs the API server pod source: NewSourceApiserver's goroutine. It waits for the node
// informer, then runs a client-go Reflector (resync 0) over the pods bound to the node in every
// namespace, and forwards each store change to the core and each resulting SET to Out.
//
// Relists after a dropped watch or an expired resource version (410 Gone) are the reflector's own;
// each relist is a Replace and gives one SET holding the full, current set of pods.
type APIRunner struct {
	opts      APIRunnerOptions
	store     *apiStore
	reflector *cache.Reflector
}

// NewAPIRunner returns a runner for opts, or an error wrapping ErrMissingOption. It starts
// nothing; Run does.
func NewAPIRunner(opts APIRunnerOptions) (*APIRunner, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("api source: %w", err)
	}
	if opts.NodeHasSynced == nil {
		opts.NodeHasSynced = func() bool { return true }
	}
	r := &APIRunner{opts: opts, store: &apiStore{core: opts.Core, out: opts.Out, intern: podintern.New()}}
	r.reflector = cache.NewReflectorWithOptions(
		podListWatch(opts.Client, opts.NodeName),
		&v1.Pod{},
		r.store,
		cache.ReflectorOptions{Name: "sources/api", ResyncPeriod: 0, Clock: opts.Clock},
	)
	return r, nil
}

// podListWatch lists and watches the pods bound to nodeName in every namespace. It goes through
// the typed client rather than its REST client (as the kubelet does) so that the fake clientset
// works too; the requests on the wire are the same. The wrapper tells the reflector when the
// client (the fake clientset) cannot stream lists, so it falls back to list and watch.
func podListWatch(client kubernetes.Interface, nodeName string) cache.ListerWatcher {
	selector := fields.OneTermEqualSelector(podHostField, nodeName).String()
	pods := client.CoreV1().Pods(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.FieldSelector = selector
			return pods.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = selector
			return pods.Watch(ctx, options)
		},
	}
	return cache.ToListWatcherWithWatchListSemantics(lw, client)
}

// Run waits until the node has synced, then keeps the core in step with the API server until ctx
// is done, and returns nil. The reflector's own goroutines have returned when Run does, except a
// paginated list that ctx already cancelled. Run may be called once.
func (r *APIRunner) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	logger.Info("Waiting for node sync before watching apiserver pods")
	if !r.waitForNodeSync(ctx) {
		return nil
	}
	logger.Info("Watching apiserver")
	// The reflector calls the store only from the goroutine running RunWithContext, this one:
	// it lists in a helper goroutine but applies the list here, after waiting for it.
	r.store.done = ctx.Done()
	r.reflector.RunWithContext(ctx)
	return nil
}

// waitForNodeSync polls NodeHasSynced at once and then every waitForAPIServerSyncPeriod, as the
// kubelet's PollUntilContextCancel does. It reports false if ctx ended first.
func (r *APIRunner) waitForNodeSync(ctx context.Context) bool {
	logger := klog.FromContext(ctx)
	if r.opts.NodeHasSynced() {
		logger.V(4).Info("Node sync completed")
		return true
	}
	ticker := r.opts.Clock.NewTicker(waitForAPIServerSyncPeriod)
	defer ticker.Stop()
	for {
		logger.V(4).Info("Node sync has not completed yet")
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C():
		}
		if r.opts.NodeHasSynced() {
			logger.V(4).Info("Node sync completed")
			return true
		}
	}
}

// LastSyncResourceVersion returns the resource version of the last list or watch event the
// reflector applied, or "" before the first list. The store sends each SET on Out before the
// reflector records the version, so once this returns v, every change up to v has been delivered.
// It is safe to call from any goroutine.
func (r *APIRunner) LastSyncResourceVersion() string {
	return r.reflector.LastSyncResourceVersion()
}

// apiStore adapts the core to the reflector's store: every call goes to the core, and the SET it
// returns is sent on out before the call returns, so SETs leave in the order of the changes.
//
// It has no lock: one goroutine, Run's, sets done and then makes every call through the
// reflector, so the core stays single-goroutine. LastSyncResourceVersion, the only method others
// call, reads the reflector's own locked state.
type apiStore struct {
	core *API
	out  chan<- podconfig.Update
	done <-chan struct{} // ctx.Done() of the Run in progress
	// intern, when set, makes the decoded pods share the strings they repeat before the core
	// keeps them. Nil for a node of a shared runner, whose router interns.
	intern *podintern.Table
}

var _ cache.ReflectorStore = (*apiStore)(nil)

// send delivers u unless the runner is stopping; a change lost at shutdown has nobody to see it.
func (s *apiStore) send(u podconfig.Update) {
	select {
	case s.out <- u:
	case <-s.done:
	}
}

func (s *apiStore) Add(obj any) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	s.internPod(pod)
	s.send(s.core.Add(pod))
	return nil
}

func (s *apiStore) Update(obj any) error {
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	s.internPod(pod)
	s.send(s.core.Update(pod))
	return nil
}

func (s *apiStore) Delete(obj any) error {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, err := asPod(obj)
	if err != nil {
		return err
	}
	s.send(s.core.Delete(pod))
	return nil
}

func (s *apiStore) Replace(objs []any, _ string) error {
	pods := make([]*v1.Pod, 0, len(objs))
	for _, obj := range objs {
		pod, err := asPod(obj)
		if err != nil {
			return err
		}
		s.internPod(pod)
		pods = append(pods, pod)
	}
	s.send(s.core.Replace(pods))
	return nil
}

// internPod interns pod's strings if the store interns. A deleted pod is not interned: the core
// forgets it.
func (s *apiStore) internPod(pod *v1.Pod) {
	if s.intern != nil {
		s.intern.Pod(pod)
	}
}

// Resync does nothing: the reflector runs with resync 0, and an UndeltaStore resync pushes nothing.
func (s *apiStore) Resync() error { return nil }

func asPod(obj any) (*v1.Pod, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod == nil {
		return nil, fmt.Errorf("api source: object of type %T is not a pod", obj)
	}
	return pod, nil
}
