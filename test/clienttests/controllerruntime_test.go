package clienttests

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestControllerRuntimeManager runs a controller-runtime manager against the fake API server as
// an operator would: it wins leader election on a Lease, starts a cached controller for Pods,
// and its reconciler reads pods from the cache and patches them.
func TestControllerRuntimeManager(t *testing.T) {
	srv, err := fakeapiserver.New(fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: trace.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	cfg := &rest.Config{Host: ts.URL}
	lease, renew, retry := 4*time.Second, 3*time.Second, 500*time.Millisecond
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		LeaderElection:          true,
		LeaderElectionID:        "clienttests-manager",
		LeaderElectionNamespace: "kube-system",
		LeaseDuration:           &lease,
		RenewDeadline:           &renew,
		RetryPeriod:             &retry,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
	})
	if err != nil {
		t.Fatalf("ctrl.NewManager() = %v", err)
	}
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).Complete(reconcile.Func(
		func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var pod corev1.Pod
			if err := c.Get(ctx, req.NamespacedName, &pod); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if pod.Annotations["clienttests/reconciled"] == "true" {
				return reconcile.Result{}, nil
			}
			patch := client.MergeFrom(pod.DeepCopy())
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations["clienttests/reconciled"] = "true"
			return reconcile.Result{}, c.Patch(ctx, &pod, patch)
		}))
	if err != nil {
		t.Fatalf("build the controller: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("mgr.Start() = %v", err)
		}
	}()

	cs := kubernetes.NewForConfigOrDie(cfg)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && p.Annotations["clienttests/reconciled"] == "true", nil
	}); err != nil {
		t.Fatalf("the reconciler never patched the pod: %v", err)
	}
	l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "clienttests-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("leader election lease: %v", err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		t.Errorf("the leader election lease has no holder: %+v", l.Spec)
	}
}
