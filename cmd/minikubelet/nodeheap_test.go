package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/sim/trace"
)

var (
	nodeHeapNodes       = flag.Int("node-heap-nodes", 100, "nodes BenchmarkNodeHeap starts")
	nodeHeapNoEvents    = flag.Bool("node-heap-no-events", false, "BenchmarkNodeHeap's nodes send no events (--send-events=false)")
	nodeHeapProfile     = flag.String("node-heap-profile", "", "write the heap profile BenchmarkNodeHeap's nodes leave, once settled, to this file (-test.memprofilerate 4096 for a fine one); a relative path is taken from -test.outputdir if given, else from the working directory, which go test makes the package's directory")
	nodeHeapPeakProfile = flag.String("node-heap-peak-profile", "", "write the heap profile, as of the last collection, near the largest resident set while BenchmarkNodeHeap's pods start, to this file (-test.memprofilerate 4096 for a fine one); a relative path is taken as -node-heap-profile's")
	nodeHeapTextTrace   = flag.Bool("node-heap-text-trace", false, "BenchmarkNodeHeap's nodes trace in the text form, run's default, instead of JSON Lines")
	nodeHeapPods        = flag.Int("node-heap-pods", 0, "pods BenchmarkNodeHeap binds to each node once it settled, shaped as a Deployment's (its heap is then measured once every pod is Ready)")
)

// BenchmarkNodeHeap measures what a node of `run --nodes N` costs the process before it has
// pods: the live heap and the goroutines of N registered nodes (the API client, the heartbeat
// client, the event broadcaster, the kubelet server and its handlers, the metrics registries,
// the plugin watcher, the volume manager, ...), divided by N. The API server is a `minikubelet
// apiserver` in a process of its own, as a real control plane would be, so that only the kubelet
// side counts (issue 26's memory).
func BenchmarkNodeHeap(b *testing.B) {
	n := *nodeHeapNodes
	profile, err := profilePath(*nodeHeapProfile)
	if err != nil {
		b.Fatalf("-node-heap-profile: %v", err)
	}
	peakProfile, err := profilePath(*nodeHeapPeakProfile)
	if err != nil {
		b.Fatalf("-node-heap-peak-profile: %v", err)
	}
	dir := b.TempDir()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	api, kubeconfig, err := startAPIServer(b, ctx, dir, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	// An API server that exits while the nodes run ends their waits with its exit, at once,
	// rather than at the deadline.
	ctx, stop := api.untilExit(ctx)
	defer stop()
	// Two nodes first: what the process builds once, on first use (schemes, the trace, the
	// shared pod watch's and the transport's first state), is not counted against the nodes.
	nodeHeap(b, ctx, kubeconfig, filepath.Join(dir, "warm"), "warm", 2, "", "")
	// Each iteration's nodes are named apart (sim0-*, sim1-*, ...) and their pods deleted once
	// measured: the API server outlives the iterations, and a later iteration reusing the names
	// would take over, and count, the earlier one's pods.
	iteration := 0
	for b.Loop() {
		m := nodeHeap(b, ctx, kubeconfig, filepath.Join(dir, fmt.Sprintf("root%d", iteration)), fmt.Sprintf("sim%d", iteration), n, profile, peakProfile)
		iteration++
		b.ReportMetric(m.heap/float64(n), "heap-B/node")
		b.ReportMetric(m.goroutines/float64(n), "goroutines/node")
		if m.pods > 0 {
			b.ReportMetric((m.heapPods-m.heap)/float64(m.pods), "heap-B/pod")
			// Everything the process allocated from the first pod's creation until every pod
			// was Ready: the nodes' garbage, and the benchmark's own creates and lists, the
			// same for every tree measured.
			b.ReportMetric(float64(m.last.allocs-m.rollout.allocs)/1e3/float64(m.pods), "alloc-KB/pod")
			reportMemPeak(b, m.first, m.peak, m.last)
			// The live heap of the process once the pods settled, beside the peak's: what the
			// collections near the peak found live beyond it was transient.
			b.ReportMetric(m.settled/1e6, "settled-heap-live-MB")
			b.Logf("at the start: %v", m.first)
			b.Logf("at the peak:  %v", m.peak)
			b.Logf("pods Ready:   %v", m.last)
		}
	}
}

// nodeHeapResult is what nodeHeap measured: the live heap and goroutines the nodes added before
// they had pods, and, with -node-heap-pods, the live heap once pods ran on them all and the
// process's memory split (runtime/metrics) before the nodes started, at the largest resident
// set until every pod was Ready, and then.
type nodeHeapResult struct {
	heap, goroutines  float64
	pods              int
	heapPods          float64
	settled           float64 // the whole live heap once every pod was Ready
	first, peak, last memSplit
	rollout           memSplit // as the first pod is created
}

// nodeHeap runs n nodes named prefix-i against the API server of kubeconfig until every one
// registered and took its first (empty) set of pods from the API, and returns the live heap and
// goroutines they added to the process. With a profile path it writes the heap profile there
// once they settled (and their pods, if any, are Ready); with a peak profile path, the profiles
// near the largest resident set while the pods start.
func nodeHeap(b *testing.B, ctx context.Context, kubeconfig, rootDir, prefix string, n int, profile, peakProfile string) (res nodeHeapResult) {
	b.Helper()
	before, gBefore := liveHeap(), runtime.NumGoroutine()
	var sampler *memPeak
	if *nodeHeapPods > 0 && prefix != "warm" {
		// The resident set peaks while the pods start; sampled from before the nodes start,
		// so that a peak of their start counts too.
		sampler = startMemPeak(20*time.Millisecond, peakProfile)
		defer sampler.stop() // on a failure before the pods ran
	}
	cfg := testConfig("", false)
	cfg.Kubelet.Sources.StaticPodPath = ""
	cfg.Nodes, cfg.NodeNamePrefix = n, prefix
	cfg.KubeletAddr = "127.0.0.1:0"
	cfg.Kubeconfig = kubeconfig
	cfg.RootDir = rootDir
	cfg.NoEventClient = *nodeHeapNoEvents
	log := newTraceLog()
	if *nodeHeapTextTrace {
		cfg.TraceFormat, cfg.TraceView.Format = trace.Text, trace.Text
		log = newTextTraceLog()
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	// Once the nodes settled, the trace the benchmark keeps stops growing: what the pods cost is
	// the nodes', not the test's copy of every event they trace.
	out := &muteWriter{w: log}
	go func() {
		err := run(runCtx, cfg, out)
		log.end(err)
		done <- err
	}()
	// A node is settled once it registered and its sync loop took the api source's first set.
	registered, synced := map[string]bool{}, map[string]bool{}
	from := 0
	for len(registered) < n || len(synced) < n {
		i, e, err := log.waitFor(ctx, from, "node registration and first sync", func(e traceEvent) bool {
			return e.Component == "node" && e.Event == "register" || e.Component == "syncloop" && e.Event == "config"
		})
		if err != nil {
			stop()
			fatalWithCause(b, ctx, err)
		}
		if e.Component == "node" {
			registered[e.Pod] = true
		} else {
			synced[e.Node] = true
		}
		from = i + 1
	}
	res.heap, res.goroutines = float64(liveHeap()-before), float64(runtime.NumGoroutine()-gBefore)
	if *nodeHeapPods > 0 && prefix != "warm" {
		out.mute.Store(true)
		nodes := slices.Sorted(maps.Keys(registered))
		res.rollout = readMemSplit(newMemSplitSamples())
		err := runDeploymentPods(ctx, kubeconfig, nodes, *nodeHeapPods)
		res.first, res.peak, res.last = sampler.stop()
		err = errors.Join(err, sampler.err)
		if err != nil {
			stop()
			fatalWithCause(b, ctx, err)
		}
		res.pods = len(nodes) * *nodeHeapPods
		settled := liveHeap()
		res.heapPods, res.settled = float64(settled-before), float64(settled)
	}
	if profile != "" {
		if err := writeHeapProfile(profile); err != nil {
			stop()
			b.Fatal(err)
		}
		// Said in the benchmark's output: under go test a relative path is the package's
		// directory's, not the one go test ran in.
		b.Logf("the settled heap profile is in %s", profile)
	}
	stop()
	if err := <-done; err != nil {
		fatalWithCause(b, ctx, err)
	}
	if res.pods > 0 {
		if err := deleteDeploymentPods(ctx, kubeconfig); err != nil {
			fatalWithCause(b, ctx, err)
		}
	}
	return res
}

// fatalWithCause fails b with err, and with why ctx ended when it did for a reason of its own,
// such as the API server's exit (process.untilExit): err itself says only "context canceled".
func fatalWithCause(b *testing.B, ctx context.Context, err error) {
	b.Helper()
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		b.Fatalf("%v\n(%v)", err, cause)
	}
	b.Fatal(err)
}

// deleteDeploymentPods removes, at once (a grace of 0), every pod runDeploymentPods created
// through the API server of kubeconfig, so that the next nodes' list of pods starts empty.
func deleteDeploymentPods(ctx context.Context, kubeconfig string) error {
	client, err := benchClient(kubeconfig)
	if err != nil {
		return err
	}
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete the benchmark's pods: %w", err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(list.Items) > 0 {
		return fmt.Errorf("%d of the benchmark's pods left after their deletion", len(list.Items))
	}
	return nil
}

// benchClient is a client of the API server of kubeconfig without a client-side rate limit: the
// benchmark's own requests are not measured.
func benchClient(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0
	return kubernetes.NewForConfig(cfg)
}

// runDeploymentPods creates perNode pods on each of nodes through the API server of kubeconfig,
// shaped as the pods a Deployment's ReplicaSet controller creates (the labels with the template's
// hash, the owner reference, the controller manager's managed fields; the scheduler's binding
// stands in spec.nodeName), and waits until every one is Ready, its last status write done.
func runDeploymentPods(ctx context.Context, kubeconfig string, nodes []string, perNode int) error {
	client, err := benchClient(kubeconfig)
	if err != nil {
		return err
	}
	const hash = "5d8f7c6b9d"
	labels := map[string]string{"app": "pause", "pod-template-hash": hash}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "pause-" + hash,
		UID: "6f1c2b8e-3a4d-4e5f-9a0b-1c2d3e4f5a6b", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	work := make(chan string)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for node := range work {
				pod := &v1.Pod{
					ObjectMeta: metav1.ObjectMeta{GenerateName: owner.Name + "-", Namespace: metav1.NamespaceDefault,
						Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
					Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.1",
						TerminationMessagePath: v1.TerminationMessagePathDefault, TerminationMessagePolicy: v1.TerminationMessageReadFile,
						ImagePullPolicy: v1.PullIfNotPresent}},
						RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](30),
						DNSPolicy: v1.DNSClusterFirst, SecurityContext: &v1.PodSecurityContext{}, SchedulerName: v1.DefaultSchedulerName},
				}
				if _, err := client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, metav1.CreateOptions{FieldManager: "kube-controller-manager"}); err != nil {
					select {
					case errs <- fmt.Errorf("create a pod on %s: %w", node, err):
					default:
					}
				}
			}
		})
	}
	for range perNode {
		for _, node := range nodes {
			work <- node
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	want := len(nodes) * perNode
	for {
		// Only this call's nodes' pods count: names of nodes no other call uses, and an exact
		// count, keep another's pods out. The list is read in pages: the benchmark runs in the
		// nodes' process, and a list of every pod at once would be a peak of its own in the
		// resident set it measures.
		ready, bound := 0, 0
		opts := metav1.ListOptions{Limit: 100}
		for {
			list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, opts)
			if err != nil {
				return err
			}
			for i := range list.Items {
				if !slices.Contains(nodes, list.Items[i].Spec.NodeName) {
					continue
				}
				bound++
				for _, c := range list.Items[i].Status.Conditions {
					if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
						ready++
					}
				}
			}
			if opts.Continue = list.Continue; opts.Continue == "" {
				break
			}
		}
		if bound != want {
			return fmt.Errorf("%d pods bound to the benchmark's nodes, want %d", bound, want)
		}
		if ready == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d pods Ready: %w", ready, want, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// muteWriter writes to w until mute is set, and then discards.
type muteWriter struct {
	w    io.Writer
	mute atomic.Bool
}

func (m *muteWriter) Write(p []byte) (int, error) {
	if m.mute.Load() {
		return len(p), nil
	}
	return m.w.Write(p)
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// writeHeapProfile writes the heap profile, as of the last collection, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write the heap profile: %w", err)
	}
	if err := errors.Join(pprof.Lookup("heap").WriteTo(f, 0), f.Close()); err != nil {
		return fmt.Errorf("write the heap profile to %s: %w", path, err)
	}
	return nil
}

// profilePath is the absolute path a profile flag's value names ("" for none), checked before the
// benchmark runs for minutes: its directory must exist. A relative path is taken from
// -test.outputdir, which go test passes only with its own profile flags or -artifacts (the
// directory it was run in) or an explicit -outputdir, and otherwise from the working directory:
// under go test that is the package's directory, so `go test ./cmd/minikubelet
// -node-heap-profile heap.pprof` writes cmd/minikubelet/heap.pprof.
func profilePath(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	outputDir := ""
	if f := flag.Lookup("test.outputdir"); f != nil {
		outputDir = f.Value.String()
	}
	path, err := resolveProfilePath(name, outputDir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("the directory of %s: %w", path, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("the directory of %s is not a directory", path)
	}
	return path, nil
}

// resolveProfilePath makes name absolute: from outputDir when it is given, else from the working
// directory.
func resolveProfilePath(name, outputDir string) (string, error) {
	if !filepath.IsAbs(name) && outputDir != "" {
		name = filepath.Join(outputDir, name)
	}
	path, err := filepath.Abs(name)
	if err != nil {
		return "", fmt.Errorf("the path of %s: %w", name, err)
	}
	return path, nil
}
