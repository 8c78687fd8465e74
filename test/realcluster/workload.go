package realcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// PauseImage is the image of the workload's pods.
const PauseImage = "registry.k8s.io/pause:3.10.1"

// WorkloadOptions say what RunWorkload runs.
type WorkloadOptions struct {
	// Binaries must hold ControlPlaneBinaries.
	Binaries Binaries
	// Dir receives the control plane's and the simulator's files.
	Dir string
	// Nodes and PodsPerNode make the workload: a Deployment of Nodes × PodsPerNode pause pods.
	Nodes, PodsPerNode int
	// Steady is how long the harness keeps measuring once every pod is Running and Ready: the
	// heartbeat's requests per node and minute are counted in that window.
	Steady time.Duration
	// ClientQPS is ControlPlaneOptions.ClientQPS.
	ClientQPS int
	// Logf reports progress (testing.TB.Logf); nil reports nothing.
	Logf func(format string, args ...any)
}

// Result is one simulator's run of the workload.
type Result struct {
	Tool               string
	Nodes, Pods        int
	Start              time.Time // the simulator started
	DeployAt           time.Time // the Deployment was created
	SteadyFrom, End    time.Time // every pod Running and Ready; the end of the steady window
	Snapshot           Snapshot
	Usage              Usage
	Requests           []Request
	LoadBefore, LoadAt [3]float64
	// DroppedWatches is how many watches kube-apiserver closed because their client did not
	// read fast enough: any client's, the controllers' and the harness's too, since the log
	// does not name the user. On a machine with more runnable threads than CPUs, kube-apiserver
	// drops watches of clients that are merely not scheduled in time.
	DroppedWatches int
}

// droppedWatch is what kube-apiserver's watch cache logs (at -v=1) when it closes a watch whose
// client does not keep up: its buffer stayed full.
const droppedWatch = "watcher close due to unresponsiveness"

// countLines counts the lines of the file at path that contain s.
func countLines(path, s string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("count %q in %s: %w", s, path, err)
	}
	return bytes.Count(b, []byte(s)), nil
}

// NodesReady is the time from the simulator's start to every node Ready.
func (r *Result) NodesReady() time.Duration { return r.Snapshot.NodesReadyAt.Sub(r.Start) }

// PodsRunning is the time from the Deployment's creation to every pod Running.
func (r *Result) PodsRunning() time.Duration { return r.Snapshot.PodsRunningAt.Sub(r.DeployAt) }

// PodsReady is the time from the Deployment's creation to every pod Ready.
func (r *Result) PodsReady() time.Duration { return r.Snapshot.PodsReadyAt.Sub(r.DeployAt) }

// RunWorkload starts a control plane on a fresh etcd, the simulator with o.Nodes nodes, waits
// until every node is Ready, creates a Deployment of o.Nodes × o.PodsPerNode pause pods that the
// real scheduler places, waits until every pod is Running and Ready, keeps watching for
// o.Steady, then reads the simulator's CPU time and peak RSS, stops everything and reads the
// simulator's requests from the audit log.
func RunWorkload(ctx context.Context, sim Simulator, o WorkloadOptions) (res *Result, err error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	res = &Result{Tool: sim.Name(), Nodes: o.Nodes, Pods: o.Nodes * o.PodsPerNode}
	res.LoadBefore, _ = LoadAverage()
	cpDir, simDir := filepath.Join(o.Dir, "controlplane"), filepath.Join(o.Dir, "simulator")
	for _, d := range []string{cpDir, simDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	// At -v=1 kube-apiserver logs each watch it drops because its client does not keep up.
	cp, err := StartControlPlane(ctx, ControlPlaneOptions{Binaries: o.Binaries, Dir: cpDir, ClientQPS: o.ClientQPS,
		ExtraAPIServerArgs: []string{"--v=1"}})
	if err != nil {
		return nil, err
	}
	defer cp.Stop()
	defer sim.Stop()
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: %w%s%s", sim.Name(), err, sim.Tails(), cp.tails())
		}
	}()
	logf("%s: control plane at %s (files in %s)", sim.Name(), cp.URL, o.Dir)

	sel := labels.SelectorFromSet(labels.Set{"app": "pause"})
	w, err := Watch(ctx, cp.Admin, metav1.NamespaceDefault, sel)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	w.Expect(o.Nodes, 0)

	res.Start = time.Now()
	if err := sim.Start(ctx, cp, simDir, o.Nodes); err != nil {
		return nil, err
	}
	nodesTimeout := 5*time.Minute + time.Duration(o.Nodes)*2*time.Second
	if err := w.Wait(ctx, nodesTimeout, fmt.Sprintf("%d nodes Ready", o.Nodes),
		func(s Snapshot) bool { return !s.NodesReadyAt.IsZero() }, sim.Exited); err != nil {
		return nil, err
	}
	logf("%s: %d nodes Ready after %s", sim.Name(), o.Nodes, w.Snapshot().NodesReadyAt.Sub(res.Start).Round(time.Millisecond))

	res.DeployAt = time.Now()
	if err := CreatePauseDeployment(ctx, cp.Admin, "pause", int32(res.Pods)); err != nil {
		return nil, err
	}
	w.Expect(o.Nodes, res.Pods)
	podsTimeout := 10*time.Minute + time.Duration(res.Pods)*200*time.Millisecond
	if err := w.Wait(ctx, podsTimeout, fmt.Sprintf("%d pods Running and Ready", res.Pods),
		func(s Snapshot) bool { return !s.PodsRunningAt.IsZero() && !s.PodsReadyAt.IsZero() }, sim.Exited); err != nil {
		return nil, err
	}
	s := w.Snapshot()
	res.SteadyFrom = s.PodsRunningAt
	if s.PodsReadyAt.After(res.SteadyFrom) {
		res.SteadyFrom = s.PodsReadyAt
	}
	logf("%s: %d pods Running after %s, Ready after %s", sim.Name(), res.Pods,
		s.PodsRunningAt.Sub(res.DeployAt).Round(time.Millisecond), s.PodsReadyAt.Sub(res.DeployAt).Round(time.Millisecond))

	steady := time.NewTimer(o.Steady)
	select {
	case <-steady.C:
	case <-ctx.Done():
		steady.Stop()
		return nil, ctx.Err()
	}
	if err := sim.Exited(); err != nil {
		return nil, err
	}
	res.End = time.Now()
	if res.Usage, err = sim.Usage(); err != nil {
		return nil, err
	}
	res.LoadAt, _ = LoadAverage()
	res.Snapshot = w.Snapshot()

	sim.Stop()
	cp.Stop() // kube-apiserver writes the last audit events as it stops
	if res.Requests, err = ReadAuditLog(cp.AuditLog); err != nil {
		return nil, err
	}
	if len(res.Requests) == 0 {
		return nil, errors.New("the audit log holds no request of the simulator")
	}
	if res.DroppedWatches, err = countLines(cp.APIServer.LogPath, droppedWatch); err != nil {
		return nil, err
	}
	return res, nil
}

// CreatePauseDeployment creates a Deployment of replicas pause pods in the default namespace,
// labelled app=pause, with no resource requests: the scheduler spreads them over the nodes.
func CreatePauseDeployment(ctx context.Context, client kubernetes.Interface, name string, replicas int32) error {
	lbl := map[string]string{"app": "pause"}
	_, err := client.AppsV1().Deployments(metav1.NamespaceDefault).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: PauseImage}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create the Deployment %s: %w", name, err)
	}
	return nil
}
